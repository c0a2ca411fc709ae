package inbound

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/smtplimit"
)

// Defaults of the Server's limits, taken when a field is zero.
const (
	// DefaultMaxBytes is the largest message accepted (docs/api.md "Mail
	// coming back": 10 MiB). Bounces and complaints are a few kilobytes;
	// those that return the whole original message are rarely more than
	// the largest message the service sends.
	DefaultMaxBytes = 10 << 20
	// DefaultMaxRecipients bounds RCPT commands per transaction. A report
	// is addressed to one bounce address; a hundred is RFC 5321
	// §4.5.3.1.8's minimum buffer.
	DefaultMaxRecipients = 100
	// DefaultMaxConnsPerIP is how many connections one client address (an
	// IPv4 address, or an IPv6 /64) may hold at once.
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
	// client trickles it: a client waits 10 minutes for our reply to the
	// final dot (RFC 5321 §4.5.3.2.6), so no honest one takes longer.
	DefaultDataTimeout = 10 * time.Minute
	// DefaultHandlerTimeout bounds each call to the Handler, so that a
	// storage that hangs holds a connection no longer than that.
	DefaultHandlerTimeout = 30 * time.Second
)

// ErrServerClosed is what Serve returns after Shutdown or Close.
var ErrServerClosed = errors.New("inbound: server closed")

// Server is the return-path MX: an SMTP server that takes mail only for
// the addresses its Handler accepts, reads each message as a report and
// hands it to the Handler. It is never a relay and offers no AUTH: it is an
// MX, to which senders deliver without logging in (docs/api.md "Mail coming
// back").
//
// Set the fields before Serve; they are not to be changed afterwards.
type Server struct {
	// Handler says which recipients are taken and processes the reports.
	// Required.
	Handler Handler
	// TLS, when set, is offered through STARTTLS (RFC 3207). Its
	// NextProtos are ignored: SMTP has no ALPN protocol, and a server
	// insisting on "h2" would fail a client that offers another.
	TLS *tls.Config
	// Hostname is the name the server greets with (RFC 5321 §4.3.1); the
	// machine's hostname by default.
	Hostname string
	// Log receives a line per message and per refused recipient (refused
	// connections at Debug); slog.Default() when nil. Message contents are
	// never logged.
	Log *slog.Logger
	// Parse reads a message into a report; ParseReport by default. It gets
	// the message as a stream, bounded by MaxBytes: it should not need to
	// hold all of it.
	Parse func(io.Reader) (*mailroom.Report, error)
	// Observe, when set, is called once for each outcome (Outcomes) of a
	// connection, recipient or message; Metrics makes one.
	Observe func(outcome string)

	// MaxBytes is the largest message taken (DefaultMaxBytes); a larger
	// one is answered 552 (RFC 1870 §6.1) and the connection goes on.
	MaxBytes int64
	// MaxRecipients bounds RCPT per transaction (DefaultMaxRecipients).
	MaxRecipients int
	// MaxConnsPerIP and MaxConns bound the connections held at once, per
	// client address and overall (DefaultMaxConnsPerIP, DefaultMaxConns).
	// A connection beyond either is answered 421 and closed at once.
	MaxConnsPerIP int
	MaxConns      int
	// ReadTimeout, WriteTimeout, DataTimeout and HandlerTimeout: see the
	// Default constants.
	ReadTimeout    time.Duration
	WriteTimeout   time.Duration
	DataTimeout    time.Duration
	HandlerTimeout time.Duration

	mu      sync.Mutex
	started bool
	closing bool
	srv     *gosmtp.Server
	ln      *smtplimit.Listener
	conns   *smtplimit.Limiter
	// ctx is the parent of the Handler calls, cancelled when the server
	// is closed.
	ctx    context.Context
	cancel context.CancelFunc
	// data counts the DATA phases in progress, which Shutdown lets end.
	data sync.WaitGroup
}

// Serve accepts connections on ln until Shutdown or Close, which close ln,
// and then returns ErrServerClosed. It may be called once.
func (s *Server) Serve(ln net.Listener) error {
	if s.Handler == nil {
		return errors.New("inbound: Server.Handler is not set")
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		_ = ln.Close()
		return ErrServerClosed
	}
	if s.started {
		s.mu.Unlock()
		return errors.New("inbound: Serve called twice")
	}
	s.started = true
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.conns = smtplimit.NewLimiter(s.maxConnsPerIP(), s.maxConns())
	s.ln = &smtplimit.Listener{Listener: ln, Limiter: s.conns, Hostname: s.hostname(), OnRefuse: s.refused}
	s.srv = s.newSMTPServer()
	srv, ll := s.srv, s.ln
	s.mu.Unlock()

	err := srv.Serve(ll)
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing {
		return ErrServerClosed
	}
	return err
}

// Shutdown stops taking connections, lets the messages being received
// finish (their DATA phase and the Handler's processing) until ctx ends,
// and then closes every connection: a client between commands is cut, as
// it would be by a restart, and delivers again later (RFC 5321 §4.5.4.1).
// It returns ctx's error when messages were cut off.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	ll := s.ln
	s.mu.Unlock()
	if ll == nil {
		return nil
	}
	_ = ll.Close()

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

// Close closes the listener and every connection at once; messages being
// received are lost, and their senders try again.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closing = true
	ll := s.ln
	s.mu.Unlock()
	if ll == nil {
		return nil
	}
	_ = ll.Close()
	s.closeAll()
	return nil
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
	// go-smtp's data reader refuses a message as soon as it has given
	// MaxMessageBytes bytes without reaching the final dot, so a message
	// of exactly that size would be refused: one more byte lets a message
	// of MaxBytes through, and Mail and the session's own count refuse
	// anything beyond. EHLO advertises SIZE one higher than MaxBytes.
	srv.MaxMessageBytes = s.maxBytes() + 1
	srv.MaxRecipients = s.maxRecipients()
	srv.ReadTimeout = s.readTimeout()
	srv.WriteTimeout = s.writeTimeout()
	// An MX takes mail from anyone without AUTH: the session implements no
	// AuthSession, so AUTH is neither advertised nor accepted.
	srv.AllowInsecureAuth = false
	if s.TLS != nil {
		cfg := s.TLS.Clone()
		cfg.NextProtos = nil
		srv.TLSConfig = cfg
	}
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

func (s *Server) parse(r io.Reader) (*mailroom.Report, error) {
	if s.Parse != nil {
		return s.Parse(r)
	}
	return ParseReport(r)
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

func (s *Server) maxBytes() int64 {
	if s.MaxBytes > 0 {
		return s.MaxBytes
	}
	return DefaultMaxBytes
}

func (s *Server) maxRecipients() int {
	if s.MaxRecipients > 0 {
		return s.MaxRecipients
	}
	return DefaultMaxRecipients
}

func (s *Server) maxConnsPerIP() int {
	if s.MaxConnsPerIP > 0 {
		return s.MaxConnsPerIP
	}
	return DefaultMaxConnsPerIP
}

func (s *Server) maxConns() int {
	if s.MaxConns > 0 {
		return s.MaxConns
	}
	return DefaultMaxConns
}

func (s *Server) readTimeout() time.Duration {
	if s.ReadTimeout > 0 {
		return s.ReadTimeout
	}
	return DefaultReadTimeout
}

func (s *Server) writeTimeout() time.Duration {
	if s.WriteTimeout > 0 {
		return s.WriteTimeout
	}
	return DefaultWriteTimeout
}

func (s *Server) dataTimeout() time.Duration {
	if s.DataTimeout > 0 {
		return s.DataTimeout
	}
	return DefaultDataTimeout
}

func (s *Server) handlerTimeout() time.Duration {
	if s.HandlerTimeout > 0 {
		return s.HandlerTimeout
	}
	return DefaultHandlerTimeout
}

// refused is the listener's report of a connection turned away: counted,
// and logged at Debug only, since a flood would otherwise flood the log.
func (s *Server) refused(remote net.Addr, reason string) {
	s.observe(OutcomeConnRefused)
	s.log().Debug("inbound connection refused", "remote", remote.String(), "reason", reason)
}

// smtpLog takes go-smtp's own error lines: a panic in a session is a bug
// and logged as an error; the rest (clients that reset the connection,
// failed handshakes) is the ordinary noise of an MX on the internet.
type smtpLog struct{ log *slog.Logger }

func (l smtpLog) Printf(format string, v ...any) { l.line(fmt.Sprintf(format, v...)) }
func (l smtpLog) Println(v ...any)               { l.line(fmt.Sprintln(v...)) }

func (l smtpLog) line(msg string) {
	msg = strings.TrimSpace(msg)
	switch {
	case strings.Contains(msg, "panic"):
		l.log.Error("inbound smtp: " + msg)
	case strings.HasPrefix(msg, "accept error"):
		l.log.Warn("inbound smtp: " + msg)
	default:
		l.log.Debug("inbound smtp: " + msg)
	}
}
