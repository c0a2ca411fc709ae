package tlsrpt_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-message"
)

// A mailto: rua gets the message of RFC 8460 §5.3, handed to the mailer
// from --tls-rpt-from: multipart/report with report-type tlsrpt, a text
// part, and the gzipped report as an application/tlsrpt+gzip attachment
// named as §5.1 says; Subject, TLS-Report-Domain and TLS-Report-Submitter
// name the domain and the submitter.
func TestMailtoReportIsAnRFC8460Message(t *testing.T) {
	w := newWorld(t)
	w.dns.SetTXT("_smtp._tls.example.com", "v=TLSRPTv1; rua=mailto:tlsrpt@example.com,mailto:copy%2Bx@example.net")
	c := w.collector(w.store, 24*time.Hour)
	c.ObserveTLS(success("example.com", day0.Add(time.Hour)))
	c.ObserveTLS(mismatch("example.com", day0.Add(time.Hour)))
	flush(t, c)
	w.clock.Set(day0.Add(25 * time.Hour))
	reportDue(t, w.reporter())

	sent := w.mailer.all()
	if len(sent) != 1 {
		t.Fatalf("%d messages handed to the mailer, want 1", len(sent))
	}
	m := sent[0]
	if m.from != "tls-reports@mailroom.example" || strings.Join(m.to, ",") != "tlsrpt@example.com,copy+x@example.net" {
		t.Errorf("envelope from %q to %q", m.from, m.to)
	}
	e, err := message.Read(bytes.NewReader(m.raw))
	if err != nil {
		t.Fatalf("the message does not parse: %v\n%s", err, m.raw)
	}
	h := e.Header
	if got := h.Get("From"); got != "tls-reports@mailroom.example" {
		t.Errorf("From %q", got)
	}
	subject := h.Get("Subject")
	if !strings.HasPrefix(subject, "Report Domain: example.com Submitter: mailroom.example Report-ID: <") {
		t.Errorf("Subject %q, want RFC 8460 §5.3's", subject)
	}
	if h.Get("TLS-Report-Domain") != "example.com" || h.Get("TLS-Report-Submitter") != "mailroom.example" {
		t.Errorf("TLS-Report-Domain %q, TLS-Report-Submitter %q", h.Get("TLS-Report-Domain"), h.Get("TLS-Report-Submitter"))
	}
	mt, params, err := h.ContentType()
	if err != nil || mt != "multipart/report" || params["report-type"] != "tlsrpt" {
		t.Fatalf("Content-Type %s %v (%v), want multipart/report; report-type=tlsrpt", mt, params, err)
	}
	if id := h.Get("Message-ID"); !strings.Contains(subject, id) {
		t.Errorf("Message-ID %q is not the subject's report id", id)
	}
	mr := e.MultipartReader()
	var types []string
	var report []byte
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pt, _, _ := p.Header.ContentType()
		types = append(types, pt)
		if pt == "application/tlsrpt+gzip" {
			_, dp, _ := p.Header.ContentDisposition()
			start, end := day0.Unix(), day0.Add(24*time.Hour-time.Second).Unix()
			if want := "mailroom.example!example.com!" + strconv.FormatInt(start, 10) + "!" + strconv.FormatInt(end, 10) + ".json.gz"; dp["filename"] != want {
				t.Errorf("attachment filename %q, want %q (RFC 8460 §5.1)", dp["filename"], want)
			}
			z, err := gzip.NewReader(p.Body) // go-message undid the base64
			if err != nil {
				t.Fatalf("attachment is not gzip: %v", err)
			}
			report, _ = io.ReadAll(z)
		}
	}
	if strings.Join(types, ",") != "text/plain,application/tlsrpt+gzip" {
		t.Errorf("parts %v, want text/plain then application/tlsrpt+gzip", types)
	}
	if err := validate(report); err != nil {
		t.Fatalf("the mailed report does not match the schema: %v\n%s", err, report)
	}
	if rep := decodeReport(t, report); rep.Policies[0].Summary.TotalFailureSessionCount != 1 {
		t.Errorf("mailed report %+v", rep)
	}
}
