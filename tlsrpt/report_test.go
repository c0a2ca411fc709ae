package tlsrpt_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// A day's sessions to a domain that publishes an https rua arrive, once
// the day has ended, as one gzipped JSON report posted with the RFC's
// content type, which the RFC's schema accepts and whose counts and
// details are the sessions'.
func TestReportPostedOverHTTPSMatchesRFCSchema(t *testing.T) {
	w := newWorld(t)
	w.dns.SetTXT("_smtp._tls.example.com", "v=TLSRPTv1; rua="+w.rua)
	c := w.collector(w.store, 24*time.Hour)
	at := day0.Add(10 * time.Hour)
	c.ObserveTLS(success("example.com", at))
	c.ObserveTLS(success("Example.COM.", at.Add(time.Hour)))
	c.ObserveTLS(mismatch("example.com", at))
	c.ObserveTLS(mailroom.TLSSessionResult{Domain: "example.com", Policy: mailroom.TLSPolicyOpportunistic, MX: "mx1.example.com",
		SendingIP: "192.0.2.1", ReceivingIP: "198.51.100.7", Outcome: mailroom.TLSPlaintext, At: at})
	flush(t, c)

	r := w.reporter()
	if n := reportDue(t, r); n != 0 || len(w.received()) != 0 {
		t.Fatalf("a report went before its day ended: %d handled, %d posted", n, len(w.received()))
	}
	w.clock.Set(day0.Add(24*time.Hour + time.Minute))
	if n := reportDue(t, r); n != 1 {
		t.Fatalf("handled %d reports, want 1", n)
	}
	posts := w.received()
	if len(posts) != 1 {
		t.Fatalf("received %d posts, want 1", len(posts))
	}
	if posts[0].contentType != "application/tlsrpt+gzip" {
		t.Errorf("Content-Type %q, want application/tlsrpt+gzip (RFC 8460 §5.4)", posts[0].contentType)
	}
	if err := validate(posts[0].body); err != nil {
		t.Fatalf("the report does not match RFC 8460's schema: %v\n%s", err, posts[0].body)
	}
	rep := decodeReport(t, posts[0].body)
	if !rep.DateRange.Start.Equal(day0) || !rep.DateRange.End.Equal(day0.Add(24*time.Hour-time.Second)) {
		t.Errorf("date-range %v – %v, want the UTC day %v", rep.DateRange.Start, rep.DateRange.End, day0)
	}
	if rep.OrganizationName != "mailroom.example" || rep.ContactInfo != "tls-reports@mailroom.example" || rep.ReportID == "" {
		t.Errorf("organization %q, contact %q, id %q", rep.OrganizationName, rep.ContactInfo, rep.ReportID)
	}
	if len(rep.Policies) != 2 {
		t.Fatalf("got %d policies, want sts and no-policy-found: %+v", len(rep.Policies), rep.Policies)
	}
	for _, p := range rep.Policies {
		if p.Policy.PolicyDomain != "example.com" {
			t.Errorf("policy-domain %q", p.Policy.PolicyDomain)
		}
		switch p.Policy.PolicyType {
		case "sts":
			if got := strings.Join(p.Policy.PolicyString, "|"); got != "version: STSv1|mode: enforce|mx: mx1.example.com|mx: *.backup.example.com|max_age: 86400" {
				t.Errorf("policy-string %q, want the policy's lines", got)
			}
			if got := strings.Join(p.Policy.MXHost, "|"); got != "mx1.example.com|*.backup.example.com" {
				t.Errorf("mx-host %q", got)
			}
			if p.Summary.TotalSuccessfulSessionCount != 2 || p.Summary.TotalFailureSessionCount != 1 {
				t.Errorf("sts summary %+v, want 2 successes and 1 failure", p.Summary)
			}
			if len(p.FailureDetails) != 1 {
				t.Fatalf("sts failure-details %+v, want one", p.FailureDetails)
			}
			d := p.FailureDetails[0]
			if d.ResultType != "certificate-host-mismatch" || d.SendingMTAIP != "192.0.2.1" || d.ReceivingMXHostname != "mx1.example.com" ||
				d.ReceivingIP != "198.51.100.7" || d.FailedSessionCount != 1 || !strings.Contains(d.FailureReasonCode, "other.example") {
				t.Errorf("failure detail %+v", d)
			}
		case "no-policy-found":
			if p.Summary.TotalSuccessfulSessionCount != 1 || len(p.Policy.PolicyString) != 0 {
				t.Errorf("no-policy-found %+v", p)
			}
		default:
			t.Errorf("policy-type %q", p.Policy.PolicyType)
		}
	}
	// The window is finished: no second report.
	w.clock.Set(day0.Add(48 * time.Hour))
	if n := reportDue(t, r); n != 0 || len(w.received()) != 1 {
		t.Errorf("a finished report went again: %d handled, %d posts", n, len(w.received()))
	}
}

// The schema is not a formality: a report missing a required member, with
// an unknown result type or a date that is not RFC 3339 fails it.
func TestSchemaRefusesReportsOutsideTheRFC(t *testing.T) {
	good := `{"organization-name":"o","date-range":{"start-datetime":"2026-11-22T00:00:00Z","end-datetime":"2026-11-22T23:59:59Z"},` +
		`"contact-info":"a@b.example","report-id":"1","policies":[{"policy":{"policy-type":"sts","policy-string":["version: STSv1"],` +
		`"policy-domain":"example.com","mx-host":["mx.example.com"]},"summary":{"total-successful-session-count":1,"total-failure-session-count":1},` +
		`"failure-details":[{"result-type":"certificate-expired","sending-mta-ip":"192.0.2.1","failed-session-count":1}]}]}`
	if err := validate([]byte(good)); err != nil {
		t.Fatalf("a report as RFC 8460 §4.4 shows fails the schema: %v", err)
	}
	for name, bad := range map[string]string{
		"no organization-name": strings.Replace(good, `"organization-name":"o",`, "", 1),
		"unknown result-type":  strings.Replace(good, "certificate-expired", "certificate-old", 1),
		"date not RFC 3339":    strings.Replace(good, "2026-11-22T00:00:00Z", "2026-11-22 00:00", 1),
		"sending-mta-ip no IP": strings.Replace(good, "192.0.2.1", "mta.example", 1),
		"count a string":       strings.Replace(good, `"total-failure-session-count":1`, `"total-failure-session-count":"1"`, 1),
		"sts without mx-host":  strings.Replace(good, `,"mx-host":["mx.example.com"]`, "", 1),
		"misspelled member":    strings.Replace(good, "failed-session-count", "failed-sessions-count", 1),
	} {
		if err := validate([]byte(bad)); err == nil {
			t.Errorf("%s: the schema accepted %s", name, bad)
		}
	}
}

// Sessions fall in the window of their time: at 24h, UTC days; at another
// interval, windows of it aligned to the Unix epoch.
func TestWindowBoundaries(t *testing.T) {
	w := newWorld(t)
	w.dns.SetTXT("_smtp._tls.example.com", "v=TLSRPTv1;rua="+w.rua)
	c := w.collector(w.store, 24*time.Hour)
	c.ObserveTLS(success("example.com", day0.Add(-time.Nanosecond))) // the day before
	c.ObserveTLS(success("example.com", day0))
	c.ObserveTLS(success("example.com", day0.Add(24*time.Hour-time.Nanosecond)))
	flush(t, c)
	w.clock.Set(day0.Add(24*time.Hour + time.Minute))
	if n := reportDue(t, w.reporter()); n != 2 {
		t.Fatalf("handled %d reports, want 2 (the day before, and the day)", n)
	}
	counts := map[time.Time]int64{}
	for _, p := range w.received() {
		rep := decodeReport(t, p.body)
		counts[rep.DateRange.Start] = rep.Policies[0].Summary.TotalSuccessfulSessionCount
	}
	if counts[day0.Add(-24*time.Hour)] != 1 || counts[day0] != 2 {
		t.Errorf("sessions by day %v, want 1 the day before and 2 on %v", counts, day0)
	}

	// Minute windows: 10:00:59.999 and 10:01:00 are apart.
	w2 := newWorld(t)
	w2.dns.SetTXT("_smtp._tls.example.com", "v=TLSRPTv1;rua="+w2.rua)
	m := w2.collector(w2.store, time.Minute)
	t1 := day0.Add(10 * time.Hour)
	m.ObserveTLS(success("example.com", t1.Add(59*time.Second+999*time.Millisecond)))
	m.ObserveTLS(success("example.com", t1.Add(time.Minute)))
	flush(t, m)
	w2.clock.Set(t1.Add(2*time.Minute + 30*time.Second))
	if n := reportDue(t, w2.reporter()); n != 2 {
		t.Fatalf("handled %d minute reports, want 2", n)
	}
	for _, p := range w2.received() {
		rep := decodeReport(t, p.body)
		if s := rep.DateRange.Start; !s.Equal(t1) && !s.Equal(t1.Add(time.Minute)) || rep.DateRange.End.Sub(rep.DateRange.Start) != 59*time.Second {
			t.Errorf("minute window %v – %v", rep.DateRange.Start, rep.DateRange.End)
		}
	}
}

// Two nodes' collectors over one store: the report counts both.
func TestTwoCollectorsAddUp(t *testing.T) {
	w := newWorld(t)
	w.dns.SetTXT("_smtp._tls.example.com", "v=TLSRPTv1; rua="+w.rua)
	a, b := w.collector(w.store, 24*time.Hour), w.collector(w.store, 24*time.Hour)
	at := day0.Add(time.Hour)
	for range 3 {
		a.ObserveTLS(success("example.com", at))
	}
	a.ObserveTLS(mismatch("example.com", at))
	b.ObserveTLS(success("example.com", at))
	b.ObserveTLS(mismatch("example.com", at))
	b.ObserveTLS(mismatch("example.com", at))
	flush(t, a)
	flush(t, b)
	w.clock.Set(day0.Add(25 * time.Hour))
	reportDue(t, w.reporter())
	posts := w.received()
	if len(posts) != 1 {
		t.Fatalf("%d posts, want 1", len(posts))
	}
	p := decodeReport(t, posts[0].body).Policies[0]
	if p.Summary.TotalSuccessfulSessionCount != 4 || p.Summary.TotalFailureSessionCount != 3 ||
		len(p.FailureDetails) != 1 || p.FailureDetails[0].FailedSessionCount != 3 {
		t.Errorf("report %+v, want 4 successes and 3 failures in one detail (both nodes')", p)
	}
}

// Two nodes' reporters at once: each domain's report is sent exactly once.
func TestOneReporterSendsEachReport(t *testing.T) {
	w := newWorld(t)
	c := w.collector(w.store, 24*time.Hour)
	domains := []string{"a.example", "b.example", "c.example", "d.example", "e.example"}
	for _, d := range domains {
		w.dns.SetTXT("_smtp._tls."+d, "v=TLSRPTv1; rua="+w.rua)
		c.ObserveTLS(success(d, day0.Add(time.Hour)))
	}
	flush(t, c)
	w.clock.Set(day0.Add(25 * time.Hour))
	a, b := w.reporter(), w.reporter()
	var wg sync.WaitGroup
	for _, r := range []interface {
		ReportDue(context.Context) (int, error)
	}{a, b} {
		wg.Go(func() {
			if _, err := r.ReportDue(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, p := range w.received() {
		seen[decodeReport(t, p.body).Policies[0].Policy.PolicyDomain]++
	}
	for _, d := range domains {
		if seen[d] != 1 {
			t.Errorf("%s's report was sent %d times, want once", d, seen[d])
		}
	}
}
