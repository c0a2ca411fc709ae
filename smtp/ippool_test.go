package smtp

import (
	"bytes"
	"log/slog"
	"net/netip"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
)

// testPool has two source addresses on loopback, each with its own name.
var testPool = mailroom.IPPool{Name: "main", Addresses: []mailroom.SourceAddress{
	{IP: netip.MustParseAddr("127.0.0.10"), EHLOName: "out1.example.net"},
	{IP: netip.MustParseAddr("127.0.0.11"), EHLOName: "out2.example.net"},
}}

// ehloOf is the name each address of testPool must say.
var ehloOf = map[netip.Addr]string{
	netip.MustParseAddr("127.0.0.10"): "out1.example.net",
	netip.MustParseAddr("127.0.0.11"): "out2.example.net",
}

// A pool's connections rotate among its addresses, each saying EHLO with
// its own name, with sites and without.
func TestPoolRotatesSourceAddresses(t *testing.T) {
	for _, withSites := range []bool{true, false} {
		t.Run(map[bool]string{true: "sites", false: "per host"}[withSites], func(t *testing.T) {
			port, rs := startReceivers(t, "127.0.0.2")
			r := rs[0]
			dnsSrv := dnstest.Start(t)
			publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.2")
			d := newDirect(t, dnsSrv, port)
			if withSites {
				d.Sites = newTestSites(bigmail)
			}
			d.Pools = []mailroom.IPPool{testPool}

			// Two deliveries at once need two connections.
			release := r.Hold()
			done := deliverMany(d, delivery("a.test", "x@a.test"), delivery("a.test", "y@a.test"))
			pollUntil(t, "two deliveries held", func() bool { return r.Stats().Held == 2 })
			release()
			for range 2 {
				want(t, next(t, done)[0], mailroom.Delivered, 250, "2.0.0", "")
			}
			used := map[netip.Addr]int{}
			for _, s := range r.Stats().Sessions {
				used[s.Remote]++
				if want := ehloOf[s.Remote]; s.EHLO != want {
					t.Errorf("session from %s said EHLO %q, want %q", s.Remote, s.EHLO, want)
				}
			}
			if len(used) != 2 {
				t.Errorf("sessions came from %v, want both addresses of the pool", used)
			}
		})
	}
}

// A site's cap holds per source address: with a cap of one, a pool of two
// addresses has two connections to the site.
func TestPoolSiteCapPerSourceAddress(t *testing.T) {
	port, rs := startReceivers(t, "127.0.0.2")
	r := rs[0]
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.2")
	p := bigmail
	p.MaxConnections = 1
	d := newSiteDirect(t, dnsSrv, port, newTestSites(p))
	d.Pools = []mailroom.IPPool{testPool}

	release := r.Hold()
	var dels []*mailroom.Delivery
	for _, rcpt := range []string{"a@a.test", "b@a.test", "c@a.test", "d@a.test"} {
		dels = append(dels, delivery("a.test", rcpt))
	}
	done := deliverMany(d, dels...)
	pollUntil(t, "two deliveries held", func() bool { return r.Stats().Held == 2 })
	release()
	for range dels {
		want(t, next(t, done)[0], mailroom.Delivered, 250, "2.0.0", "")
	}
	st := r.Stats()
	if st.MaxOpen != 2 || len(st.Sessions) != 2 || st.Sessions[0].Remote == st.Sessions[1].Remote {
		t.Errorf("receiver saw %d at once, sessions %+v; want one from each address", st.MaxOpen, st.Sessions)
	}
}

// A delivery leaves from the pool its IPPool names; an unknown name is the
// default pool, logged once.
func TestPoolChosenByName(t *testing.T) {
	port, rs := startReceivers(t, "127.0.0.2")
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.2")
	d := newSiteDirect(t, dnsSrv, port, newTestSites(bigmail))
	d.Pools = []mailroom.IPPool{
		{Name: "main", Addresses: testPool.Addresses[:1]},
		{Name: "bulk", Addresses: testPool.Addresses[1:]},
	}
	var logged bytes.Buffer
	d.Log = slog.New(slog.NewTextHandler(&logged, nil))
	// One message a connection, so that each delivery shows its address.
	p := bigmail
	p.MaxMessagesPerConnection = 1
	d.Sites = newTestSites(p)

	for _, pool := range []string{"bulk", "", "nope", "nope", "main"} {
		del := delivery("a.test", "x@a.test")
		del.IPPool = pool
		want(t, deliver(t, d, del)[0], mailroom.Delivered, 250, "2.0.0", "")
	}
	var got []string
	for _, s := range rs[0].Stats().Sessions {
		got = append(got, s.Remote.String())
	}
	if strings.Join(got, " ") != "127.0.0.11 127.0.0.10 127.0.0.10 127.0.0.10 127.0.0.10" {
		t.Errorf("sessions from %v", got)
	}
	if n := strings.Count(logged.String(), "pool=nope"); n != 1 {
		t.Errorf("the unknown pool was logged %d times, want once:\n%s", n, logged.String())
	}
}
