package netguard_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/netguard"
)

func TestCheckAddr(t *testing.T) {
	for _, a := range []string{
		"127.0.0.1", "127.1.2.3", "::1", // loopback
		"10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", "fc00::1", "fd12:3456::1", // private
		"169.254.169.254", "169.254.0.1", "fe80::1", // link-local, cloud metadata
		"100.64.0.1", "100.127.255.255", // CGNAT
		"224.0.0.1", "239.255.255.250", "ff02::1", "ff05::2", // multicast
		"0.0.0.0", "::", "0.1.2.3", // unspecified, this network
		"255.255.255.255", "240.0.0.1", // reserved, broadcast
		"192.0.2.1", "198.51.100.7", "203.0.113.9", "2001:db8::1", "198.18.0.1", "192.0.0.8", // documentation, benchmarking, IETF
		"3fff::1", "2001:2::1", "2001:10::1", "2001:20::1", "5f00::1", // IPv6 documentation, benchmarking, ORCHID(v2), SRv6 SIDs
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:100.64.0.1", "::ffff:192.0.2.1", // IPv4-mapped
		"::127.0.0.1", "64:ff9b::a00:1", "2002:a00:1::1", "100::1", // IPv4-compatible, NAT64, 6to4, discard
		"fec0::1", // deprecated site-local
	} {
		if err := netguard.CheckAddr(netip.MustParseAddr(a)); !errors.Is(err, netguard.ErrRefused) {
			t.Errorf("CheckAddr(%s) = %v, want refused", a, err)
		}
	}
	for _, a := range []string{"8.8.8.8", "1.1.1.1", "93.184.216.34", "100.63.255.255", "100.128.0.1", "172.32.0.1",
		"2606:4700:4700::1111", "2a00:1450:4001:82b::200e", "::ffff:8.8.8.8"} {
		if err := netguard.CheckAddr(netip.MustParseAddr(a)); err != nil {
			t.Errorf("CheckAddr(%s) = %v, want allowed", a, err)
		}
	}
}

// The dialer's hook refuses the address it is about to connect to, so a
// connection to a listener on loopback never opens.
func TestControlRefusesTheDialledAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	d := net.Dialer{Control: netguard.Control, Timeout: 2 * time.Second}
	if c, err := d.Dial("tcp", ln.Addr().String()); !errors.Is(err, netguard.ErrRefused) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("dial %s: %v, want refused", ln.Addr(), err)
	}
	// The same dialer without the hook connects: the refusal was the hook's.
	c, err := (&net.Dialer{Timeout: 2 * time.Second}).Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	<-accepted
}

func TestCheckURL(t *testing.T) {
	world := dnstest.Start(t)
	world.SetA("public.example", "93.184.216.34")
	world.SetA("sneaky.example", "127.0.0.1")
	world.SetA("metadata.example", "169.254.169.254")
	world.SetA("mixed.example", "93.184.216.34")
	world.SetAAAA("mixed.example", "fd00::1")
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, world.Addr())
	}}
	ctx := context.Background()
	for _, tc := range []struct{ url, want string }{
		{"https://public.example/hooks", ""},
		{"https://93.184.216.34:8443/hooks", ""},
		{"http://public.example/hooks", "https"},
		{"ftp://public.example/", "https"},
		{"https://user:pw@public.example/", "user name"},
		{"https:///hooks", "no host"},
		{"https://public.example/#x", "fragment"},
		{"not a url at all\x7f", "not a URL"},
		{"https://sneaky.example/", "127.0.0.1, a loopback address"},
		{"https://metadata.example/latest", "169.254.169.254, a link-local address"},
		{"https://mixed.example/", "fd00::1, a private address"},
		{"https://127.0.0.1/", "loopback"},
		{"https://[::ffff:10.1.2.3]/", "private"},
		{"https://[2001:0:a00:1::80ff:fffe]/", "Teredo"},
		{"https://[::ffff:0:10.1.2.3]/", "SIIT"},
		{"https://nowhere.example/", "does not resolve"},
		{"https://public.example:99999/", "not a number from 1 to 65535"},
		{"https://public.example:0/", "not a number from 1 to 65535"},
	} {
		err := netguard.CheckURL(ctx, r, tc.url, false)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckURL(%q) = %v, want allowed", tc.url, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckURL(%q) = %v, want it to say %q", tc.url, err, tc.want)
		}
	}
	// The operator's allowance takes http and private addresses, not a
	// port no connection can use.
	if err := netguard.CheckURL(ctx, r, "http://127.0.0.1:65536/", true); err == nil {
		t.Error("CheckURL with port 65536 and allowPrivate = nil, want refused")
	}
	for _, u := range []string{"http://sneaky.example:8080/hooks", "https://127.0.0.1/"} {
		if err := netguard.CheckURL(ctx, r, u, true); err != nil {
			t.Errorf("CheckURL(%q, allowPrivate) = %v", u, err)
		}
	}
}

// Every IPv6 form that carries an IPv4 address inside it is refused, so
// that no such form can lead a webhook to an address the IPv4 check would
// refuse: each is given with a private or loopback IPv4 inside, and with a
// public one (refused too: the whole range is refused, not only the
// forms whose inner address is private).
func TestCheckAddrRefusesIPv6EmbeddingIPv4(t *testing.T) {
	for _, tc := range []struct{ form, addr string }{
		{"IPv4-mapped (RFC 4291 §2.5.5.2), 127.0.0.1", "::ffff:127.0.0.1"},
		{"IPv4-mapped, 10.0.0.1", "::ffff:a00:1"},
		{"SIIT IPv4-translated (RFC 6145), 127.0.0.1", "::ffff:0:7f00:1"},
		{"SIIT IPv4-translated, 169.254.169.254", "::ffff:0:a9fe:a9fe"},
		{"SIIT IPv4-translated, 8.8.8.8", "::ffff:0:808:808"},
		{"Teredo (RFC 4380), client 127.0.0.1 behind server 10.0.0.1", "2001:0:a00:1:0:0:80ff:fffe"},
		{"Teredo, client 10.0.0.1 behind server 65.54.227.120", "2001:0:4136:e378:8000:63bf:f5ff:fffe"},
		{"Teredo, client 192.0.2.45 behind server 65.54.227.120 (RFC 4380's example)", "2001:0:4136:e378:8000:63bf:3fff:fdd2"},
		{"NAT64 well-known prefix (RFC 6052 §2.1), 127.0.0.1", "64:ff9b::7f00:1"},
		{"NAT64 well-known prefix, 8.8.8.8", "64:ff9b::808:808"},
		{"NAT64 local-use prefix (RFC 8215), 10.0.0.1", "64:ff9b:1:a00:0:100::"},
		{"IPv4-compatible (RFC 4291 §2.5.5.1, deprecated), 127.0.0.1", "::7f00:1"},
		{"IPv4-compatible, 8.8.8.8", "::808:808"},
		{"6to4 (RFC 3056), 10.0.0.1", "2002:a00:1::1"},
		{"6to4, 127.0.0.1", "2002:7f00:1::1"},
	} {
		if err := netguard.CheckAddr(netip.MustParseAddr(tc.addr)); !errors.Is(err, netguard.ErrRefused) {
			t.Errorf("%s: CheckAddr(%s) = %v, want refused", tc.form, tc.addr, err)
		}
	}
}
