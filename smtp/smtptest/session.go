package smtptest

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
)

// backend makes a session per client greeting.
type backend struct{ s *Server }

// NewSession is called at the client's first EHLO or HELO, its name
// known.
func (b backend) NewSession(c *gosmtp.Conn) (gosmtp.Session, error) {
	rec := &Session{Client: c.Conn().RemoteAddr().String(), Helo: c.Hostname()}
	b.s.mu.Lock()
	b.s.sessions = append(b.s.sessions, rec)
	b.s.mu.Unlock()
	return &session{s: b.s, conn: c, ip: clientIP(c.Conn().RemoteAddr()), rec: rec}, nil
}

// session is one client's state: the transaction under way and whether it
// logged in.
type session struct {
	s      *Server
	conn   *gosmtp.Conn
	ip     string
	rec    *Session
	authed bool
	from   string
	rcpts  []string
	// requireTLS says the transaction's MAIL FROM carried REQUIRETLS.
	requireTLS bool
}

var errAuthRequired = &gosmtp.SMTPError{
	Code:         530,
	EnhancedCode: gosmtp.EnhancedCode{5, 7, 0},
	Message:      "Authentication required", // RFC 4954 §6
}

func (x *session) AuthMechanisms() []string {
	if x.s.cfg.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (x *session) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain || x.s.cfg.user == "" {
		return nil, gosmtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(identity, user, pass string) error {
		if (identity == "" || identity == user) && user == x.s.cfg.user && pass == x.s.cfg.pass {
			x.authed = true
			return nil
		}
		return gosmtp.ErrAuthFailed
	}), nil
}

func (x *session) Mail(from string, opts *gosmtp.MailOptions) error {
	x.s.mu.Lock()
	x.s.stats.MailCommands++
	x.s.mu.Unlock()
	if x.s.cfg.user != "" && !x.authed {
		return errAuthRequired
	}
	x.from = ""
	x.rcpts = nil
	x.s.mu.Lock()
	x.rec.Transaction = false // the client moved past its last one
	x.s.mu.Unlock()
	if err := x.s.beginTransaction(x.ip); err != nil {
		return err
	}
	x.s.mu.Lock()
	x.rec.Transaction = true
	x.s.mu.Unlock()
	x.from = from
	x.requireTLS = opts != nil && opts.RequireTLS
	return nil
}

func (x *session) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	if r := x.s.rcptReply(to); r != nil && r.code/100 != 2 {
		return r.smtpError()
	}
	if err := x.s.greylisted(x.ip, x.from, to); err != nil {
		return err
	}
	x.rcpts = append(x.rcpts, to)
	return nil
}

func (x *session) Data(r io.Reader) error {
	s := x.s
	s.mu.Lock()
	s.stats.DataCommands++
	drop := s.drops > 0
	if drop {
		s.drops--
	}
	s.mu.Unlock()
	if drop {
		// Take a little of the message, then vanish.
		_, _ = io.CopyN(io.Discard, r, 1)
		_ = x.conn.Conn().Close()
		return errors.New("connection dropped by the test")
	}

	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	x.hold()
	s.mu.Lock()
	slow := s.dataDelay(x.rcpts) + s.latency()
	s.mu.Unlock()
	if slow > 0 {
		select {
		case <-time.After(slow):
		case <-s.done:
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data != nil && s.data.code/100 != 2 {
		return s.data.smtpError()
	}
	_, tls := x.conn.TLSConnectionState()
	s.msgs = append(s.msgs, Received{
		MailFrom:   x.from,
		Rcpts:      append([]string(nil), x.rcpts...),
		Data:       data,
		TLS:        tls,
		RequireTLS: x.requireTLS,
		Helo:       x.conn.Hostname(),
		Client:     x.rec.Client,
	})
	s.queued++
	s.stats.Messages++
	x.rec.Messages++
	if s.data != nil {
		return s.data.smtpError()
	}
	return &gosmtp.SMTPError{
		Code:         250,
		EnhancedCode: gosmtp.EnhancedCode{2, 0, 0},
		Message:      fmt.Sprintf("OK: queued as T%04d", s.queued),
	}
}

// hold waits while any recipient of the transaction is held.
func (x *session) hold() {
	s := x.s
	for {
		var ch chan struct{}
		s.mu.Lock()
		for _, rcpt := range x.rcpts {
			if c := s.holds[strings.ToLower(rcpt)]; c != nil {
				ch = c
				break
			}
		}
		if ch != nil {
			s.stats.Held++
		}
		s.mu.Unlock()
		if ch == nil {
			return
		}
		select {
		case <-ch:
		case <-s.done:
		}
		s.mu.Lock()
		s.stats.Held--
		s.mu.Unlock()
		select {
		case <-s.done:
			return
		default:
		}
	}
}

func (x *session) Reset() {
	x.from = ""
	x.requireTLS = false
	x.rcpts = nil
}

func (x *session) Logout() error {
	x.s.mu.Lock()
	x.rec.Ended = time.Now()
	x.s.mu.Unlock()
	return nil
}
