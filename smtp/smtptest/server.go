// Package smtptest runs a real SMTP server on loopback for tests: the
// receiving end of a delivery, built on github.com/emersion/go-smtp's server.
// It records what it receives, can be scripted to answer a recipient with
// any reply, to refuse or drop the data, or to hold a transaction open, and
// counts connections and transactions so that tests can see how a client
// used it.
package smtptest

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"
)

// Domain is the name the server greets with.
const Domain = "mx.smtptest"

// Server is an SMTP server on 127.0.0.1. It is safe for concurrent use:
// tests may script it while clients talk to it.
type Server struct {
	tb    testing.TB
	cfg   config
	srv   *gosmtp.Server
	addr  string
	roots *x509.CertPool
	// done is closed when the test ends, releasing every Hold.
	done chan struct{}

	mu    sync.Mutex
	msgs  []Received
	rcpt  map[string]*rcptScript
	data  *scripted
	drops int
	holds map[string]chan struct{}
	slow  time.Duration
	// slowFor delays transactions with a recipient at a domain.
	slowFor map[string]time.Duration
	stats   Stats
	queued  int
}

// Start runs a server on a free port of 127.0.0.1 and stops it when the test
// ends.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s := &Server{
		tb:    tb,
		done:  make(chan struct{}),
		rcpt:  map[string]*rcptScript{},
		holds: map[string]chan struct{}{},
	}
	for _, o := range opts {
		o(&s.cfg)
	}

	srv := gosmtp.NewServer(backend{s})
	srv.Domain = Domain
	srv.ReadTimeout = time.Minute
	srv.WriteTimeout = time.Minute
	srv.MaxMessageBytes = s.cfg.maxBytes
	srv.ErrorLog = log.New(io.Discard, "", 0)
	var tlsConfig *tls.Config
	if s.cfg.startTLS || s.cfg.implicitTLS {
		cert, roots := selfSigned(tb)
		s.roots = roots
		tlsConfig = &tls.Config{
			Certificates:       []tls.Certificate{cert},
			GetConfigForClient: s.clientHello,
		}
	}
	if s.cfg.startTLS {
		srv.TLSConfig = tlsConfig
	}
	// AUTH only under TLS when there is TLS, as real servers do; in clear
	// otherwise, or it could not be tested without.
	srv.AllowInsecureAuth = tlsConfig == nil
	s.srv = srv

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("smtptest: listen: %v", err)
	}
	s.addr = ln.Addr().String()
	var l net.Listener = countingListener{Listener: ln, s: s}
	if s.cfg.implicitTLS {
		l = tls.NewListener(l, tlsConfig)
	}
	go func() { _ = srv.Serve(l) }()
	tb.Cleanup(func() {
		close(s.done)
		_ = srv.Close()
	})
	return s
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.addr }

// Port is the server's port, for clients that take the host from DNS.
func (s *Server) Port() int {
	_, p, _ := net.SplitHostPort(s.addr)
	n, _ := strconv.Atoi(p)
	return n
}

// RootCAs trusts the server's certificate (with WithSTARTTLS or
// WithImplicitTLS; nil otherwise). It names localhost and 127.0.0.1.
func (s *Server) RootCAs() *x509.CertPool { return s.roots }

// errFailingTLS aborts the handshakes of WithFailingTLS.
var errFailingTLS = errors.New("smtptest: TLS handshake failed on purpose")

// clientHello counts a handshake begun, and with WithFailingTLS aborts it:
// crypto/tls answers the error with an internal_error alert (RFC 8446
// §6.2), which the client sees as a failed handshake.
func (s *Server) clientHello(*tls.ClientHelloInfo) (*tls.Config, error) {
	s.mu.Lock()
	s.stats.TLSHandshakes++
	s.mu.Unlock()
	if s.cfg.failTLS {
		return nil, errFailingTLS
	}
	return nil, nil
}
