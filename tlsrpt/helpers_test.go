package tlsrpt_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/tlscert/tlstest"
	"github.com/mailroom/mailroom/tlsrpt"
)

// clock is a settable time, for windows and leases.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// day0 is a UTC midnight: the start of a default (24h) window.
var day0 = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// world is one store, a DNS server, an HTTPS report receiver on loopback
// with a certificate of the test CA, and a recording mailer.
type world struct {
	store    mailroom.TLSReportStore
	dns      *dnstest.Server
	resolver *dns.Resolver
	clock    *clock
	ca       *tlstest.CA
	// posts are the report bodies the HTTPS receiver was sent, gunzipped.
	mu     sync.Mutex
	posts  []receivedPost
	mailer *recordingMailer
	rua    string
}

type receivedPost struct {
	contentType string
	body        []byte
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{store: storetest.SQLite.Open(t), dns: dnstest.Start(t), clock: &clock{t: day0.Add(10 * time.Hour)},
		ca: tlstest.NewCA(t), mailer: &recordingMailer{}}
	w.resolver = &dns.Resolver{Server: w.dns.Addr()}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		z, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(rw, "not gzip", http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(z)
		if err != nil {
			http.Error(rw, "bad gzip", http.StatusBadRequest)
			return
		}
		w.mu.Lock()
		w.posts = append(w.posts, receivedPost{r.Header.Get("Content-Type"), body})
		w.mu.Unlock()
		rw.WriteHeader(http.StatusCreated)
	}))
	srv.TLS = tlstest.ServerConfig(w.ca.Issue(t, "reports.example"))
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	w.dns.SetA("reports.example", "127.0.0.1")
	w.rua = "https://reports.example:" + port + "/v1/tlsrpt"
	return w
}

func (w *world) received() []receivedPost {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]receivedPost(nil), w.posts...)
}

func (w *world) collector(store mailroom.TLSReportStore, interval time.Duration) *tlsrpt.Collector {
	return tlsrpt.NewCollector(tlsrpt.Options{Store: store, Interval: interval, Now: w.clock.Now, Log: quiet})
}

// reporter is a node's reporter, allowed to post to loopback (as
// webhook tests allow it) and trusting the test CA.
func (w *world) reporter() *tlsrpt.Reporter {
	return &tlsrpt.Reporter{Store: w.store, Resolver: w.resolver, Mailer: w.mailer,
		HTTP: tlsrpt.NewHTTPClient(w.resolver, w.ca.Pool(), true), AllowPrivate: true,
		From: "tls-reports@mailroom.example", Now: w.clock.Now, Log: quiet}
}

// reportDue runs a reporter once and fails the test on a store error.
func reportDue(t *testing.T, r *tlsrpt.Reporter) int {
	t.Helper()
	n, err := r.ReportDue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func flush(t *testing.T, c *tlsrpt.Collector) {
	t.Helper()
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// recordingMailer keeps what it was asked to send.
type recordingMailer struct {
	mu   sync.Mutex
	sent []sentMail
}

type sentMail struct {
	from string
	to   []string
	raw  []byte
}

func (m *recordingMailer) SendReport(_ context.Context, from string, to []string, raw []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = append(m.sent, sentMail{from, to, raw})
	return nil
}

func (m *recordingMailer) all() []sentMail {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]sentMail(nil), m.sent...)
}

var enforce = &mailroom.MTASTSPolicy{Domain: "example.com", ID: "20261122", Mode: mailroom.MTASTSEnforce,
	MX: []string{"mx1.example.com", "*.backup.example.com"}, MaxAge: 86400 * time.Second,
	Text: "version: STSv1\r\nmode: enforce\r\nmx: mx1.example.com\r\nmx: *.backup.example.com\r\nmax_age: 86400\r\n"}

func success(domain string, at time.Time) mailroom.TLSSessionResult {
	return mailroom.TLSSessionResult{Domain: domain, Policy: mailroom.TLSPolicyMTASTS, STS: enforce, MX: "mx1.example.com",
		ReceivingIP: "198.51.100.7", SendingIP: "192.0.2.1", Outcome: mailroom.TLSVerified, At: at}
}

func mismatch(domain string, at time.Time) mailroom.TLSSessionResult {
	return mailroom.TLSSessionResult{Domain: domain, Policy: mailroom.TLSPolicyMTASTS, STS: enforce, MX: "mx1.example.com.",
		ReceivingIP: "198.51.100.7", SendingIP: "192.0.2.1", Outcome: mailroom.TLSRefused,
		Failure: mailroom.TLSFailCertificateHostMismatch, Detail: "x509: certificate is valid for other.example, not mx1.example.com", At: at}
}

// decodeReport parses a report strictly: unknown members fail.
func decodeReport(t *testing.T, body []byte) tlsrpt.Report {
	t.Helper()
	var r tlsrpt.Report
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("report does not decode: %v\n%s", err, body)
	}
	return r
}

// validate holds a report to testdata/report.schema.json, written from
// RFC 8460 §4.3 and §4.4, with formats asserted (date-time, hostname, IP
// addresses).
func validate(body []byte) error {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	f, err := os.Open("testdata/report.schema.json")
	if err != nil {
		return err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return err
	}
	if err := c.AddResource("report.schema.json", doc); err != nil {
		return err
	}
	sch, err := c.Compile("report.schema.json")
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(body)))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}
