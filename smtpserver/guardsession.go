package smtpserver

import (
	"io"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
)

// guardedBackend makes the listener's sessions and wraps each, so that its
// connection's guard sees every call go-smtp makes to it (sessionGuard):
// the listeners' sessions need not know of the limits.
type guardedBackend struct{ gosmtp.Backend }

func (b guardedBackend) NewSession(c *gosmtp.Conn) (gosmtp.Session, error) {
	sess, err := b.Backend.NewSession(c)
	g := guardOf(c.Conn())
	if err != nil || g == nil {
		return sess, err
	}
	g.sessionStarted(c)
	gs := &guardedSession{Session: sess, g: g}
	// go-smtp offers AUTH only to a session that implements it.
	if as, ok := sess.(gosmtp.AuthSession); ok {
		return &guardedAuthSession{guardedSession: gs, auth: as}, nil
	}
	return gs, nil
}

// guardedSession passes each call on and tells the guard what came of it.
// Reset is not an act: RSET, and EHLO again, are junk, and the Reset
// after a message comes within the DATA command, which acted.
type guardedSession struct {
	gosmtp.Session
	g *sessionGuard
}

func (s *guardedSession) Logout() error {
	s.g.act()
	return s.Session.Logout()
}

func (s *guardedSession) Mail(from string, opts *gosmtp.MailOptions) error {
	err := s.Session.Mail(from, opts)
	s.g.result(err)
	return err
}

func (s *guardedSession) Rcpt(to string, opts *gosmtp.RcptOptions) error {
	err := s.Session.Rcpt(to, opts)
	s.g.result(err)
	return err
}

// Data is given a pipe with BDAT (RFC 3030), whose chunks come with
// commands of their own, read while the message is received.
func (s *guardedSession) Data(r io.Reader) error {
	_, bdat := r.(*io.PipeReader)
	s.g.beginMessage(bdat)
	err := s.Session.Data(r)
	s.g.endMessage(err)
	return err
}

// guardedAuthSession is guardedSession for a listener that takes AUTH
// (RFC 4954): a failed login is an error.
type guardedAuthSession struct {
	*guardedSession
	auth gosmtp.AuthSession
}

func (s *guardedAuthSession) AuthMechanisms() []string { return s.auth.AuthMechanisms() }

func (s *guardedAuthSession) Auth(mech string) (sasl.Server, error) {
	srv, err := s.auth.Auth(mech)
	s.g.result(err)
	if err != nil {
		return nil, err
	}
	return guardedSASL{srv, s.g}, nil
}

// guardedSASL sees each step of a login: the lines a client sends in
// answer to a challenge are read as commands are.
type guardedSASL struct {
	sasl.Server
	g *sessionGuard
}

func (s guardedSASL) Next(response []byte) ([]byte, bool, error) {
	challenge, done, err := s.Server.Next(response)
	s.g.result(err)
	return challenge, done, err
}
