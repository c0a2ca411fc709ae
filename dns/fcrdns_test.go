package dns_test

import (
	"context"
	"net/netip"
	"slices"
	"testing"

	mdns "github.com/miekg/dns"

	"github.com/mailroom/mailroom/dns/dnstest"
)

func TestCheckFCrDNS(t *testing.T) {
	srv := dnstest.Start(t)
	r := newResolver(srv)
	// Confirmed both ways.
	srv.SetPTR("127.0.0.10", "Out1.Example.NET.")
	srv.SetA("out1.example.net", "127.0.0.10")
	// No PTR at all: 127.0.0.11.
	// A PTR whose name resolves elsewhere.
	srv.SetPTR("127.0.0.12", "out2.example.net")
	srv.SetA("out2.example.net", "127.0.0.99")
	// A PTR whose name does not resolve at all.
	srv.SetPTR("127.0.0.13", "gone.example.net")
	// A confirmed PTR naming another host than the EHLO name.
	srv.SetPTR("127.0.0.14", "other.example.net")
	srv.SetA("other.example.net", "127.0.0.14")
	// IPv6, confirmed by AAAA.
	srv.SetPTR("2001:db8::25", "out6.example.net")
	srv.SetAAAA("out6.example.net", "2001:db8::25")
	// Two PTR names, the second one confirmed.
	srv.SetPTR("127.0.0.15", "stale.example.net")
	srv.SetPTR("127.0.0.15", "out5.example.net")
	srv.SetA("out5.example.net", "127.0.0.15")

	for _, tc := range []struct {
		ip, want, problem string
	}{
		{"127.0.0.10", "", ""},
		{"127.0.0.10", "out1.example.net", ""},
		{"::ffff:127.0.0.10", "OUT1.example.net.", ""},
		{"127.0.0.11", "", "127.0.0.11 has no PTR record"},
		{"127.0.0.11", "out1.example.net", "127.0.0.11 has no PTR record"},
		{"127.0.0.12", "", "PTR of 127.0.0.12 names out2.example.net, which does not resolve to 127.0.0.12"},
		{"127.0.0.12", "out2.example.net", "PTR of 127.0.0.12 names out2.example.net, which does not resolve to 127.0.0.12"},
		{"127.0.0.13", "", "PTR of 127.0.0.13 names gone.example.net, which does not resolve to 127.0.0.13"},
		{"127.0.0.14", "", ""},
		{"127.0.0.14", "out4.example.net", "PTR of 127.0.0.14 names other.example.net, not out4.example.net"},
		{"2001:db8::25", "out6.example.net", ""},
		{"127.0.0.15", "", ""},
		{"127.0.0.15", "out5.example.net", ""},
		{"127.0.0.15", "stale.example.net", "PTR of 127.0.0.15 names stale.example.net, which does not resolve to 127.0.0.15"},
	} {
		problem, err := r.CheckFCrDNS(context.Background(), netip.MustParseAddr(tc.ip), tc.want)
		if err != nil || problem != tc.problem {
			t.Errorf("CheckFCrDNS(%s, %q) = %q, %v; want %q", tc.ip, tc.want, problem, err, tc.problem)
		}
	}
}

// A DNS failure leaves the question open: an error, never a problem that
// is not there.
func TestCheckFCrDNSFailureIsAnError(t *testing.T) {
	srv := dnstest.Start(t)
	r := newResolver(srv)
	rev, _ := mdns.ReverseAddr("127.0.0.10")
	srv.Fail(rev, mdns.RcodeServerFailure)
	if problem, err := r.CheckFCrDNS(context.Background(), netip.MustParseAddr("127.0.0.10"), ""); err == nil || problem != "" {
		t.Errorf("PTR lookup failing: got %q, %v; want an error", problem, err)
	}

	srv.SetPTR("127.0.0.11", "out.example.net")
	srv.Fail("out.example.net", mdns.RcodeServerFailure)
	if problem, err := r.CheckFCrDNS(context.Background(), netip.MustParseAddr("127.0.0.11"), ""); err == nil || problem != "" {
		t.Errorf("address lookup failing: got %q, %v; want an error", problem, err)
	}
}

func TestCheckNameFCrDNS(t *testing.T) {
	srv := dnstest.Start(t)
	r := newResolver(srv)
	srv.SetA("mail.example.net", "127.0.0.10")
	srv.SetA("mail.example.net", "127.0.0.11")
	srv.SetPTR("127.0.0.10", "mail.example.net")
	ctx := context.Background()

	problems, err := r.CheckNameFCrDNS(ctx, "mail.example.net")
	if err != nil || !slices.Equal(problems, []string{"127.0.0.11 has no PTR record"}) {
		t.Errorf("CheckNameFCrDNS = %q, %v", problems, err)
	}
	srv.SetPTR("127.0.0.11", "mail.example.net")
	if problems, err := r.CheckNameFCrDNS(ctx, "mail.example.net."); err != nil || len(problems) != 0 {
		t.Errorf("both confirmed: CheckNameFCrDNS = %q, %v", problems, err)
	}
	problems, err = r.CheckNameFCrDNS(ctx, "nowhere.example.net")
	if err != nil || !slices.Equal(problems, []string{"nowhere.example.net has no address record"}) {
		t.Errorf("no address: CheckNameFCrDNS = %q, %v", problems, err)
	}
}
