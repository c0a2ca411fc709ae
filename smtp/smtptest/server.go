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
	"fmt"
	"io"
	"log"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"
)

// Domain is the name the server greets with.
const Domain = "mx.smtptest"

// Server is an SMTP server on 127.0.0.1, or on the addresses WithAddresses
// names. It is safe for concurrent use:
// tests may script it while clients talk to it.
type Server struct {
	cfg   config
	srv   *gosmtp.Server
	addrs []string
	roots *x509.CertPool
	// done is closed when the server closes (the test ends), releasing
	// every Hold.
	done      chan struct{}
	closeOnce sync.Once

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

	// clients are each client address's open connections and recent
	// transactions, for WithMaxConnections and WithMaxRate.
	clients map[string]*client
	// greylist is when each triplet was first seen (WithGreylisting).
	greylist map[triplet]time.Time
	sessions []*Session
}

// Start runs a server on a free port of 127.0.0.1 (or as the options say)
// and stops it when the test ends.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s, err := New(opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// New runs a server as Start does, for a program that is not a test (the
// load generator's simulated receivers, cmd/mailroom-load): the caller
// stops it with Close.
func New(opts ...Option) (*Server, error) {
	s := &Server{
		done:     make(chan struct{}),
		rcpt:     map[string]*rcptScript{},
		holds:    map[string]chan struct{}{},
		clients:  map[string]*client{},
		greylist: map[triplet]time.Time{},
	}
	for _, o := range opts {
		o(&s.cfg)
	}
	if s.cfg.now == nil {
		s.cfg.now = time.Now
	}
	if len(s.cfg.hosts) == 0 {
		s.cfg.hosts = []string{"127.0.0.1"}
	}
	if s.cfg.domain == "" {
		s.cfg.domain = Domain
	}

	srv := gosmtp.NewServer(backend{s})
	srv.Domain = s.cfg.domain
	srv.ReadTimeout = time.Minute
	srv.WriteTimeout = time.Minute
	srv.MaxMessageBytes = s.cfg.maxBytes
	srv.ErrorLog = log.New(io.Discard, "", 0)
	srv.EnableREQUIRETLS = s.cfg.requireTLS
	var tlsConfig *tls.Config
	if s.cfg.startTLS || s.cfg.implicitTLS {
		var cert tls.Certificate
		if s.cfg.cert != nil {
			cert = *s.cfg.cert
		} else {
			var roots *x509.CertPool
			var err error
			if cert, roots, err = selfSigned(); err != nil {
				return nil, err
			}
			s.roots = roots
		}
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

	lns, err := listen(s.cfg.hosts, s.cfg.port)
	if err != nil {
		return nil, err
	}
	for _, ln := range lns {
		s.addrs = append(s.addrs, ln.Addr().String())
		var l net.Listener = countingListener{Listener: ln, s: s}
		if s.cfg.implicitTLS {
			l = tls.NewListener(l, tlsConfig)
		}
		go func() { _ = srv.Serve(l) }()
	}
	return s, nil
}

// listen opens port on every host. With port 0 the first host chooses a
// free port; another process may hold that port on another host, so then
// a few ports are tried.
func listen(hosts []string, port int) ([]net.Listener, error) {
	for attempt := 0; ; attempt++ {
		var lns []net.Listener
		p := port
		var err error
		for _, h := range hosts {
			var ln net.Listener
			ln, err = net.Listen("tcp", net.JoinHostPort(h, strconv.Itoa(p)))
			if err != nil {
				break
			}
			lns = append(lns, ln)
			_, ps, _ := net.SplitHostPort(ln.Addr().String())
			p, _ = strconv.Atoi(ps)
		}
		if err == nil {
			return lns, nil
		}
		for _, ln := range lns {
			_ = ln.Close()
		}
		if port != 0 || attempt == 10 {
			return nil, fmt.Errorf("smtptest: listen: %w", err)
		}
	}
}

// Close stops the server: its listeners, every connection, and every Hold.
// Start's servers close when the test ends.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { close(s.done) })
	err := s.srv.Close()
	if errors.Is(err, gosmtp.ErrServerClosed) {
		return nil
	}
	return err
}

// Addr is the server's host:port (the first, with WithAddresses).
func (s *Server) Addr() string { return s.addrs[0] }

// Addrs are the host:port of every address the server listens on.
func (s *Server) Addrs() []string { return slices.Clone(s.addrs) }

// Port is the server's port, the same on every address, for clients that
// take the host from DNS.
func (s *Server) Port() int {
	_, p, _ := net.SplitHostPort(s.addrs[0])
	n, _ := strconv.Atoi(p)
	return n
}

// RootCAs trusts the server's certificate (with WithSTARTTLS or
// WithImplicitTLS; nil otherwise, and with WithCertificate). It names localhost and 127.0.0.1.
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
