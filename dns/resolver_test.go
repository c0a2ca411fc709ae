package dns_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/dns/dnstest"
)

func newResolver(srv *dnstest.Server) *dns.Resolver {
	return &dns.Resolver{Server: srv.Addr(), Timeout: 2 * time.Second}
}

// dnsError asserts that err is a *net.DNSError itself, not wrapped: the SPF
// library type-asserts it.
func dnsError(t *testing.T, err error) *net.DNSError {
	t.Helper()
	derr, ok := err.(*net.DNSError)
	if !ok {
		t.Fatalf("error %v (%T) is not a *net.DNSError", err, err)
	}
	return derr
}

func TestLookupTXT(t *testing.T) {
	srv := dnstest.Start(t)
	r := newResolver(srv)
	ctx := context.Background()

	long := "v=DKIM1; k=rsa; p=" + strings.Repeat("A", 380)
	srv.SetTXT("sel._domainkey.example.com", long, `back\slash "quoted" bücher`)
	got, err := r.LookupTXT(ctx, "SEL._domainkey.example.com.")
	if err != nil {
		t.Fatal(err)
	}
	// The 398-byte value arrives as one value, its two strings joined.
	if !slices.Equal(got, []string{long, `back\slash "quoted" bücher`}) {
		t.Errorf("LookupTXT = %q", got)
	}

	srv.SetTXTStrings("split.example.com", "v=spf1 ", "a:mail.example.net", " -all")
	got, err = r.LookupTXT(ctx, "split.example.com")
	if err != nil || !slices.Equal(got, []string{"v=spf1 a:mail.example.net -all"}) {
		t.Errorf("LookupTXT of split strings = %q, %v", got, err)
	}
}

func TestLookupRetriesTruncatedAnswersOverTCP(t *testing.T) {
	srv := dnstest.Start(t)
	var values []string
	for i := range 12 {
		values = append(values, strings.Repeat(string(rune('a'+i)), 300))
	}
	srv.SetTXT("big.example.com", values...) // ~3.7 kB, over any UDP buffer we offer
	got, err := newResolver(srv).LookupTXT(context.Background(), "big.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, values) {
		t.Errorf("got %d records, want all %d", len(got), len(values))
	}
}

func TestLookupErrors(t *testing.T) {
	srv := dnstest.Start(t)
	srv.SetMX("mx-only.example.com", 10, "mail.example.net")
	srv.Fail("servfail.example.com", mdns.RcodeServerFailure)
	srv.Fail("refused.example.com", mdns.RcodeRefused)
	srv.Drop("silent.example.com")
	r := &dns.Resolver{Server: srv.Addr(), Timeout: 300 * time.Millisecond}
	ctx := context.Background()

	for _, tc := range []struct {
		name                        string
		notFound, temporary, timout bool
	}{
		{"nxdomain.example.com", true, false, false},
		{"mx-only.example.com", true, false, false}, // NODATA
		{"servfail.example.com", false, true, false},
		{"refused.example.com", false, true, false},
		{"silent.example.com", false, true, true},
	} {
		_, err := r.LookupTXT(ctx, tc.name)
		derr := dnsError(t, err)
		if derr.IsNotFound != tc.notFound || derr.IsTemporary != tc.temporary || derr.IsTimeout != tc.timout {
			t.Errorf("%s: IsNotFound=%v IsTemporary=%v IsTimeout=%v, want %v %v %v (%v)", tc.name,
				derr.IsNotFound, derr.IsTemporary, derr.IsTimeout, tc.notFound, tc.temporary, tc.timout, err)
		}
		if derr.Temporary() == derr.IsNotFound {
			t.Errorf("%s: Temporary()=%v and IsNotFound=%v: the SPF library needs exactly one", tc.name, derr.Temporary(), derr.IsNotFound)
		}
	}

	// A server that is not there at all is temporary too.
	ln, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.LocalAddr().String()
	ln.Close()
	_, err = (&dns.Resolver{Server: closed, Timeout: 300 * time.Millisecond}).LookupTXT(ctx, "example.com")
	if derr := dnsError(t, err); derr.IsNotFound || !derr.Temporary() {
		t.Errorf("no server: %+v", derr)
	}

	// A cancelled context ends the lookup, and says so.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = r.LookupTXT(cctx, "silent.example.com")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled lookup: %v, want context.Canceled", err)
	}
}

func TestLookupMX(t *testing.T) {
	srv := dnstest.Start(t)
	srv.SetMX("example.com", 20, "backup.example.net")
	srv.SetMX("example.com", 10, "Primary.Example.NET")
	srv.SetMX("nomail.example.com", 0, ".")
	r := newResolver(srv)
	ctx := context.Background()

	mxs, err := r.LookupMX(ctx, "example.com")
	if err != nil {
		t.Fatal(err)
	}
	if len(mxs) != 2 || mxs[0].Pref != 10 || !strings.EqualFold(mxs[0].Host, "primary.example.net.") || mxs[1].Host != "backup.example.net." {
		t.Errorf("LookupMX = %v, %v", mxs[0], mxs[1])
	}
	if dns.IsNullMX(mxs) {
		t.Error("ordinary MX taken for a null MX")
	}

	mxs, err = r.LookupMX(ctx, "nomail.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if !dns.IsNullMX(mxs) {
		t.Errorf("null MX not recognised: %v", mxs)
	}
}

func TestLookupIPAddrAndAddr(t *testing.T) {
	srv := dnstest.Start(t)
	srv.SetA("dual.example.net", "192.0.2.1")
	srv.SetAAAA("dual.example.net", "2001:db8::1")
	srv.SetA("v4.example.net", "192.0.2.2")
	srv.SetTXT("noaddr.example.net", "hello")
	srv.Fail("broken.example.net", mdns.RcodeServerFailure)
	r := newResolver(srv)
	ctx := context.Background()

	addrs, err := r.LookupIPAddr(ctx, "dual.example.net")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range addrs {
		got = append(got, a.IP.String())
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"192.0.2.1", "2001:db8::1"}) {
		t.Errorf("LookupIPAddr = %v", got)
	}
	if addrs, err := r.LookupIPAddr(ctx, "v4.example.net"); err != nil || len(addrs) != 1 {
		t.Errorf("IPv4 only: %v, %v", addrs, err)
	}
	if _, err := r.LookupIPAddr(ctx, "noaddr.example.net"); !dnsError(t, err).IsNotFound {
		t.Errorf("no address: %v, want not found", err)
	}
	if _, err := r.LookupIPAddr(ctx, "broken.example.net"); !dnsError(t, err).IsTemporary {
		t.Errorf("SERVFAIL: %v, want temporary", err)
	}

	rev, _ := mdns.ReverseAddr("192.0.2.1")
	if _, err := r.LookupAddr(ctx, "192.0.2.1"); !dnsError(t, err).IsNotFound {
		t.Errorf("no PTR at %s: %v, want not found", rev, err)
	}
}
