package dnstest_test

import (
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/mailroom/mailroom/dns/dnstest"
)

// ask sends one query to the server with a plain miekg/dns client.
func ask(t *testing.T, srv *dnstest.Server, network, name string, qtype uint16) *mdns.Msg {
	t.Helper()
	q := new(mdns.Msg)
	q.SetQuestion(mdns.Fqdn(name), qtype)
	c := &mdns.Client{Net: network, Timeout: 2 * time.Second}
	resp, _, err := c.Exchange(q, srv.Addr())
	if err != nil {
		t.Fatalf("%s query %s: %v", network, name, err)
	}
	return resp
}

func TestServerAnswersOverUDPAndTCP(t *testing.T) {
	srv := dnstest.Start(t)
	srv.SetTXT("Example.COM.", "hello world")
	for _, network := range []string{"udp", "tcp"} {
		resp := ask(t, srv, network, "example.com", mdns.TypeTXT)
		if resp.Rcode != mdns.RcodeSuccess || !resp.Authoritative || len(resp.Answer) != 1 {
			t.Fatalf("%s: answer %v", network, resp)
		}
		if got := resp.Answer[0].(*mdns.TXT).Txt; len(got) != 1 || got[0] != "hello world" {
			t.Errorf("%s: TXT = %q", network, got)
		}
	}
	// Names are case-insensitive in queries too.
	if resp := ask(t, srv, "udp", "EXAMPLE.com.", mdns.TypeTXT); len(resp.Answer) != 1 {
		t.Errorf("upper-case query: %v", resp)
	}
}

func TestServerSplitsLongTXTValues(t *testing.T) {
	srv := dnstest.Start(t)
	long := strings.Repeat("x", 600)
	srv.SetTXT("a.example", long, "short")
	resp := ask(t, srv, "tcp", "a.example", mdns.TypeTXT)
	if len(resp.Answer) != 2 {
		t.Fatalf("want 2 records, got %v", resp.Answer)
	}
	got := resp.Answer[0].(*mdns.TXT).Txt
	if len(got) != 3 || len(got[0]) != 255 || len(got[1]) != 255 || len(got[2]) != 90 || strings.Join(got, "") != long {
		t.Errorf("long value published as %d strings of lengths %v", len(got), lens(got))
	}

	srv.SetTXTStrings("a.example", "v=DKIM1; ", "p=abc")
	resp = ask(t, srv, "udp", "a.example", mdns.TypeTXT)
	if len(resp.Answer) != 1 {
		t.Fatalf("SetTXTStrings should replace the records: %v", resp.Answer)
	}
	if got := resp.Answer[0].(*mdns.TXT).Txt; len(got) != 2 || got[0] != "v=DKIM1; " || got[1] != "p=abc" {
		t.Errorf("strings = %q", got)
	}
}

func lens(ss []string) []int {
	var out []int
	for _, s := range ss {
		out = append(out, len(s))
	}
	return out
}

func TestServerNXDOMAINAndNODATA(t *testing.T) {
	srv := dnstest.Start(t)
	srv.SetMX("bounces.example.com", 10, "mail.example.net")
	if resp := ask(t, srv, "udp", "nothing.example.com", mdns.TypeTXT); resp.Rcode != mdns.RcodeNameError {
		t.Errorf("unknown name: rcode %s, want NXDOMAIN", mdns.RcodeToString[resp.Rcode])
	}
	resp := ask(t, srv, "udp", "bounces.example.com", mdns.TypeTXT)
	if resp.Rcode != mdns.RcodeSuccess || len(resp.Answer) != 0 {
		t.Errorf("known name, other type: %v, want NOERROR with no answer", resp)
	}
	// example.com exists as the parent of bounces.example.com (RFC 8020).
	if resp := ask(t, srv, "udp", "example.com", mdns.TypeA); resp.Rcode != mdns.RcodeSuccess {
		t.Errorf("empty non-terminal: rcode %s, want NOERROR", mdns.RcodeToString[resp.Rcode])
	}
	resp = ask(t, srv, "udp", "bounces.example.com", mdns.TypeMX)
	if len(resp.Answer) != 1 || resp.Answer[0].(*mdns.MX).Mx != "mail.example.net." {
		t.Errorf("MX answer %v", resp.Answer)
	}

	srv.Remove("BOUNCES.example.com.")
	if resp := ask(t, srv, "udp", "bounces.example.com", mdns.TypeMX); resp.Rcode != mdns.RcodeNameError {
		t.Errorf("removed name: rcode %s, want NXDOMAIN", mdns.RcodeToString[resp.Rcode])
	}
}

func TestServerAddresses(t *testing.T) {
	srv := dnstest.Start(t)
	srv.SetA("mail.example.net", "192.0.2.1")
	srv.SetA("mail.example.net", "192.0.2.2")
	srv.SetAAAA("mail.example.net", "2001:db8::1")
	if resp := ask(t, srv, "udp", "mail.example.net", mdns.TypeA); len(resp.Answer) != 2 {
		t.Errorf("A answer %v, want both addresses", resp.Answer)
	}
	resp := ask(t, srv, "udp", "mail.example.net", mdns.TypeAAAA)
	if len(resp.Answer) != 1 || resp.Answer[0].(*mdns.AAAA).AAAA.String() != "2001:db8::1" {
		t.Errorf("AAAA answer %v", resp.Answer)
	}
}

func TestServerFailAndDrop(t *testing.T) {
	srv := dnstest.Start(t)
	srv.SetTXT("broken.example", "v=spf1 -all")
	srv.Fail("broken.example", mdns.RcodeServerFailure)
	if resp := ask(t, srv, "udp", "broken.example", mdns.TypeTXT); resp.Rcode != mdns.RcodeServerFailure || len(resp.Answer) != 0 {
		t.Errorf("failing name: %v, want SERVFAIL", resp)
	}
	srv.Fail("refused.example", mdns.RcodeRefused)
	if resp := ask(t, srv, "tcp", "refused.example", mdns.TypeMX); resp.Rcode != mdns.RcodeRefused {
		t.Errorf("refused name: rcode %s", mdns.RcodeToString[resp.Rcode])
	}

	srv.Drop("silent.example")
	for _, network := range []string{"udp", "tcp"} {
		q := new(mdns.Msg)
		q.SetQuestion("silent.example.", mdns.TypeTXT)
		c := &mdns.Client{Net: network, Timeout: 200 * time.Millisecond}
		if resp, _, err := c.Exchange(q, srv.Addr()); err == nil {
			t.Errorf("%s: dropped name answered %v", network, resp)
		}
	}
}

func TestServerPTR(t *testing.T) {
	srv := dnstest.Start(t)
	srv.SetPTR("192.0.2.7", "out1.example.net")
	srv.SetPTR("2001:db8::7", "out6.example.net")
	resp := ask(t, srv, "udp", "7.2.0.192.in-addr.arpa", mdns.TypePTR)
	if len(resp.Answer) != 1 || resp.Answer[0].(*mdns.PTR).Ptr != "out1.example.net." {
		t.Errorf("IPv4 PTR answer %v", resp.Answer)
	}
	rev, _ := mdns.ReverseAddr("2001:db8::7")
	resp = ask(t, srv, "udp", rev, mdns.TypePTR)
	if len(resp.Answer) != 1 || resp.Answer[0].(*mdns.PTR).Ptr != "out6.example.net." {
		t.Errorf("IPv6 PTR answer %v", resp.Answer)
	}
}

func TestNewServesUntilClose(t *testing.T) {
	s, err := dnstest.New()
	if err != nil {
		t.Fatal(err)
	}
	s.SetA("mx1.site.test", "127.0.0.2")
	m := new(mdns.Msg)
	m.SetQuestion("mx1.site.test.", mdns.TypeA)
	in, err := mdns.Exchange(m, s.Addr())
	if err != nil || len(in.Answer) != 1 {
		t.Fatalf("answer %v, %v", in, err)
	}
	s.Close()
	if _, err := mdns.Exchange(m, s.Addr()); err == nil {
		t.Fatal("answered after Close")
	}
}

// TestServerRecordsTheNamesAsked: every question is kept, answered or not,
// so that a test can say a name was never looked up.
func TestServerRecordsTheNamesAsked(t *testing.T) {
	srv := dnstest.Start(t)
	srv.SetA("mail.example.net", "192.0.2.1")
	ask(t, srv, "udp", "Mail.Example.Net", mdns.TypeA)
	ask(t, srv, "tcp", "nothing.invalid", mdns.TypeMX)
	if got := strings.Join(srv.Queried(), " "); got != "mail.example.net. nothing.invalid." {
		t.Errorf("Queried() = %q", got)
	}
}
