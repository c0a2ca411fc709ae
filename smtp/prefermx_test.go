package smtp

import (
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
)

// PreferMX is tried first while it is one of the domain's MX hosts: a
// greylisted recipient goes back to the host that greylisted it. With
// sites, an idle session with another host of the site does not take its
// place.
func TestPreferMX(t *testing.T) {
	for _, withSites := range []bool{true, false} {
		t.Run(map[bool]string{true: "sites", false: "per host"}[withSites], func(t *testing.T) {
			port, rs := startReceivers(t, "127.0.0.2", "127.0.0.3")
			dnsSrv := dnstest.Start(t)
			publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.2")
			publishMX(dnsSrv, "a.test", 20, "mx2.bigmail.test", "127.0.0.3")
			d := newDirect(t, dnsSrv, port)
			if withSites {
				d.Sites = newTestSites(bigmail)
			}
			send := func(prefer, wantMX string) {
				t.Helper()
				del := delivery("a.test", "x@a.test")
				del.PreferMX = prefer
				res := deliver(t, d, del)
				want(t, res[0], mailroom.Delivered, 250, "2.0.0", "")
				if res[0].MX != wantMX {
					t.Errorf("PreferMX %q: delivered by %q, want %q", prefer, res[0].MX, wantMX)
				}
			}
			send("", "mx1.bigmail.test")
			send("MX2.bigmail.test.", "mx2.bigmail.test")
			// A host that is no longer an MX host of the domain is not.
			send("mx9.bigmail.test", "mx1.bigmail.test")
			if a, b := rs[0].Stats().Delivered, rs[1].Stats().Delivered; a != 2 || b != 1 {
				t.Errorf("mx1 delivered %d and mx2 %d, want 2 and 1", a, b)
			}
		})
	}
}
