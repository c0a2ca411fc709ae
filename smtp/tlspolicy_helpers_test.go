package smtp

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/smtp/smtptest"
	"github.com/mailroom/mailroom/tlscert/tlstest"
)

// fixedPolicies gives every domain the same MTA-STS lookup. The real
// MTASTSPolicies (package mtasts: DNS, HTTPS fetch, cache) is a feature
// package this leaf may not import, and is tested there; what is tested
// here is what delivery does with the policy it is given.
type fixedPolicies struct {
	lookup mailroom.MTASTSLookup

	mu sync.Mutex
	// afterFailure records each Lookup's afterFailure.
	afterFailure []bool
}

func (f *fixedPolicies) Lookup(_ context.Context, _ string, afterFailure bool) mailroom.MTASTSLookup {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.afterFailure = append(f.afterFailure, afterFailure)
	return f.lookup
}

// recordingObserver keeps every TLS session result it is told.
type recordingObserver struct {
	mu      sync.Mutex
	results []mailroom.TLSSessionResult
}

func (o *recordingObserver) ObserveTLS(r mailroom.TLSSessionResult) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.results = append(o.results, r)
}

func (o *recordingObserver) all() []mailroom.TLSSessionResult {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]mailroom.TLSSessionResult(nil), o.results...)
}

// only is the one result observed, failing the test when there is not
// exactly one.
func (o *recordingObserver) only(t *testing.T) mailroom.TLSSessionResult {
	t.Helper()
	all := o.all()
	if len(all) != 1 {
		t.Fatalf("observer told %d results, want 1: %+v", len(all), all)
	}
	return all[0]
}

// wantObserved checks a result's outcome, failure and host.
func wantObserved(t *testing.T, r mailroom.TLSSessionResult, policy mailroom.TLSPolicy, outcome mailroom.TLSOutcome, failure mailroom.TLSFailure, mx string) {
	t.Helper()
	if r.Policy != policy || r.Outcome != outcome || r.Failure != failure || r.MX != mx || r.Domain != "example.test" || r.At.IsZero() {
		t.Errorf("observed %+v, want domain example.test, policy %s, outcome %s, failure %q, MX %s", r, policy, outcome, failure, mx)
	}
}

// mxName is example.test's MX host in these tests.
const mxName = "mx.example.test"

// enforcePolicy is example.test's MTA-STS policy in mode, naming mx.
func enforcePolicy(mode mailroom.MTASTSMode, mx ...string) *mailroom.MTASTSPolicy {
	return &mailroom.MTASTSPolicy{Domain: "example.test", ID: "20250101", Mode: mode, MX: mx,
		MaxAge: 24 * time.Hour, FetchedAt: time.Now()}
}

// tlsWorld is a test's certificate authority, DNS, observer and Direct
// that trusts the authority.
type tlsWorld struct {
	ca       *tlstest.CA
	dns      *dnstest.Server
	observer *recordingObserver
}

func newTLSWorld(t *testing.T) *tlsWorld {
	return &tlsWorld{ca: tlstest.NewCA(t), dns: dnstest.Start(t), observer: &recordingObserver{}}
}

// direct is a Direct to port that trusts the world's authority, tells its
// observer, and finds sts as every domain's MTA-STS policy (none when
// nil).
func (w *tlsWorld) direct(t *testing.T, port int, sts *mailroom.MTASTSPolicy) *Direct {
	t.Helper()
	d := newDirect(t, w.dns, port)
	w.arm(d, sts)
	return d
}

func (w *tlsWorld) arm(d *Direct, sts *mailroom.MTASTSPolicy) {
	d.RootCAs = w.ca.Pool()
	d.TLSObserver = w.observer
	if sts != nil {
		d.MTASTS = &fixedPolicies{lookup: mailroom.MTASTSLookup{Policy: sts}}
	}
}

// receiver is example.test's one MX host, mx.example.test on 127.0.0.1.
func (w *tlsWorld) receiver(t *testing.T, opts ...smtptest.Option) *smtptest.Server {
	t.Helper()
	publishMX(w.dns, "example.test", 10, mxName, "127.0.0.1")
	return smtptest.Start(t, opts...)
}

// wantNothingSent checks that mx never saw a MAIL command, nor DATA.
func wantNothingSent(t *testing.T, mx *smtptest.Server) {
	t.Helper()
	if st := mx.Stats(); st.MailCommands != 0 || st.DataCommands != 0 || st.Messages != 0 {
		t.Errorf("stats %+v: the receiver got MAIL or DATA, want nothing of the message", st)
	}
}

// wantTLSRequired checks that every result is deferred for tls_required,
// its text containing text.
func wantTLSRequired(t *testing.T, res []mailroom.RecipientResult, text string) {
	t.Helper()
	for _, r := range res {
		want(t, r, mailroom.Deferred, 0, enhTLSRequired, text)
		if r.Reason != mailroom.DeferTLSRequired || r.TLS != nil {
			t.Errorf("%s: reason %q, TLS %+v; want tls_required and no TLS", r.Recipient, r.Reason, r.TLS)
		}
	}
}

// wantRequireTLSBounce checks that every result is a 550 5.7.30 bounce.
func wantRequireTLSBounce(t *testing.T, res []mailroom.RecipientResult, text string) {
	t.Helper()
	for _, r := range res {
		want(t, r, mailroom.Bounced, 550, mailroom.RequireTLSBounce, text)
	}
}

// wantTLS checks a result's TLS.
func wantTLS(t *testing.T, r mailroom.RecipientResult, verified bool, policy mailroom.TLSPolicy) {
	t.Helper()
	if r.TLS == nil || r.TLS.Verified != verified || r.TLS.Policy != policy || !strings.HasPrefix(r.TLS.Version, "TLS1.") || r.TLS.Cipher == "" {
		t.Errorf("%s: TLS %+v, want verified %v under %s", r.Recipient, r.TLS, verified, policy)
	}
	if r.Unencrypted {
		t.Errorf("%s: marked unencrypted under TLS", r.Recipient)
	}
}
