package smtp

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/poll"
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

// pollUntil waits for cond, failing the test at testTimeout.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Until(t, testTimeout, what, cond)
}

// silentServer accepts connections on 127.0.0.1 and never speaks; count
// says how many it accepted.
func silentServer(t *testing.T) (port int, count func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().(*net.TCPAddr).Port, func() int { return int(n.Load()) }
}
