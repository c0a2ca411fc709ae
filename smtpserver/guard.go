package smtpserver

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	gosmtp "github.com/emersion/go-smtp"
)

// endedText is the 421 of each end, after the hostname.
var endedText = map[string]string{
	OutcomeClosedJunk:           "too many commands that do nothing",
	OutcomeClosedErrors:         "too many errors",
	OutcomeClosedSessionTimeout: "session time limit reached",
}

// errSessionEnded is what the connection's read deadline answers when the
// guard ended the session but could not write the 421 itself: go-smtp
// then answers 421 on its own and closes.
var errSessionEnded = errors.New("smtp session ended by its limits")

// sessionGuard holds one connection's counts against MaxJunkCommands,
// MaxErrors and SessionTimeout, and ends the session past them: it
// answers 421 4.7.0 (RFC 5321 §3.8, §4.2.2: the service closes the
// transmission channel) and closes the connection. It counts per
// connection: STARTTLS makes go-smtp start a new session object, but the
// SMTP session (RFC 5321 §3.1) goes on.
//
// go-smtp answers NOOP, VRFY, HELP, unknown and malformed commands
// itself, without asking the listener, and under TLS the skeleton never
// sees a command's bytes. What it does see: before reading each command
// go-smtp moves the connection's read deadline (ReadTimeout is always
// set), which a tls.Conn passes to the connection beneath it, the
// skeleton's (limitedConn); and every call go-smtp makes to the
// listener's session, which the skeleton wraps (guardedSession). So,
// between two command reads one command was handled: when no session
// method acted on it, it did nothing, and is junk (RSET and a repeated
// EHLO reach only Reset, and are junk too). A session method's refusal
// is an error.
type sessionGuard struct {
	lim      Limits
	hostname string
	// raw is the accepted connection, beneath any TLS.
	raw   net.Conn
	start time.Time
	// ended reports the end of a session (a metric, a log line).
	ended func(outcome string, junk, errs int, age time.Duration)
	// tlsSeen says that a write on raw was not a clear-text reply (every
	// reply starts with a digit): TLS runs on it, from STARTTLS.
	tlsSeen atomic.Bool

	mu sync.Mutex
	// smtp is go-smtp's connection, known from the first session: its
	// Conn is the one replies go through, under TLS after STARTTLS.
	smtp *gosmtp.Conn
	// implicit is the TLS connection of an implicit-TLS port; handshake
	// says that the next deadline is the one go-smtp sets before the
	// handshake, not before a command.
	implicit  *tls.Conn
	handshake bool
	reads     int
	// acted says that a session method acted on the command in hand.
	acted bool
	// message: a message is being received, since messageStart; with DATA
	// the deadlines set meanwhile are the DATA reader's; with BDAT they
	// come before each chunk's command.
	message, bdat bool
	messageStart  time.Time
	junk, errs    int
	// closed: the connection is closed, by the guard or otherwise.
	closed bool
}

// beforeRead runs as a read deadline is set on the connection: before
// each command, it counts the command answered last and ends the session
// when it is past a limit. It returns the error for the deadline's
// setter, nil to go on.
func (g *sessionGuard) beforeRead() error {
	g.mu.Lock()
	switch {
	case g.closed:
		g.mu.Unlock()
		return nil
	case g.message && !g.bdat:
		g.mu.Unlock()
		return nil
	case g.handshake:
		g.handshake = false
		g.mu.Unlock()
		return nil
	}
	if g.reads > 0 && !g.message && !g.acted {
		g.junk++
	}
	g.reads++
	g.acted = false
	outcome := ""
	switch {
	case g.errs > g.lim.MaxErrors:
		outcome = OutcomeClosedErrors
	case g.junk > g.lim.MaxJunkCommands:
		outcome = OutcomeClosedJunk
	case time.Since(g.start) >= g.lim.SessionTimeout && !g.bdatUnderWay():
		outcome = OutcomeClosedSessionTimeout
	}
	if outcome == "" {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	junk, errs := g.junk, g.errs
	out := g.replyConn()
	g.mu.Unlock()

	g.ended(outcome, junk, errs, time.Since(g.start))
	if out == nil {
		return errSessionEnded
	}
	_ = out.SetWriteDeadline(time.Now().Add(g.lim.WriteTimeout))
	_, _ = fmt.Fprintf(out, "421 4.7.0 %s %s, closing connection\r\n", g.hostname, endedText[outcome])
	_ = out.Close()
	// go-smtp ends the connection quietly on a closed one.
	return net.ErrClosed
}

// bdatUnderWay says that a message is being received in BDAT chunks,
// for less than DataTimeout: it may finish past SessionTimeout, as one
// with DATA does (whose commands are not read meanwhile); g.mu is held.
func (g *sessionGuard) bdatUnderWay() bool {
	return g.message && g.bdat && time.Since(g.messageStart) < g.lim.DataTimeout
}

// replyConn is the connection a reply goes through now, nil when TLS
// started before the first session (STARTTLS before EHLO), which only
// go-smtp knows; g.mu is held.
func (g *sessionGuard) replyConn() net.Conn {
	switch {
	case g.smtp != nil:
		return g.smtp.Conn()
	case g.implicit != nil:
		return g.implicit
	case g.tlsSeen.Load():
		return nil
	}
	return g.raw
}

// wrote sees what the server writes on the connection beneath TLS.
func (g *sessionGuard) wrote(p []byte) {
	if len(p) > 0 && (p[0] < '0' || p[0] > '9') && !g.tlsSeen.Load() {
		g.tlsSeen.Store(true)
	}
}

// implicitTLS says that c runs TLS from the first byte.
func (g *sessionGuard) implicitTLS(c *tls.Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.implicit, g.handshake = c, true
}

// sessionStarted is a client's greeting that made a session: an act.
func (g *sessionGuard) sessionStarted(c *gosmtp.Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.smtp, g.acted = c, true
}

// act records that a session method acted on the command in hand.
func (g *sessionGuard) act() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.acted = true
}

// result records a session method's answer: an act, and an error when it
// is a refusal of the client's making.
func (g *sessionGuard) result(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.acted = true
	if clientError(err) {
		g.errs++
	}
}

// beginMessage and endMessage bracket the listener's Data. A message
// taken starts both counts again: the client does what the service is
// for (Postfix resets its counts the same way).
func (g *sessionGuard) beginMessage(bdat bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.message, g.bdat, g.acted = true, bdat, true
	g.messageStart = time.Now()
}

func (g *sessionGuard) endMessage(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.message, g.bdat, g.acted = false, false, true
	if taken(err) {
		g.junk, g.errs = 0, 0
	} else if clientError(err) {
		g.errs++
	}
}

// connClosed: the connection is closed; nothing is counted any more.
func (g *sessionGuard) connClosed() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
}

// taken says whether Data's answer took the message: nil, or a 2xx reply
// (submission names the message in its 250).
func taken(err error) bool {
	var e *gosmtp.SMTPError
	if err == nil {
		return true
	}
	return errors.As(err, &e) && e.Code < 400
}

// guardOf is the guard of a connection go-smtp holds (the skeleton's, or
// a TLS connection over it), nil for another.
func guardOf(c net.Conn) *sessionGuard {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if lc, ok := c.(*limitedConn); ok {
		return lc.guard
	}
	return nil
}
