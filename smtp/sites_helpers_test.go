package smtp

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/smtp/smtptest"
)

// bigmail is a provider's profile: every host under bigmail.test is one
// site.
var bigmail = mailroom.SiteProfile{Name: "bigmail", MX: []string{"*.bigmail.test"},
	MaxConnections: 2, MaxMessagesPerConnection: 100, ConnectTimeout: 5 * time.Second}

// bigmailKey is bigmail's key when the system picks the source address.
var bigmailKey = connKey{Site: "bigmail"}

// newSiteDirect is newDirect with sites.
func newSiteDirect(t *testing.T, dnsSrv *dnstest.Server, port int, sites mailroom.Sites) *Direct {
	t.Helper()
	d := newDirect(t, dnsSrv, port)
	d.Sites = sites
	return d
}

// deliverMany starts every delivery at once; each one's results arrive on
// the channel when it ends.
func deliverMany(tr mailroom.Transport, dels ...*mailroom.Delivery) <-chan []mailroom.RecipientResult {
	out := make(chan []mailroom.RecipientResult, len(dels))
	for _, d := range dels {
		go func() { out <- <-deliverAsync(tr, d) }()
	}
	return out
}

// next takes the next results from ch, failing the test if none come in
// time.
func next(t *testing.T, ch <-chan []mailroom.RecipientResult) []mailroom.RecipientResult {
	t.Helper()
	select {
	case res := <-ch:
		return res
	case <-time.After(testTimeout):
		t.Fatal("no delivery ended in time")
		return nil
	}
}

// wantSite checks that every result names site.
func wantSite(t *testing.T, res []mailroom.RecipientResult, site string) {
	t.Helper()
	for _, r := range res {
		if r.Site != site {
			t.Errorf("%s: site %q, want %q", r.Recipient, r.Site, site)
		}
	}
}

// startAt runs an smtptest server on ip only, on port (a free one when
// 0): one MX host of a test whose hosts share Direct's one port.
func startAt(t *testing.T, ip string, port int, opts ...smtptest.Option) *smtptest.Server {
	t.Helper()
	opts = append(opts, smtptest.WithAddresses(ip))
	if port != 0 {
		opts = append(opts, smtptest.WithPort(port))
	}
	return smtptest.Start(t, opts...)
}

// holdAll holds every transaction to rcpts until the function returned is
// called (or the test ends).
func holdAll(mx *smtptest.Server, rcpts ...string) (release func()) {
	var releases []func()
	for _, r := range rcpts {
		releases = append(releases, mx.Hold(r))
	}
	return func() {
		for _, r := range releases {
			r()
		}
	}
}

// clientIP is the address a session came from.
func clientIP(t *testing.T, s smtptest.Session) netip.Addr {
	t.Helper()
	ap, err := netip.ParseAddrPort(s.Client)
	if err != nil {
		t.Fatalf("session client %q: %v", s.Client, err)
	}
	return ap.Addr().Unmap()
}

// handedBack reports whether res is a delivery the transport handed back
// unattempted because every connection to its site was in use and as many
// deliveries waited for them (the delivery runtime claims it again once
// the site has room), checking that it says so and names its site.
func handedBack(t *testing.T, res []mailroom.RecipientResult, site string) bool {
	t.Helper()
	if res[0].Outcome != mailroom.NotAttempted {
		return false
	}
	for _, r := range res {
		if r.Outcome != mailroom.NotAttempted || r.RetryAt.IsZero() || r.Site != site || !strings.Contains(r.Response, "in use") {
			t.Errorf("handed-back result %+v, want not attempted, due again, naming site %s and why", r, site)
		}
	}
	return true
}
