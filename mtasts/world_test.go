package mtasts_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/mtasts"
	"github.com/mailroom/mailroom/sqlite"
	"github.com/mailroom/mailroom/sqlstore"
	"github.com/mailroom/mailroom/tlscert/tlstest"
)

// domain is the recipient domain of the tests; its policy host is
// mta-sts.example.test.
const domain = "example.test"

const enforcePolicy = "version: STSv1\r\nmode: enforce\r\nmx: mx1.example.test\r\nmx: *.mx.example.test\r\nmax_age: 86400\r\n"

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// world is a recipient domain on loopback: its DNS (dnstest), an HTTPS
// policy server with a certificate from the test CA, and a store (SQLite
// unless the test sets another) that the nodes of a test share.
type world struct {
	t     testing.TB
	dns   *dnstest.Server
	ca    *tlstest.CA
	srv   *httptest.Server
	port  int
	store mailroom.MTASTSPolicyStore

	mu       sync.Mutex
	now      time.Time
	policy   string // what the server serves
	serve    http.HandlerFunc
	requests atomic.Int64
}

// newWorld serves enforcePolicy under the TXT id "1", with a certificate
// for names (mta-sts.example.test when none).
func newWorld(t testing.TB, names ...string) *world {
	t.Helper()
	if len(names) == 0 {
		names = []string{"mta-sts." + domain}
	}
	w := &world{t: t, dns: dnstest.Start(t), ca: tlstest.NewCA(t), now: t0, policy: enforcePolicy}
	w.srv = httptest.NewUnstartedServer(http.HandlerFunc(w.handle))
	w.srv.TLS = tlstest.ServerConfig(w.ca.Issue(t, names...))
	w.srv.Config.ErrorLog = nil
	w.srv.StartTLS()
	t.Cleanup(w.srv.Close)
	w.port = w.srv.Listener.Addr().(*net.TCPAddr).Port
	w.dns.SetA("mta-sts."+domain, "127.0.0.1")
	w.setID("1")
	w.store = sharedStore
	if err := sharedStore.DeleteMTASTSPolicy(context.Background(), domain); err != nil {
		t.Fatal(err)
	}
	return w
}

// sharedStore is one SQLite store for the package's tests, which run one
// at a time and each start by forgetting the domain's policy: migrating a
// store per test would cost more than the tests.
var sharedStore *sqlstore.Store

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mtasts-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedStore, err = sqlite.Open(context.Background(), dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	sharedStore.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

func (w *world) handle(rw http.ResponseWriter, r *http.Request) {
	w.requests.Add(1)
	w.mu.Lock()
	serve, policy := w.serve, w.policy
	w.mu.Unlock()
	if serve != nil {
		serve(rw, r)
		return
	}
	if r.URL.Path != "/.well-known/mta-sts.txt" || r.Host != "mta-sts."+domain {
		http.NotFound(rw, r)
		return
	}
	rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(rw, policy)
}

// setID publishes the TXT record naming policy id.
func (w *world) setID(id string) {
	w.dns.SetTXT("_mta-sts."+domain, "v=STSv1; id="+id+";")
}

func (w *world) setPolicy(text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.policy = text
}

func (w *world) setHandler(h http.HandlerFunc) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.serve = h
}

func (w *world) clock() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now
}

func (w *world) advance(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.now = w.now.Add(d)
}

// node is one Mailroom node's Policies over the world's store.
func (w *world) node(opts ...func(*mtasts.Options)) *mtasts.Policies {
	o := mtasts.Options{
		Resolver: &dns.Resolver{Server: w.dns.Addr(), Timeout: 2 * time.Second},
		Store:    w.store,
		RootCAs:  w.ca.Pool(),
		Port:     w.port,
		Timeout:  10 * time.Second,
		Now:      w.clock,
		Log:      slog.New(slog.NewTextHandler(w.t.Output(), nil)),
	}
	for _, f := range opts {
		f(&o)
	}
	return mtasts.New(o)
}

// lookup asks p for the domain's policy.
func lookup(p *mtasts.Policies, afterFailure bool) mailroom.MTASTSLookup {
	return p.Lookup(context.Background(), domain, afterFailure)
}

// stored is the store's policy of the domain.
func (w *world) stored() *mailroom.MTASTSPolicy {
	w.t.Helper()
	p, err := w.store.MTASTSPolicy(context.Background(), domain)
	if err != nil {
		w.t.Fatal(err)
	}
	return p
}

func (w *world) wantRequests(n int64) {
	w.t.Helper()
	if got := w.requests.Load(); got != n {
		w.t.Fatalf("the policy server had %d requests, want %d", got, n)
	}
}

// wantPolicy checks that l holds the policy of id and mode, and no failure.
func wantPolicy(t testing.TB, l mailroom.MTASTSLookup, id string, mode mailroom.MTASTSMode) {
	t.Helper()
	if l.Policy == nil || l.Policy.ID != id || l.Policy.Mode != mode || l.Failure != "" {
		t.Fatalf("lookup gave %s, want policy %s in mode %s", describe(l), id, mode)
	}
}

// wantNone checks that l holds neither a policy nor a failure.
func wantNone(t testing.TB, l mailroom.MTASTSLookup) {
	t.Helper()
	if l.Policy != nil || l.Failure != "" {
		t.Fatalf("lookup gave %s, want no policy and no failure", describe(l))
	}
}

// wantFailure checks that l holds no policy and the failure f.
func wantFailure(t testing.TB, l mailroom.MTASTSLookup, f mailroom.TLSFailure) {
	t.Helper()
	if l.Policy != nil || l.Failure != f || l.Detail == "" {
		t.Fatalf("lookup gave %s, want no policy and failure %s with a detail", describe(l), f)
	}
}

func describe(l mailroom.MTASTSLookup) string {
	s := "no policy"
	if l.Policy != nil {
		s = "policy " + l.Policy.ID + " (" + string(l.Policy.Mode) + ", max_age " + strconv.Itoa(int(l.Policy.MaxAge/time.Second)) + ")"
	}
	if l.Failure != "" {
		s += ", failure " + string(l.Failure) + ": " + l.Detail
	}
	return s
}
