package http_test

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apikey"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/audit"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/compose"
	"github.com/mailroom/mailroom/delivery"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/domain"
	"github.com/mailroom/mailroom/emaillog"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/inbound"
	"github.com/mailroom/mailroom/mustache"
	"github.com/mailroom/mailroom/netguard"
	"github.com/mailroom/mailroom/receiving"
	"github.com/mailroom/mailroom/sealer"
	"github.com/mailroom/mailroom/send"
	"github.com/mailroom/mailroom/smtp"
	"github.com/mailroom/mailroom/smtp/smtptest"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/suppression"
	"github.com/mailroom/mailroom/template"
	"github.com/mailroom/mailroom/unsubscribe"
	"github.com/mailroom/mailroom/webhook"
)

// env is one API server over real TLS on a real store, with an account
// "acme" whose admin key holds every scope.
type env struct {
	*apitest.Client
	store   mailroom.Store
	usage   *apikey.Usage
	domains *domain.Service
	dns     *dnstest.Server  // the world's DNS, as the service sees it
	mx      *smtptest.Server // every recipient domain's mail server
	deliver *delivery.Deliverer
	clock   *clock
	acct    *mailroom.Account
	admin   string // full key with every scope
	// unsubscribe makes the tokens of the service's unsubscribe links.
	unsubscribe unsubscribe.Tokens
}

// Operator settings of the test service: it sends from sendingIP, which
// its host name resolves to, and receives bounces at the same host.
const (
	serviceHost = "mail.mailroom-operator.test"
	sendingIP   = "192.0.2.10"
)

// clock is a settable clock, so that schedules and deadlines are tested
// without waiting for them. Like real time it moves on between readings
// (by a millisecond), so that what happens later is stamped later.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newEnv(t testing.TB, e storetest.Engine) *env {
	return newEnvWithStore(t, e.Open(t))
}

// envOption adjusts the server and the deliverer before they start.
type envOption func(*mhttp.Server, *delivery.Deliverer)

// newEnvWithStore builds the environment over store, adjusted by opts.
func newEnvWithStore(t testing.TB, store mailroom.Store, opts ...envOption) *env {
	t.Helper()
	usage := apikey.NewUsage(store, slog.Default())
	world := dnstest.Start(t)
	world.SetA(serviceHost, sendingIP)
	seal, err := sealer.New([]byte(rand.Text() + rand.Text())[:32])
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now().UTC().Truncate(time.Second)}
	domains := &domain.Service{
		Store: store,
		Checker: &dns.Checker{
			Resolver:   &dns.Resolver{Server: world.Addr(), Timeout: 500 * time.Millisecond},
			SendingIPs: []net.IP{net.ParseIP(sendingIP)},
			MXHost:     serviceHost,
		},
		Sealer:   seal,
		Settings: mailroom.DefaultRecordSettings(serviceHost),
		Now:      clk.Now,
		Log:      slog.New(slog.DiscardHandler),
	}
	mx := smtptest.Start(t, smtptest.WithSTARTTLS())
	transport := smtp.NewDirect(&dns.Resolver{Server: world.Addr(), Timeout: time.Second}, serviceHost)
	transport.Port = mx.Port()
	t.Cleanup(func() { transport.Close() })
	// Unsubscribe links point at the service's public name; tests POST
	// their tokens to the test server.
	tokens := unsubscribe.Tokens{Key: seal.DeriveKey("mailroom unsubscribe v1")}
	signer := &delivery.Signer{Store: store, Domains: domains, Composer: compose.Composer{},
		Unsubscribe: unsubscribe.Links{Tokens: tokens, PublicURL: "https://" + serviceHost}}
	deliverer := &delivery.Deliverer{
		Store: store, Signer: signer, Transport: transport, Now: clk.Now, Node: "node_test",
		ReturnPaths: inbound.ReturnPaths{Key: seal.DeriveKey("mailroom return-path v1")},
		Log:         slog.New(slog.DiscardHandler),
		Retry:       mailroom.RetryPolicy{MinDelay: time.Minute, MaxDelay: time.Hour, Window: 72 * time.Hour},
		Lease:       10 * time.Minute, Batch: 20, MaxMessages: 40, PerDestination: slowDestinationCap, Poll: 20 * time.Millisecond,
		DrainTimeout: 5 * time.Second,
	}
	templates := &template.Service{Store: store, Engine: mustache.Engine{}, Now: clk.Now}
	srv := &mhttp.Server{
		Store:     store,
		Auth:      &apikey.Authenticator{Keys: store, Usage: usage, Now: time.Now},
		Domains:   domains,
		Sender:    &send.Sender{Store: store, Domains: domains, Templates: templates, Now: clk.Now, Queued: deliverer.Wake},
		Templates: templates,
		Messages:  &emaillog.Service{Store: store, Signer: signer},
		Scheduled: &send.Scheduled{Store: store, Now: clk.Now, Queued: deliverer.Wake},
		Log:       slog.New(slog.DiscardHandler),
	}
	srv.Suppressions = &suppression.Service{Store: store, Now: clk.Now}
	srv.Audit = &audit.Service{Store: store}
	srv.Received = &receiving.Mailbox{Store: store}
	srv.Keys = &apikey.Service{Store: store, Domains: domains, Now: srv.Now}
	srv.Unsubscribes = &unsubscribe.Service{Tokens: tokens, Store: store, Now: clk.Now}
	// Webhook URLs are checked as the service checks them by default (no
	// private targets), with names resolved by the test's DNS server.
	webhookResolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, world.Addr())
	}}
	srv.Webhooks = &webhook.Service{
		Store:  store,
		Sealer: seal,
		CheckURL: func(ctx context.Context, url string) error {
			return netguard.CheckURL(ctx, webhookResolver, url, false)
		},
		Now: clk.Now,
	}
	for _, o := range opts {
		o(srv, deliverer)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { deliverer.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)
	c := apitest.New(t, ts.URL, nil)
	c.HTTP = ts.Client()
	c.HTTP.Timeout = 30 * time.Second

	acct := storetest.NewAccount(t, store, "acme")
	ev := &env{Client: c, store: store, usage: usage, domains: domains, dns: world, mx: mx, deliver: deliverer, clock: clk, acct: acct,
		unsubscribe: tokens}
	ev.admin = ev.newKey(t, acct, mailroom.Scopes(mailroom.AllScopes))
	return ev
}

// newKey stores a key for acct and returns the full key.
func (e *env) newKey(t testing.TB, acct *mailroom.Account, scopes mailroom.Scopes) string {
	t.Helper()
	full, k := mailroom.NewAPIKey(acct.ID, "test", scopes, time.Now())
	if err := e.store.CreateAPIKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	return full
}

func wantError(t *testing.T, r *apitest.Response, status int, code string) {
	t.Helper()
	if r.Status != status || r.Code() != code {
		t.Fatalf("got %d %s, want %d %s; body %s", r.Status, r.Code(), status, code, r.Body)
	}
	if body := apitest.Decode[api.ErrorBody](r); body.Message == "" {
		t.Fatalf("error without a message: %s", r.Body)
	}
}
