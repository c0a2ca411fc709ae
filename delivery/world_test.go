package delivery_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/compose"
	"github.com/mailroom/mailroom/delivery"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/domain"
	"github.com/mailroom/mailroom/inbound"
	"github.com/mailroom/mailroom/sealer"
	"github.com/mailroom/mailroom/send"
	"github.com/mailroom/mailroom/smtp"
	"github.com/mailroom/mailroom/smtp/smtptest"
	"github.com/mailroom/mailroom/sqlstore"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/unsubscribe"
)

// Operator settings of the test service, as in http/harness_test.go: it
// sends from sendingIP, which its host name resolves to.
const (
	serviceHost = "mail.mailroom-operator.test"
	sendingIP   = "192.0.2.10"
	// sendingDomain is the customer's verified domain that mail is from.
	sendingDomain = "shop.example"
)

// world is a delivery environment of real parts, built the way
// http/harness_test.go builds one but without the HTTP API: a SQLite
// store, a DNS server and an SMTP server on loopback, the real Signer,
// Composer and Direct transport. Only the SMTP server's and DNS server's
// addresses are chosen by the test; everything between the store and the
// socket is the code that runs in `mailroom serve`.
type world struct {
	store   *sqlstore.Store
	dns     *dnstest.Server
	mx      *smtptest.Server
	sealKey []byte
	domains *domain.Service
	acct    *mailroom.Account
	// sending is the verified sending domain, its records published.
	sending *mailroom.Domain
}

// newWorld starts the DNS and SMTP servers and prepares an account with a
// sending domain verified against the DNS server, as a customer would
// (add, publish the records, verify), in store.
func newWorld(tb testing.TB, store *sqlstore.Store) *world {
	tb.Helper()
	w := &world{store: store, dns: dnstest.Start(tb), mx: smtptest.Start(tb, smtptest.WithSTARTTLS()),
		sealKey: []byte(rand.Text() + rand.Text())[:32]}
	w.dns.SetA(serviceHost, sendingIP)
	w.domains = newDomains(tb, store, w.dns.Addr(), w.sealKey)
	w.acct = storetest.NewAccount(tb, store, "acme")
	ctx := context.Background()
	d, err := w.domains.Add(ctx, w.acct.ID, sendingDomain)
	if err != nil {
		tb.Fatal(err)
	}
	for _, r := range d.Records {
		switch r.Type {
		case "TXT":
			w.dns.SetTXT(r.Name, r.Value)
		case "MX":
			w.dns.SetMX(r.Name, uint16(*r.Priority), r.Value)
		}
	}
	if d, err = w.domains.Verify(ctx, w.acct.ID, sendingDomain); err != nil || d.Status != mailroom.DomainVerified {
		tb.Fatalf("verify %s: %v %+v", sendingDomain, err, d)
	}
	w.sending = d
	return w
}

// newDomains is the domain service over store, its key sealed with
// sealKey and its checks made against the DNS server at dnsAddr.
func newDomains(tb testing.TB, store mailroom.DomainStore, dnsAddr string, sealKey []byte) *domain.Service {
	seal, err := sealer.New(sealKey)
	if err != nil {
		tb.Fatal(err)
	}
	return &domain.Service{
		Store: store,
		Checker: &dns.Checker{
			Resolver:   &dns.Resolver{Server: dnsAddr, Timeout: time.Second},
			SendingIPs: []net.IP{net.ParseIP(sendingIP)},
			MXHost:     serviceHost,
		},
		Sealer:   seal,
		Settings: mailroom.DefaultRecordSettings(serviceHost),
		Now:      time.Now,
		Log:      slog.New(slog.DiscardHandler),
	}
}

// mailDomain makes domain's mail go to the test SMTP server, through an
// MX host of its own (so that the transport's per-host caps apply per
// domain, as with real receivers).
func (w *world) mailDomain(domain string) {
	w.dns.SetMX(domain, 10, "mx."+domain)
	w.dns.SetA("mx."+domain, "127.0.0.1")
}

// send accepts a message through the real send path (validation, the
// sending domain check, the store's accept) and returns its id. now is
// the accept time, which is also when the message is due.
func (w *world) send(tb testing.TB, now time.Time, req *mailroom.SendRequest) string {
	tb.Helper()
	s := &send.Sender{Store: w.store, Domains: w.domains, Now: func() time.Time { return now }}
	res, err := s.Send(context.Background(), &mailroom.APIKey{AccountID: w.acct.ID}, req, nil)
	if err != nil {
		tb.Fatalf("send: %v", err)
	}
	return res.MessageID
}

// attachment is a request attachment of size random bytes: random, so
// that nothing on the way can shrink it.
func attachment(size int) mailroom.SendAttachment {
	b := make([]byte, size)
	_, _ = rand.Read(b)
	return mailroom.SendAttachment{Filename: "report.bin", ContentType: "application/octet-stream",
		Content: base64.StdEncoding.EncodeToString(b)}
}

// recipients returns n addresses, the i-th at domain(i).
func recipients(n int, domain func(i int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("user%d@%s", i, domain(i))
	}
	return out
}

// newDeliverer is the delivery runtime as `mailroom serve` wires it
// (cmd/mailroom/delivery.go: batches of 50, 400 messages in flight, 64 per
// destination), over store, with composer signing and the Direct transport
// sending to the SMTP server on port mxPort of whatever DNS at dnsAddr
// says. It returns the transport too, for the caller to close.
func newDeliverer(store mailroom.MessageStore, domains *domain.Service, composer mailroom.Composer,
	dnsAddr string, mxPort int) (*delivery.Deliverer, *smtp.Direct) {
	transport := smtp.NewDirect(&dns.Resolver{Server: dnsAddr, Timeout: time.Second}, serviceHost)
	transport.Port = mxPort
	return &delivery.Deliverer{
		Store:       store,
		Signer:      &delivery.Signer{Store: store, Domains: domains, Composer: composer, Unsubscribe: unsubscribeLinks},
		ReturnPaths: inbound.ReturnPaths{Key: []byte("delivery test return-path key")},
		Transport:   transport, Now: time.Now, Node: "node_test",
		Log:   slog.New(slog.DiscardHandler),
		Retry: mailroom.RetryPolicy{MinDelay: time.Minute, MaxDelay: time.Hour, Window: 72 * time.Hour},
		Lease: 10 * time.Minute, Batch: 50, MaxMessages: 400, PerDestination: 64, Poll: time.Second,
		DrainTimeout: 5 * time.Second,
	}, transport
}

// realComposer is the composer `mailroom serve` uses.
func realComposer() mailroom.Composer { return compose.Composer{} }

// unsubscribeTokens and unsubscribeLinks make marketing mail's unsubscribe
// links, as `mailroom serve` does with --public-url https://serviceHost.
var (
	unsubscribeTokens = unsubscribe.Tokens{Key: []byte("delivery test unsubscribe key")}
	unsubscribeLinks  = unsubscribe.Links{Tokens: unsubscribeTokens, PublicURL: "https://" + serviceHost}
)

// deliverAll runs delivery passes until nothing is due, and returns how
// many recipients were claimed in all. Each pass returns only once what
// it claimed is settled, so no waiting is needed after it.
func deliverAll(tb testing.TB, d *delivery.Deliverer) int {
	tb.Helper()
	total := 0
	for {
		n, err := d.DeliverDue(context.Background())
		if err != nil {
			tb.Fatalf("deliver: %v", err)
		}
		if n == 0 {
			return total
		}
		total += n
	}
}
