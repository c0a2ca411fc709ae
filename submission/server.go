package submission

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom/smtplimit"
)

// Defaults of the Server's limits, taken when a field is zero.
const (
	// DefaultMaxBytes is the largest message taken: the body limit of the
	// HTTP API (docs/api.md "Limits", 16 MiB), so that a message refused
	// on one way in is refused on the other. EHLO advertises it with SIZE
	// (RFC 1870).
	DefaultMaxBytes = 16 << 20
	// DefaultMaxRecipients is the contract's recipient limit of a send
	// (docs/api.md "Limits"): the 51st RCPT is answered 452 4.5.3
	// (RFC 5321 §4.5.3.1.10) and EHLO advertises LIMITS RCPTMAX=50
	// (RFC 9422).
	DefaultMaxRecipients = 50
	// DefaultMaxConnsPerIP is how many connections one client address (an
	// IPv4 address, or an IPv6 /64) may hold at once, over both ports.
	DefaultMaxConnsPerIP = 20
	// DefaultMaxConns is how many connections the server holds at once.
	DefaultMaxConns = 1000
	// DefaultReadTimeout is how long the server waits for a command, and
	// for more of a message while DATA is under way: RFC 5321 §4.5.3.2.7
	// asks at least 5 minutes of a server awaiting the next command.
	DefaultReadTimeout = 5 * time.Minute
	// DefaultWriteTimeout is how long a reply may take to leave.
	DefaultWriteTimeout = time.Minute
	// DefaultDataTimeout bounds the whole DATA phase, however steadily the
	// client trickles it: a client waits 10 minutes for the reply to the
	// final dot (RFC 5321 §4.5.3.2.6), so no honest one takes longer.
	DefaultDataTimeout = 10 * time.Minute
	// DefaultHandlerTimeout bounds each call to the Handler (for Submit:
	// from the end of the message), so that a storage that hangs holds a
	// connection no longer than that.
	DefaultHandlerTimeout = 30 * time.Second
	// DefaultAuthFailureBurst and DefaultAuthFailureInterval rate-limit
	// failed AUTH attempts per client address: 5 at once, then one each
	// 10 seconds (see authLimiter).
	DefaultAuthFailureBurst    = 5
	DefaultAuthFailureInterval = 10 * time.Second
)

// ErrServerClosed is what Serve and ServeTLS return after Shutdown or
// Close.
var ErrServerClosed = errors.New("submission: server closed")

// Server is SMTP submission (RFC 6409): clients log in with an API key of
// scope send and hand over messages, which go through the Handler to the
// same accept path as POST /v1/send (docs/api.md "SMTP submission").
//
// One Server serves any number of listeners: Serve for the submission port
// (587, STARTTLS, RFC 3207) and ServeTLS for the submissions port (465,
// implicit TLS, RFC 8314 §3.3). They share the connection caps and the
// limit on failed logins.
//
// Set the fields before the first Serve; they are not to be changed
// afterwards.
type Server struct {
	// Handler checks keys and takes messages. Required.
	Handler Handler
	// TLS is offered through STARTTLS on Serve's listeners and spoken from
	// the first byte on ServeTLS's. Required: AUTH is accepted only under
	// TLS, since its password is an API key. Its NextProtos are ignored:
	// SMTP has no ALPN protocol, and a server insisting on "h2" would fail
	// a client that offers another.
	TLS *tls.Config
	// Hostname is the name the server greets with (RFC 5321 §4.3.1); the
	// machine's hostname by default.
	Hostname string
	// Log receives a line per message and per login (refused connections
	// at Debug); slog.Default() when nil. Passwords (API keys) and message
	// contents are never logged: a key is named by its id.
	Log *slog.Logger
	// Observe, when set, is called once for each outcome (Outcomes) of a
	// connection, login, transaction or message; Metrics makes one.
	Observe func(outcome string)
	// Now is the clock of the login limiter; time.Now by default.
	Now func() time.Time

	// MaxBytes is the message size limit (DefaultMaxBytes), advertised
	// with SIZE. A larger message is answered 552 5.3.4 (RFC 1870 §6.1)
	// and the connection goes on. go-smtp's reader stops at the limit
	// itself, so the largest message taken is MaxBytes-1 octets.
	MaxBytes int64
	// MaxRecipients bounds RCPT per transaction (DefaultMaxRecipients).
	MaxRecipients int
	// MaxConnsPerIP and MaxConns bound the connections held at once, per
	// client address and overall, over all listeners (DefaultMaxConnsPerIP,
	// DefaultMaxConns). A connection beyond either is refused at once: on
	// a STARTTLS port with 421, on an implicit-TLS port by closing it (a
	// TLS client could not read a clear-text reply).
	MaxConnsPerIP int
	MaxConns      int
	// ReadTimeout, WriteTimeout, DataTimeout and HandlerTimeout: see the
	// Default constants.
	ReadTimeout    time.Duration
	WriteTimeout   time.Duration
	DataTimeout    time.Duration
	HandlerTimeout time.Duration
	// AuthFailureBurst and AuthFailureInterval limit failed logins per
	// client address (DefaultAuthFailureBurst, DefaultAuthFailureInterval).
	AuthFailureBurst    int
	AuthFailureInterval time.Duration

	mu      sync.Mutex
	started bool
	closing bool
	srv     *gosmtp.Server
	conns   *smtplimit.Limiter
	auth    *authLimiter
	lns     []*smtplimit.Listener
	// ctx is the parent of the Handler calls, cancelled when the server
	// is closed.
	ctx    context.Context
	cancel context.CancelFunc
	// data counts the DATA phases in progress, which Shutdown lets end.
	data sync.WaitGroup
}

// Serve accepts connections on ln, the submission port (587): clear text
// until the client sends STARTTLS (RFC 3207), which it must before AUTH.
// It returns ErrServerClosed after Shutdown or Close, which close ln.
func (s *Server) Serve(ln net.Listener) error {
	return s.serve(ln, false)
}

// ServeTLS accepts connections on ln, the submissions port (465), speaking
// TLS from the first byte (RFC 8314 §3.3). It returns ErrServerClosed
// after Shutdown or Close, which close ln.
func (s *Server) ServeTLS(ln net.Listener) error {
	return s.serve(ln, true)
}

func (s *Server) serve(ln net.Listener, implicitTLS bool) error {
	if s.Handler == nil {
		_ = ln.Close()
		return errors.New("submission: Server.Handler is not set")
	}
	if s.TLS == nil {
		_ = ln.Close()
		return errors.New("submission: Server.TLS is not set (AUTH is only taken under TLS)")
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		_ = ln.Close()
		return ErrServerClosed
	}
	if !s.started {
		s.started = true
		s.ctx, s.cancel = context.WithCancel(context.Background())
		s.conns = smtplimit.NewLimiter(s.maxConnsPerIP(), s.maxConns())
		s.auth = newAuthLimiter(s.authFailureBurst(), s.authFailureInterval(), s.now)
		s.srv = s.newSMTPServer()
	}
	ll := &smtplimit.Listener{Listener: ln, Limiter: s.conns, Hostname: s.hostname(), OnRefuse: s.refused, Silent: implicitTLS}
	s.lns = append(s.lns, ll)
	srv := s.srv
	s.mu.Unlock()

	var l net.Listener = ll
	if implicitTLS {
		// The handshake happens on the connection's goroutine, under
		// go-smtp's read and write timeouts, not in Accept.
		l = tls.NewListener(ll, srv.TLSConfig)
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
// finish (their DATA phase and Submit, so that a message made durable gets
// its 250) until ctx ends, and then closes every connection: a client
// between commands is cut, as it would be by a restart, and submits again
// later. It returns ctx's error when messages were cut off.
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
// received are lost (never answered 250), and their clients try again.
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

func (s *Server) stopListening() ([]*smtplimit.Listener, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing = true
	return append([]*smtplimit.Listener(nil), s.lns...), s.started
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

func (s *Server) newSMTPServer() *gosmtp.Server {
	srv := gosmtp.NewServer(backend{s})
	srv.Domain = s.hostname()
	// go-smtp advertises MaxMessageBytes with SIZE and its data reader
	// fails as soon as it has given that many bytes; Mail refuses a
	// declared SIZE beyond it (RFC 1870 §6.1).
	srv.MaxMessageBytes = s.maxBytes()
	srv.MaxRecipients = s.maxRecipients()
	srv.ReadTimeout = s.readTimeout()
	srv.WriteTimeout = s.writeTimeout()
	// go-smtp would answer AUTH in clear text 523 5.7.10 itself; the
	// contract (RFC 4954 §6 and RFC 5248's 5.7.11) wants 538, which the
	// session gives. The session offers no mechanism before TLS, so AUTH
	// is not advertised then (RFC 4954 §4: a client must not send
	// credentials in the clear, RFC 8314 §3.3).
	srv.AllowInsecureAuth = true
	cfg := s.TLS.Clone()
	cfg.NextProtos = nil
	srv.TLSConfig = cfg
	srv.ErrorLog = smtpLog{s.log()}
	return srv
}

func (s *Server) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

func (s *Server) observe(outcome string) {
	if s.Observe != nil {
		s.Observe(outcome)
	}
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Server) hostname() string {
	if s.Hostname != "" {
		return s.Hostname
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}

func positive[T int | int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

func (s *Server) maxBytes() int64 {
	return positive(s.MaxBytes, DefaultMaxBytes)
}

func (s *Server) maxRecipients() int {
	return positive(s.MaxRecipients, DefaultMaxRecipients)
}

func (s *Server) maxConnsPerIP() int {
	return positive(s.MaxConnsPerIP, DefaultMaxConnsPerIP)
}

func (s *Server) maxConns() int {
	return positive(s.MaxConns, DefaultMaxConns)
}

func (s *Server) readTimeout() time.Duration {
	return positive(s.ReadTimeout, DefaultReadTimeout)
}

func (s *Server) writeTimeout() time.Duration {
	return positive(s.WriteTimeout, DefaultWriteTimeout)
}

func (s *Server) dataTimeout() time.Duration {
	return positive(s.DataTimeout, DefaultDataTimeout)
}

func (s *Server) handlerTimeout() time.Duration {
	return positive(s.HandlerTimeout, DefaultHandlerTimeout)
}

func (s *Server) authFailureBurst() int {
	return positive(s.AuthFailureBurst, DefaultAuthFailureBurst)
}

func (s *Server) authFailureInterval() time.Duration {
	return positive(s.AuthFailureInterval, DefaultAuthFailureInterval)
}

// handlerContext bounds one Handler call, and ends it when the server is
// closed.
func (s *Server) handlerContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.ctx, s.handlerTimeout())
}

// refused is the listener's report of a connection turned away: counted,
// and logged at Debug only, since a flood would otherwise flood the log.
func (s *Server) refused(remote net.Addr, reason string) {
	s.observe(OutcomeConnRefused)
	s.log().Debug("submission connection refused", "remote", remote.String(), "reason", reason)
}

// smtpLog takes go-smtp's own error lines: a panic in a session is a bug
// and logged as an error; the rest (clients that reset the connection,
// failed handshakes) is the ordinary noise of a port on the internet.
type smtpLog struct{ log *slog.Logger }

func (l smtpLog) Printf(format string, v ...any) { l.line(fmt.Sprintf(format, v...)) }
func (l smtpLog) Println(v ...any)               { l.line(fmt.Sprintln(v...)) }

func (l smtpLog) line(msg string) {
	msg = strings.TrimSpace(msg)
	switch {
	case strings.Contains(msg, "panic"):
		l.log.Error("submission smtp: " + msg)
	case strings.HasPrefix(msg, "accept error"):
		l.log.Warn("submission smtp: " + msg)
	default:
		l.log.Debug("submission smtp: " + msg)
	}
}
