package smtptest

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom/poll"
)

// Stats counts what the server saw, so that tests can check how a client
// used it: connection reuse, concurrency caps.
type Stats struct {
	// Connections is how many connections were accepted and served in
	// all (those refused by WithMaxConnections are not).
	Connections int
	// Open is how many are open now, and MaxOpen the most at any moment.
	Open    int
	MaxOpen int
	// MaxAttempted is the most connections one client address tried to
	// have open at once: those open and, when it was refused, the one it
	// was refused. Above WithMaxConnections' cap, the client pushed past
	// it.
	MaxAttempted int
	// Refused is how many connections WithMaxConnections refused, and
	// FirstRefusal when the first was (zero before).
	Refused      int
	FirstRefusal time.Time
	// Transactions is how many MAIL commands were accepted.
	Transactions int
	// MailCommands is how many MAIL commands arrived, accepted or not,
	// and DataCommands how many DATA commands go-smtp took (those after
	// at least one accepted recipient): zero for both says no mail
	// transaction was ever begun, and no message data sent.
	MailCommands int
	DataCommands int
	// Throttled is how many MAIL commands WithMaxRate refused, and
	// Greylisted how many RCPT commands WithGreylisting did.
	Throttled  int
	Greylisted int
	// Messages is how many messages were accepted (Messages' length).
	Messages int
	// Held is how many transactions are waiting in DATA on a Hold.
	Held int
	// TLSHandshakes is how many TLS handshakes clients began (a
	// ClientHello arrived), after STARTTLS or on connecting with
	// WithImplicitTLS, whether they succeeded or not.
	TLSHandshakes int
}

// Stats is a snapshot of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// ResetPeaks starts MaxOpen and MaxAttempted again from the connections
// open now, so that a test can see the peaks from some point on (after
// the client has heard a first 421).
func (s *Server) ResetPeaks() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.MaxOpen = s.stats.Open
	s.stats.MaxAttempted = 0
	for _, cl := range s.clients {
		s.stats.MaxAttempted = max(s.stats.MaxAttempted, cl.open)
	}
}

// WaitStats polls until cond holds of the counters, failing the test at the
// deadline.
func (s *Server) WaitStats(tb testing.TB, timeout time.Duration, cond func(Stats) bool) Stats {
	tb.Helper()
	var st Stats
	if !poll.Within(timeout, func() bool { st = s.Stats(); return cond(st) }) {
		tb.Fatalf("smtptest: stats never met the condition within %v; last %+v", timeout, st)
	}
	return st
}

// countingListener counts accepted connections and, through countedConn,
// how many are open; it refuses those beyond WithMaxConnections and holds
// those of WithDead, so that the SMTP server sees neither.
type countingListener struct {
	net.Listener
	s *Server
}

func (l countingListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := clientIP(c.RemoteAddr())
		l.s.mu.Lock()
		ok := l.s.admit(ip)
		l.s.mu.Unlock()
		if !ok {
			go refuse(c)
			continue
		}
		cc := &countedConn{Conn: c, s: l.s, ip: ip}
		if l.s.cfg.dead {
			go l.s.hang(cc)
			continue
		}
		return cc, nil
	}
}

type countedConn struct {
	net.Conn
	s    *Server
	ip   string
	once sync.Once
}

// pipeliningLine is how go-smtp's server announces PIPELINING: one line,
// written on its own, never the last of the EHLO reply. It is where
// WithoutPipelining and WithRefusedSTARTTLS edit that reply; under TLS the
// lines are written encrypted and never match.
var (
	pipeliningLine = []byte("250-PIPELINING\r\n")
	startTLSLine   = []byte("250-STARTTLS\r\n")
)

func (c *countedConn) Write(b []byte) (int, error) {
	cfg := c.s.cfg
	if (!cfg.noPipeline && !cfg.refuseTLS) || !bytes.Equal(b, pipeliningLine) {
		return c.Conn.Write(b)
	}
	var lines []byte
	if !cfg.noPipeline {
		lines = append(lines, pipeliningLine...)
	}
	if cfg.refuseTLS {
		lines = append(lines, startTLSLine...)
	}
	if _, err := c.Conn.Write(lines); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.s.release(c.ip) })
	return c.Conn.Close()
}
