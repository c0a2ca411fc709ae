package smtpserver

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	gosmtp "github.com/emersion/go-smtp"
)

// ErrServerClosed is what Serve returns after Shutdown or Close.
var ErrServerClosed = errors.New("smtp server closed")

// Setup is what a listener gives the skeleton when it first serves: its
// Config, and what the listener is.
type Setup struct {
	Config
	// Role names the listener in the log lines the skeleton writes
	// ("inbound connection refused", "submission smtp: …").
	Role string
	// Backend makes the listener's sessions, which embed Session.
	Backend gosmtp.Backend
	// Defaults are the listener's own defaults of MaxBytes and
	// MaxRecipients, required (the other limits default to the shared
	// constants).
	Defaults Limits
	// InclusiveMax takes a message of exactly MaxBytes: go-smtp's reader
	// refuses a message as soon as it has given MaxMessageBytes bytes
	// without reaching the final dot, so it is told one more, and the
	// DATA reader refuses anything beyond MaxBytes. Without it the largest
	// message taken is MaxBytes-1 octets, and go-smtp refuses a declared
	// SIZE beyond MaxBytes itself.
	InclusiveMax bool
	// AllowInsecureAuth lets AUTH reach the session before TLS, for a
	// listener whose session answers it itself.
	AllowInsecureAuth bool
	// RequireTLS advertises REQUIRETLS (RFC 8689 §4.1), over TLS only
	// (go-smtp's EnableREQUIRETLS): the listener's sessions read the
	// MAIL FROM parameter from gosmtp.MailOptions.RequireTLS.
	RequireTLS bool
}

// Server is the lifecycle of a listener: any number of Serve calls share
// its connection caps, its go-smtp server and its sessions' context. The
// zero value is ready; a listener holds one and calls it.
type Server struct {
	mu      sync.Mutex
	started bool
	closing bool
	setup   Setup
	srv     *gosmtp.Server
	conns   *Limiter
	lns     []*Listener
	// ctx is the parent of the handler calls, cancelled when the server
	// is closed.
	ctx    context.Context
	cancel context.CancelFunc
	// data counts the DATA phases in progress, which Shutdown lets end.
	data sync.WaitGroup
}

// Serve accepts connections on ln until Shutdown or Close, which close ln,
// and then returns ErrServerClosed. setup is called at the first Serve
// only. With implicitTLS the connection speaks TLS from the first byte
// (RFC 8314 §3.3), and a connection beyond the caps is closed without a
// word.
func (s *Server) Serve(ln net.Listener, implicitTLS bool, setup func() Setup) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		_ = ln.Close()
		return ErrServerClosed
	}
	if !s.started {
		s.started = true
		s.setup = resolve(setup())
		s.ctx, s.cancel = context.WithCancel(context.Background())
		s.conns = NewLimiter(s.setup.Limits.MaxConnsPerIP, s.setup.Limits.MaxConns)
		s.srv = s.newSMTPServer()
	}
	ll := &Listener{Listener: ln, Limiter: s.conns, Hostname: s.setup.Hostname, OnRefuse: s.refused, Silent: implicitTLS, guard: s.newGuard}
	s.lns = append(s.lns, ll)
	srv := s.srv
	s.mu.Unlock()

	var l net.Listener = ll
	if implicitTLS {
		// The handshake happens on the connection's goroutine, under
		// go-smtp's read and write timeouts, not in Accept.
		l = tlsListener{Listener: ll, config: srv.TLSConfig}
	}
	err := srv.Serve(l)
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing || err == nil {
		// go-smtp returns nil once closed.
		return ErrServerClosed
	}
	return err
}

// Shutdown stops taking connections, lets the messages being received
// finish (their DATA phase and the handler's work on them, so that a
// message taken gets its reply) until ctx ends, and then closes every
// connection: a client between commands is cut, as it would be by a
// restart, and tries again later (RFC 5321 §4.5.4.1). It returns ctx's
// error when messages were cut off.
func (s *Server) Shutdown(ctx context.Context) error {
	lns, started := s.stopListening()
	if !started {
		return nil
	}
	for _, ll := range lns {
		_ = ll.Close()
	}
	drained := make(chan struct{})
	go func() {
		s.data.Wait()
		close(drained)
	}()
	var err error
	select {
	case <-drained:
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.closeAll()
	return err
}

// Close closes the listeners and every connection at once; messages being
// received are lost (never answered 250), and their senders try again.
func (s *Server) Close() error {
	lns, started := s.stopListening()
	if !started {
		return nil
	}
	for _, ll := range lns {
		_ = ll.Close()
	}
	s.closeAll()
	return nil
}

func (s *Server) stopListening() ([]*Listener, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing = true
	return append([]*Listener(nil), s.lns...), s.started
}

func (s *Server) closeAll() {
	s.cancel()
	_ = s.srv.Close()
	s.conns.CloseAll()
}

// beginData registers a DATA phase, unless the server is closing.
func (s *Server) beginData() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.data.Add(1)
	return true
}

// resolve fills in Setup's defaults.
func resolve(st Setup) Setup {
	st.Limits = st.Limits.withDefaults(st.Defaults)
	if st.Hostname == "" {
		st.Hostname = "localhost"
		if h, err := os.Hostname(); err == nil && h != "" {
			st.Hostname = h
		}
	}
	if st.Log == nil {
		st.Log = slog.Default()
	}
	return st
}

func (s *Server) newSMTPServer() *gosmtp.Server {
	st := s.setup
	srv := gosmtp.NewServer(guardedBackend{st.Backend})
	srv.Domain = st.Hostname
	srv.MaxMessageBytes = st.Limits.MaxBytes
	if st.InclusiveMax {
		srv.MaxMessageBytes++
	}
	srv.MaxRecipients = st.Limits.MaxRecipients
	srv.ReadTimeout = st.Limits.ReadTimeout
	srv.WriteTimeout = st.Limits.WriteTimeout
	srv.AllowInsecureAuth = st.AllowInsecureAuth
	srv.EnableREQUIRETLS = st.RequireTLS
	if st.TLS != nil {
		cfg := st.TLS.Clone()
		cfg.NextProtos = nil
		srv.TLSConfig = cfg
	}
	srv.ErrorLog = smtpLog{log: st.Log, prefix: st.Role + " smtp: "}
	return srv
}

// Limits are the server's limits, defaults filled in. Sessions call it;
// it is not to be called before the first Serve.
func (s *Server) Limits() Limits { return s.setup.Limits }

// Hostname is the name the server greets with.
func (s *Server) Hostname() string { return s.setup.Hostname }

// Log is where the server's lines go.
func (s *Server) Log() *slog.Logger { return s.setup.Log }

// Observe reports an outcome to Setup.Observe, when set.
func (s *Server) Observe(outcome string) {
	if s.setup.Observe != nil {
		s.setup.Observe(outcome)
	}
}

// Context is the parent of the handler calls: it ends when the server is
// closed.
func (s *Server) Context() context.Context { return s.ctx }

// HandlerContext bounds one handler call by HandlerTimeout, and ends it
// when the server is closed.
func (s *Server) HandlerContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.ctx, s.setup.Limits.HandlerTimeout)
}

// refused is the listener's report of a connection turned away: counted,
// and logged at Debug only, since a flood would otherwise flood the log.
func (s *Server) refused(remote net.Addr, reason string) {
	s.Observe(OutcomeConnRefused)
	s.Log().Debug(s.setup.Role+" connection refused", "remote", remote.String(), "reason", reason)
}

// newGuard is the guard of a connection accepted (sessionGuard).
func (s *Server) newGuard(raw net.Conn) *sessionGuard {
	remote := raw.RemoteAddr().String()
	return &sessionGuard{
		lim: s.setup.Limits, hostname: s.setup.Hostname, raw: raw, start: time.Now(),
		ended: func(outcome string, junk, errs int, age time.Duration) {
			s.Observe(outcome)
			s.Log().Info(s.setup.Role+" session closed: "+endedText[outcome], "remote", remote,
				"outcome", outcome, "junk", junk, "errors", errs, "age", age.Round(time.Millisecond))
		},
	}
}

// tlsListener is tls.NewListener's, telling each connection's guard that
// it runs TLS from the first byte.
type tlsListener struct {
	net.Listener
	config *tls.Config
}

func (l tlsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := tls.Server(c, l.config)
	if lc, ok := c.(*limitedConn); ok && lc.guard != nil {
		lc.guard.implicitTLS(tc)
	}
	return tc, nil
}
