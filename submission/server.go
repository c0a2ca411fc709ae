package submission

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/mailroom/mailroom/membudget"
	"github.com/mailroom/mailroom/smtpserver"
)

// Defaults of the Server's own limits, taken when a field is zero; the
// others are smtpserver's.
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
	// DefaultAuthFailureBurst and DefaultAuthFailureInterval count
	// failed AUTH attempts per client address: 5 are free, then the
	// budget grows back by one each 10 seconds (see authLimiter).
	DefaultAuthFailureBurst    = 5
	DefaultAuthFailureInterval = 10 * time.Second
	// DefaultAuthFirstDelay and DefaultAuthMaxDelay: an AUTH from an
	// address past its budget is answered after DefaultAuthFirstDelay,
	// doubling with each further failure up to DefaultAuthMaxDelay
	// (docs/api.md "SMTP submission"), and still checked.
	DefaultAuthFirstDelay = 500 * time.Millisecond
	DefaultAuthMaxDelay   = 5 * time.Second
)

// ErrServerClosed is what Serve and ServeTLS return after Shutdown or
// Close.
var ErrServerClosed = smtpserver.ErrServerClosed

// Server is SMTP submission (RFC 6409): clients log in with an API key of
// scope send and hand over messages, which go through the Handler to the
// same accept path as POST /v1/send (docs/api.md "SMTP submission"). Its
// lifecycle, connection caps and DATA reader are smtpserver's.
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
	// Now is the clock of the login limiter; time.Now by default.
	Now func() time.Time

	// Config: TLS is required: it is offered through STARTTLS on Serve's
	// listeners and spoken from the first byte on ServeTLS's, and AUTH is
	// accepted only under it, since its password is an API key. Log gets
	// a line per message and per login; passwords (API keys) are never
	// logged, a key is named by its id. MaxBytes (DefaultMaxBytes) is
	// advertised with SIZE; go-smtp's reader stops at the limit itself, so
	// the largest message taken is MaxBytes-1 octets. MaxRecipients
	// defaults to DefaultMaxRecipients.
	smtpserver.Config
	// AuthFailureBurst and AuthFailureInterval count failed logins per
	// client address (DefaultAuthFailureBurst, DefaultAuthFailureInterval);
	// past them each AUTH waits from AuthFirstDelay up to AuthMaxDelay
	// (DefaultAuthFirstDelay, DefaultAuthMaxDelay) before it is checked.
	AuthFailureBurst    int
	AuthFailureInterval time.Duration
	AuthFirstDelay      time.Duration
	AuthMaxDelay        time.Duration
	// Sleep waits d or until ctx ends, whichever is first, returning ctx's
	// error then: the wait of a delayed login. Tests set it to see the
	// delays; the default is a timer. ctx ends when the server shuts down.
	Sleep func(ctx context.Context, d time.Duration) error
	// Memory is the node's memory budget for requests in flight, the one
	// the HTTPS API takes from (docs/api.md "Limits", "Memory"): a
	// message reserves MessageExpansion bytes per byte, under its
	// account's share, at MAIL for a declared SIZE and otherwise as it
	// arrives, and gives them back once answered. A message it has no
	// room for is answered 452 4.3.1 and the session goes on. Nil: no
	// budget. MemoryRefusals counts the refusals (membudget.Metrics).
	Memory         *membudget.Budget
	MemoryRefusals *membudget.Refusals

	base smtpserver.Server
	// auth is made by setup, which the skeleton calls once.
	auth *authLimiter
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
	return s.base.Serve(ln, implicitTLS, s.setup)
}

// Shutdown stops taking connections, lets the messages being received
// finish (their DATA phase and Submit, so that a message made durable gets
// its 250) until ctx ends, and then closes every connection: a client
// between commands is cut, as it would be by a restart, and submits again
// later. It returns ctx's error when messages were cut off.
func (s *Server) Shutdown(ctx context.Context) error { return s.base.Shutdown(ctx) }

// Close closes the listeners and every connection at once; messages being
// received are lost (never answered 250), and their clients try again.
func (s *Server) Close() error { return s.base.Close() }

func (s *Server) setup() smtpserver.Setup {
	burst, every := s.AuthFailureBurst, s.AuthFailureInterval
	if burst <= 0 {
		burst = DefaultAuthFailureBurst
	}
	if every <= 0 {
		every = DefaultAuthFailureInterval
	}
	first, most := s.AuthFirstDelay, s.AuthMaxDelay
	if first <= 0 {
		first = DefaultAuthFirstDelay
	}
	if most <= 0 {
		most = DefaultAuthMaxDelay
	}
	s.auth = newAuthLimiter(burst, every, min(first, most), most, s.now)
	return smtpserver.Setup{
		Config:   s.Config,
		Role:     "submission",
		Backend:  backend{s},
		Defaults: smtpserver.Limits{MaxBytes: DefaultMaxBytes, MaxRecipients: DefaultMaxRecipients},
		// go-smtp advertises MaxMessageBytes with SIZE and its data
		// reader fails as soon as it has given that many bytes; it
		// refuses a declared SIZE beyond it (RFC 1870 §6.1).
		InclusiveMax: false,
		// go-smtp would answer AUTH in clear text 523 5.7.10 itself; the
		// contract (RFC 4954 §6 and RFC 5248's 5.7.11) wants 538, which
		// the session gives. The session offers no mechanism before TLS,
		// so AUTH is not advertised then (RFC 4954 §4: a client must not
		// send credentials in the clear, RFC 8314 §3.3).
		AllowInsecureAuth: true,
		// A message may ask to travel over verified TLS all the way
		// (RFC 8689): MAIL FROM … REQUIRETLS, advertised over TLS only.
		RequireTLS: true,
	}
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// sleep is the wait of a delayed login (Server.Sleep).
func (s *Server) sleep(ctx context.Context, d time.Duration) error {
	if s.Sleep != nil {
		return s.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
