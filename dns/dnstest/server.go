// Package dnstest runs a real DNS server on loopback for tests: an
// authoritative server for whatever names a test sets, changeable while it
// runs, answering over UDP and TCP on one port the way a customer's DNS
// provider would. Tests point a resolver at Addr and publish, change, break
// or silence records as the scenario needs.
package dnstest

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	mdns "github.com/miekg/dns"
)

// ttl of every answer; nothing caches in tests, but clients expect one.
const ttl = 60

// maxStringLength is the longest character-string a TXT record can hold
// (RFC 1035 §3.3: one length octet).
const maxStringLength = 255

// Server is an authoritative DNS server on 127.0.0.1. It is safe for
// concurrent use: tests may change records while queries are answered.
type Server struct {
	// fatalf reports a record a test cannot have meant: the test's
	// Fatalf, or a panic outside a test (New), where records are fixed by
	// the program and a bad one is its bug.
	fatalf  func(format string, args ...any)
	addr    string
	servers []*mdns.Server

	mu    sync.Mutex
	names map[string]*entry
	// queried is every name asked, in order, lower-cased and fully
	// qualified (Queried).
	queried []string
}

// entry holds everything known at one name.
type entry struct {
	txt   [][]string // each record's character-strings, raw bytes
	mx    []*mdns.MX
	a     []net.IP
	aaaa  []net.IP
	ptr   []string // host names, fully qualified
	rcode int      // when not success, every query of the name gets it
	drop  bool     // never answer
}

// Start runs a server on a free port of 127.0.0.1, over UDP and TCP, and
// stops it when the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := New()
	if err != nil {
		tb.Fatal(err)
	}
	s.fatalf = tb.Fatalf
	tb.Cleanup(s.Close)
	return s
}

// New runs a server as Start does, for a program that is not a test (the
// load generator's simulated internet, cmd/mailroom-load): the caller
// stops it with Close. A record that cannot be set (SetA of something
// other than an IPv4 address) panics, being the program's bug.
func New() (*Server, error) {
	s := &Server{names: map[string]*entry{}, fatalf: func(format string, args ...any) {
		panic(fmt.Sprintf(format, args...))
	}}
	handler := mdns.HandlerFunc(s.serve)

	// The UDP port is chosen first; TCP on the same number may be taken by
	// another process, so try a few ports.
	var pc net.PacketConn
	var ln net.Listener
	for attempt := 0; ; attempt++ {
		var err error
		pc, err = net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("dnstest: listen udp: %w", err)
		}
		ln, err = net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			break
		}
		pc.Close()
		if attempt == 10 {
			return nil, fmt.Errorf("dnstest: listen tcp: %w", err)
		}
	}
	s.addr = pc.LocalAddr().String()

	s.servers = []*mdns.Server{
		{PacketConn: pc, Handler: handler},
		{Listener: ln, Handler: handler},
	}
	for i, srv := range s.servers {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		errc := make(chan error, 1)
		go func() { errc <- srv.ActivateAndServe() }()
		select {
		case <-started:
		case err := <-errc:
			for _, up := range s.servers[:i] {
				_ = up.Shutdown()
			}
			if i == 0 {
				ln.Close()
			}
			return nil, fmt.Errorf("dnstest: serve: %w", err)
		}
	}
	return s, nil
}

// Close stops the server. Start's servers close when the test ends.
func (s *Server) Close() {
	for _, srv := range s.servers {
		_ = srv.Shutdown()
	}
}

// Queried is every name the server was asked about so far, in order,
// lower-cased and fully qualified ("mx.example.net."): a test that must
// see no lookup of a name checks it here.
func (s *Server) Queried() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queried...)
}

// Addr is the host:port of the server, for UDP and TCP alike.
func (s *Server) Addr() string { return s.addr }

// SetTXT replaces the TXT records at name with one record per value. A value
// longer than 255 bytes is split into 255-byte character-strings, as DNS
// providers do (RFC 7208 §3.3, RFC 6376 §3.6.2.2).
func (s *Server) SetTXT(name string, values ...string) {
	records := make([][]string, 0, len(values))
	for _, v := range values {
		records = append(records, splitString(v))
	}
	s.with(name, func(e *entry) { e.txt = records })
}

// SetTXTStrings replaces the TXT records at name with one record made of
// exactly these character-strings, each at most 255 bytes.
func (s *Server) SetTXTStrings(name string, parts ...string) {
	for _, str := range parts {
		if len(str) > maxStringLength {
			s.fatalf("dnstest: a TXT character-string holds at most %d bytes, got %d", maxStringLength, len(str))
		}
	}
	record := append([]string(nil), parts...)
	s.with(name, func(e *entry) { e.txt = [][]string{record} })
}

// SetMX adds an MX record at name. The host "." makes a null MX (RFC 7505).
func (s *Server) SetMX(name string, pref uint16, host string) {
	mx := &mdns.MX{Preference: pref, Mx: mdns.Fqdn(host)}
	s.with(name, func(e *entry) { e.mx = append(e.mx, mx) })
}

// SetA adds an IPv4 address record at name.
func (s *Server) SetA(name, ip string) {
	addr := net.ParseIP(ip).To4()
	if addr == nil {
		s.fatalf("dnstest: SetA(%q): %q is not an IPv4 address", name, ip)
	}
	s.with(name, func(e *entry) { e.a = append(e.a, addr) })
}

// SetAAAA adds an IPv6 address record at name.
func (s *Server) SetAAAA(name, ip string) {
	addr := net.ParseIP(ip)
	if addr == nil || addr.To4() != nil {
		s.fatalf("dnstest: SetAAAA(%q): %q is not an IPv6 address", name, ip)
	}
	s.with(name, func(e *entry) { e.aaaa = append(e.aaaa, addr) })
}

// SetPTR adds a PTR record naming host at the reverse name of ip
// (in-addr.arpa or ip6.arpa, RFC 1035 §3.5, RFC 3596 §2.5).
func (s *Server) SetPTR(ip, host string) {
	rev, err := mdns.ReverseAddr(ip)
	if err != nil {
		s.fatalf("dnstest: SetPTR(%q): %v", ip, err)
	}
	s.with(rev, func(e *entry) { e.ptr = append(e.ptr, mdns.Fqdn(host)) })
}

// Remove forgets name: its records of every type, and any Fail or Drop.
func (s *Server) Remove(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.names, key(name))
}

// Fail makes every query of name answer rcode (such as mdns.RcodeServerFailure)
// with no records, until Remove.
func (s *Server) Fail(name string, rcode int) {
	s.with(name, func(e *entry) { e.rcode = rcode })
}

// Drop makes the server ignore every query of name, so that clients time
// out, until Remove.
func (s *Server) Drop(name string) {
	s.with(name, func(e *entry) { e.drop = true })
}

func (s *Server) with(name string, f func(*entry)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(name)
	e := s.names[k]
	if e == nil {
		e = &entry{}
		s.names[k] = e
	}
	f(e)
}

// key is the map key of a name: DNS names compare case-insensitively
// (RFC 4343 §3), and the root's dot is implied.
func key(name string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(name)), ".")
}

// serve answers one query from the records set at the moment it arrives.
func (s *Server) serve(w mdns.ResponseWriter, req *mdns.Msg) {
	if len(req.Question) != 1 {
		m := new(mdns.Msg)
		m.SetRcode(req, mdns.RcodeFormatError)
		_ = w.WriteMsg(m)
		return
	}
	q := req.Question[0]
	s.mu.Lock()
	s.queried = append(s.queried, strings.ToLower(q.Name))
	s.mu.Unlock()
	m := new(mdns.Msg)
	m.SetReply(req)
	m.Authoritative = true

	rcode, answers, drop := s.answer(q)
	if drop {
		return
	}
	m.Rcode = rcode
	m.Answer = answers

	// Answer EDNS with EDNS (RFC 6891 §7), and over UDP keep within the
	// client's buffer, setting TC so that it retries over TCP (RFC 7766 §5).
	size := mdns.MinMsgSize
	if opt := req.IsEdns0(); opt != nil {
		if opt.UDPSize() > uint16(size) {
			size = int(opt.UDPSize())
		}
		m.SetEdns0(uint16(size), false)
	}
	if _, udp := w.LocalAddr().(*net.UDPAddr); udp {
		m.Truncate(size)
	}
	// A client that went away is no concern of the test; and logging
	// here could outlive the test.
	_ = w.WriteMsg(m)
}

// answer looks up the records of one question. A name with no records of the
// type is NODATA (NOERROR and no answer), as is a name that exists only as
// the parent of others (RFC 8020 §2); any other name is NXDOMAIN.
func (s *Server) answer(q mdns.Question) (rcode int, answers []mdns.RR, drop bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(q.Name)
	e := s.names[k]
	if e == nil {
		for name := range s.names {
			if strings.HasSuffix(name, "."+k) {
				return mdns.RcodeSuccess, nil, false
			}
		}
		return mdns.RcodeNameError, nil, false
	}
	if e.drop {
		return 0, nil, true
	}
	if e.rcode != mdns.RcodeSuccess {
		return e.rcode, nil, false
	}
	hdr := func(t uint16) mdns.RR_Header {
		return mdns.RR_Header{Name: q.Name, Rrtype: t, Class: mdns.ClassINET, Ttl: ttl}
	}
	switch q.Qtype {
	case mdns.TypeTXT:
		for _, strs := range e.txt {
			answers = append(answers, &mdns.TXT{Hdr: hdr(mdns.TypeTXT), Txt: escapeAll(strs)})
		}
	case mdns.TypeMX:
		for _, mx := range e.mx {
			answers = append(answers, &mdns.MX{Hdr: hdr(mdns.TypeMX), Preference: mx.Preference, Mx: mx.Mx})
		}
	case mdns.TypeA:
		for _, ip := range e.a {
			answers = append(answers, &mdns.A{Hdr: hdr(mdns.TypeA), A: ip})
		}
	case mdns.TypeAAAA:
		for _, ip := range e.aaaa {
			answers = append(answers, &mdns.AAAA{Hdr: hdr(mdns.TypeAAAA), AAAA: ip})
		}
	case mdns.TypePTR:
		for _, host := range e.ptr {
			answers = append(answers, &mdns.PTR{Hdr: hdr(mdns.TypePTR), Ptr: host})
		}
	}
	return mdns.RcodeSuccess, answers, false
}

// splitString cuts a TXT value into character-strings of at most 255 bytes.
func splitString(v string) []string {
	if v == "" {
		return []string{""}
	}
	var parts []string
	for len(v) > maxStringLength {
		parts = append(parts, v[:maxStringLength])
		v = v[maxStringLength:]
	}
	return append(parts, v)
}

// escapeAll turns raw character-strings into miekg/dns's presentation form,
// in which a backslash starts an escape (RFC 1035 §5.1), so that the bytes on
// the wire are exactly the bytes that were set.
func escapeAll(strs []string) []string {
	out := make([]string, len(strs))
	for i, str := range strs {
		var b strings.Builder
		for j := 0; j < len(str); j++ {
			c := str[j]
			if c == '\\' || c < ' ' || c > '~' {
				fmt.Fprintf(&b, "\\%03d", c)
				continue
			}
			b.WriteByte(c)
		}
		out[i] = b.String()
	}
	return out
}
