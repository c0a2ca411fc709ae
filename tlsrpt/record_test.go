package tlsrpt_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/tlsrpt"
)

// RFC 8460 §3's grammar, strictly.
func TestParseRecord(t *testing.T) {
	for _, tc := range []struct {
		txt    string
		https  string
		mailto string
		ok     bool
	}{
		{"v=TLSRPTv1; rua=https://r.example/tls", "https://r.example/tls", "", true},
		{"v=TLSRPTv1;rua=mailto:a@r.example", "", "a@r.example", true},
		{"v=TLSRPTv1 ; rua=mailto:a@r.example , https://r.example/x;", "https://r.example/x", "a@r.example", true},
		{"v=TLSRPTv1; rua=mailto:a@r.example; ext_1=v", "", "a@r.example", true},
		{"v=TLSRPTv1; rua=mailto:a@r.example; rua=https://r.example/", "https://r.example/", "a@r.example", true},
		{"v=TLSRPTv1; rua=ftp://r.example/x, mailto:a@r.example", "", "a@r.example", true},
		{"v=tlsrptv1; rua=mailto:a@r.example", "", "", false},  // the version is case-sensitive
		{" v=TLSRPTv1; rua=mailto:a@r.example", "", "", false}, // nothing before the version
		{"v=TLSRPTv1", "", "", false},                            // no field
		{"v=TLSRPTv1;", "", "", false},                           // no field
		{"v=TLSRPTv1; ext=v", "", "", false},                     // no rua
		{"v=TLSRPTv1; rua=", "", "", false},                      // empty URI
		{"v=TLSRPTv1; rua=mailto:not an address", "", "", false}, // not an address
		{"v=TLSRPTv1;; rua=mailto:a@r.example", "", "", false},   // empty field
		{"v=TLSRPTv1; rua=mailto:a@r.example; bad field", "", "", false},
		{"v=TLSRPTv1; rua=ftp://r.example/x", "", "", false}, // no destination Mailroom can use
		{"v=TLSRPTv2; rua=mailto:a@r.example", "", "", false},
	} {
		d, err := tlsrpt.ParseRecord(tc.txt)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok %v", tc.txt, err, tc.ok)
			continue
		}
		if got := strings.Join(d.HTTPS, " "); got != tc.https {
			t.Errorf("%q: https %q, want %q", tc.txt, got, tc.https)
		}
		if got := strings.Join(d.Mailto, " "); got != tc.mailto {
			t.Errorf("%q: mailto %q, want %q", tc.txt, got, tc.mailto)
		}
	}
}

// A domain with no record, an invalid one or two of them gets no report
// (RFC 8460 §3), and its window is finished, not tried again; the domain
// with a valid record beside them gets its report.
func TestNoValidRecordNoReport(t *testing.T) {
	w := newWorld(t)
	c := w.collector(w.store, 24*time.Hour)
	w.dns.SetTXT("_smtp._tls.invalid.example", "v=TLSRPTv1; rua=mailto:not an address")
	w.dns.SetTXT("_smtp._tls.two.example", "v=TLSRPTv1; rua="+w.rua, "v=TLSRPTv1; rua="+w.rua+"/2")
	w.dns.SetTXT("_smtp._tls.other.example", "v=spf1 -all")
	w.dns.SetTXT("_smtp._tls.good.example", "v=spf1 -all", "v=TLSRPTv1; rua="+w.rua)
	for _, d := range []string{"none.example", "invalid.example", "two.example", "other.example", "good.example"} {
		c.ObserveTLS(success(d, day0.Add(time.Hour)))
	}
	flush(t, c)
	w.clock.Set(day0.Add(25 * time.Hour))
	r := w.reporter()
	if n := reportDue(t, r); n != 5 {
		t.Errorf("handled %d windows, want all 5 (4 without a report)", n)
	}
	posts := w.received()
	if len(posts) != 1 || decodeReport(t, posts[0].body).Policies[0].Policy.PolicyDomain != "good.example" {
		t.Fatalf("%d posts, want good.example's alone", len(posts))
	}
	w.clock.Set(day0.Add(26 * time.Hour))
	if n := reportDue(t, r); n != 0 {
		t.Errorf("%d windows handled again", n)
	}
}

// The https destination goes through the SSRF guard: without
// AllowPrivate, a rua on loopback gets nothing, and the report stays due
// (tried again when the lease runs out).
func TestHTTPSReportGuarded(t *testing.T) {
	w := newWorld(t)
	w.dns.SetTXT("_smtp._tls.example.com", "v=TLSRPTv1; rua="+w.rua)
	c := w.collector(w.store, 24*time.Hour)
	c.ObserveTLS(success("example.com", day0.Add(time.Hour)))
	flush(t, c)
	w.clock.Set(day0.Add(25 * time.Hour))
	r := w.reporter()
	r.AllowPrivate = false
	r.HTTP = tlsrpt.NewHTTPClient(w.resolver, w.ca.Pool(), false)
	if n := reportDue(t, r); n != 0 || len(w.received()) != 0 {
		t.Fatalf("a report reached a loopback rua past the guard: %d handled, %d posts", n, len(w.received()))
	}
	// The same report, allowed, once the lease has run out.
	w.clock.Set(day0.Add(26 * time.Hour))
	if n := reportDue(t, w.reporter()); n != 1 || len(w.received()) != 1 {
		t.Errorf("after the lease, %d handled, %d posts; want the report sent", n, len(w.received()))
	}
}
