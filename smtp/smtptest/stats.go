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
	// Connections is how many connections were accepted in all.
	Connections int
	// Open is how many are open now, and MaxOpen the most at any moment.
	Open    int
	MaxOpen int
	// Transactions is how many MAIL commands were accepted.
	Transactions int
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
// how many are open.
type countingListener struct {
	net.Listener
	s *Server
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.s.mu.Lock()
	l.s.stats.Connections++
	l.s.stats.Open++
	l.s.stats.MaxOpen = max(l.s.stats.MaxOpen, l.s.stats.Open)
	l.s.mu.Unlock()
	return &countedConn{Conn: c, s: l.s}, nil
}

type countedConn struct {
	net.Conn
	s    *Server
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
	c.once.Do(func() {
		c.s.mu.Lock()
		c.s.stats.Open--
		c.s.mu.Unlock()
	})
	return c.Conn.Close()
}
