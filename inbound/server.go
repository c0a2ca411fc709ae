package inbound

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/smtpserver"
)

// Defaults of the Server's own limits, taken when a field is zero; the
// others are smtpserver's.
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
)

// ErrServerClosed is what Serve returns after Shutdown or Close.
var ErrServerClosed = smtpserver.ErrServerClosed

// Server is the return-path MX: an SMTP server that takes mail only for
// the addresses its Handler accepts, reads each message as a report and
// hands it to the Handler. It is never a relay and offers no AUTH: it is an
// MX, to which senders deliver without logging in (docs/api.md "Mail coming
// back"). Its lifecycle, connection caps and DATA reader are smtpserver's.
//
// Set the fields before Serve; they are not to be changed afterwards.
type Server struct {
	// Handler says which recipients are taken and processes the reports.
	// Required.
	Handler Handler
	// Receiver, when set, takes mail for receiving domains (docs/api.md
	// "Receiving mail"): a recipient the Handler does not take is taken
	// when the Receiver accepts it, and a message with such recipients
	// is handed to it whole. Set MaxBytes to --receive-max-size with it.
	Receiver mailroom.MailReceiver
	// Parse reads a message into a report; ParseReport by default. It gets
	// the message as a stream, bounded by MaxBytes: it should not need to
	// hold all of it.
	Parse func(io.Reader) (*mailroom.Report, error)
	// Config: TLS is optional (STARTTLS is offered when it is set); Log
	// gets a line per message and per refused recipient; MaxBytes
	// (DefaultMaxBytes) is the largest message taken, a message of exactly
	// MaxBytes included; MaxRecipients defaults to DefaultMaxRecipients.
	smtpserver.Config

	base   smtpserver.Server
	served atomic.Bool
}

// Serve accepts connections on ln until Shutdown or Close, which close ln,
// and then returns ErrServerClosed. It may be called once.
func (s *Server) Serve(ln net.Listener) error {
	if s.Handler == nil {
		return errors.New("inbound: Server.Handler is not set")
	}
	if s.served.Swap(true) {
		return errors.New("inbound: Serve called twice")
	}
	return s.base.Serve(ln, false, s.setup)
}

// Shutdown stops taking connections, lets the messages being received
// finish (their DATA phase and the Handler's processing) until ctx ends,
// and then closes every connection: a client between commands is cut, as
// it would be by a restart, and delivers again later (RFC 5321 §4.5.4.1).
// It returns ctx's error when messages were cut off.
func (s *Server) Shutdown(ctx context.Context) error { return s.base.Shutdown(ctx) }

// Close closes the listener and every connection at once; messages being
// received are lost, and their senders try again.
func (s *Server) Close() error { return s.base.Close() }

func (s *Server) setup() smtpserver.Setup {
	return smtpserver.Setup{
		Config:   s.Config,
		Role:     "inbound",
		Backend:  backend{s},
		Defaults: smtpserver.Limits{MaxBytes: DefaultMaxBytes, MaxRecipients: DefaultMaxRecipients},
		// Mail refuses a declared SIZE beyond MaxBytes, and EHLO
		// advertises SIZE one higher.
		InclusiveMax: true,
		// An MX takes mail from anyone without AUTH: the session
		// implements no AuthSession, so AUTH is neither advertised nor
		// accepted.
		AllowInsecureAuth: false,
	}
}

func (s *Server) parse(r io.Reader) (*mailroom.Report, error) {
	if s.Parse != nil {
		return s.Parse(r)
	}
	return ParseReport(r)
}
