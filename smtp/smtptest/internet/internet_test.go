package internet

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"
	mdns "github.com/miekg/dns"
)

// lookup asks the box's DNS server, as a sender's resolver does.
func lookup(t *testing.T, b *Box, name string, qtype uint16) []mdns.RR {
	t.Helper()
	m := new(mdns.Msg)
	m.SetQuestion(mdns.Fqdn(name), qtype)
	in, err := mdns.Exchange(m, b.DNS.Addr())
	if err != nil {
		t.Fatal(err)
	}
	return in.Answer
}

// route follows a domain's first MX to the address and port a sender dials.
func route(t *testing.T, b *Box, domain string) string {
	t.Helper()
	mx := lookup(t, b, domain, mdns.TypeMX)
	if len(mx) == 0 {
		t.Fatalf("no MX for %s", domain)
	}
	a := lookup(t, b, mx[0].(*mdns.MX).Mx, mdns.TypeA)
	if len(a) == 0 {
		t.Fatalf("no address for %s", mx[0].(*mdns.MX).Mx)
	}
	return net.JoinHostPort(a[0].(*mdns.A).A.String(), strconv.Itoa(b.Port))
}

func TestStandardBoxRoutesEveryDomainToItsSite(t *testing.T) {
	spec := Standard()
	spec.Latency = [2]time.Duration{}
	b := Start(t, spec)
	if len(b.Provider.Domains) != 30 || len(b.Small) != 4 || len(b.Sites) != 8 {
		t.Fatalf("box: %d provider domains, %d small sites, %d sites", len(b.Provider.Domains), len(b.Small), len(b.Sites))
	}
	for _, s := range b.Sites {
		for _, d := range []string{s.Domains[0], s.Domains[len(s.Domains)-1]} {
			if b.SiteOf(d) != s {
				t.Errorf("SiteOf(%s) is not %s", d, s.Name)
			}
			if got := route(t, b, d); !strings.HasPrefix(got, s.IPs[0]+":") {
				t.Errorf("%s routes to %s, want %s's %s", d, got, s.Name, s.IPs[0])
			}
		}
	}
	// The provider's domains share both MX hosts.
	if mx := lookup(t, b, "hosted-7.test", mdns.TypeMX); len(mx) != 2 {
		t.Fatalf("hosted-7.test MX %v", mx)
	}
	// A small site's domains each have their own MX host name.
	if mx := lookup(t, b, "shop-5.test", mdns.TypeMX); len(mx) != 1 || mx[0].(*mdns.MX).Mx != "mx.shop-5.test." {
		t.Fatalf("shop-5.test MX %v", mx)
	}

	// Mail to a provider domain arrives at the provider, through mx2 too.
	c, err := gosmtp.Dial(net.JoinHostPort(providerIP2, strconv.Itoa(b.Port)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendMail("a@sender.test", []string{b.Provider.Recipient(3)}, strings.NewReader("Subject: x\r\n\r\nx\r\n")); err != nil {
		t.Fatal(err)
	}
	if b.Provider.Delivered() != 1 || b.Provider.Recipient(3) != "user3@hosted-3.test" {
		t.Fatalf("provider got %d", b.Provider.Delivered())
	}
	if r := b.Provider.Report(); !strings.Contains(r, "cap 5") {
		t.Errorf("report %q", r)
	}
}

func TestSetHostPublishesForwardAndReverse(t *testing.T) {
	spec := Standard()
	spec.SmallDomains = 0
	b := Start(t, spec)
	b.SetHost("out1.example.test", "127.0.0.10")
	ptr := lookup(t, b, "10.0.0.127.in-addr.arpa", mdns.TypePTR)
	if len(ptr) != 1 || ptr[0].(*mdns.PTR).Ptr != "out1.example.test." {
		t.Fatalf("PTR %v", ptr)
	}
	if len(lookup(t, b, "out1.example.test", mdns.TypeA)) != 1 {
		t.Fatal("no A")
	}
}
