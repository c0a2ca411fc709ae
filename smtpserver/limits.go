package smtpserver

import (
	"time"

	"github.com/mailroom/mailroom/positive"
)

// Defaults of the limits both listeners share, taken when a field is zero.
// Each listener has its own DefaultMaxBytes and DefaultMaxRecipients.
const (
	// DefaultMaxConnsPerIP is how many connections one client address (an
	// IPv4 address, or an IPv6 /64) may hold at once, over all of a
	// server's listeners.
	DefaultMaxConnsPerIP = 20
	// DefaultMaxConns is how many connections a server holds at once.
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
	// DefaultHandlerTimeout bounds each call to a listener's handler, so
	// that a storage that hangs holds a connection no longer than that.
	DefaultHandlerTimeout = 30 * time.Second
	// DefaultMaxJunkCommands is how many commands that do nothing a
	// session may send between two messages taken (see MaxJunkCommands).
	// A client sends one or two between messages (RSET, or NOOP to check
	// a pooled connection), so 50 leaves room for any honest one while a
	// session of nothing else ends soon. Postfix counts 100
	// (smtpd_junk_command_limit) before it starts counting them as errors.
	DefaultMaxJunkCommands = 50
	// DefaultMaxErrors is how many refused commands a session may send
	// between two messages taken: Postfix's smtpd_hard_error_limit. A
	// sender with a few wrong recipients in each of many messages stays
	// far below it; one probing addresses, or keys, meets it after 20.
	DefaultMaxErrors = 20
	// DefaultSessionTimeout bounds a whole session, however busy the
	// client keeps the connection, so that a connection slot is held for
	// a bounded time (with ReadTimeout for the last command, DataTimeout
	// for a message under way). A client that reconnects costs a
	// handshake; pooled clients reconnect after a 421 (RFC 5321 §3.8).
	DefaultSessionTimeout = 30 * time.Minute
)

// Limits bound what one client can make a server hold. A zero field takes
// the listener's default. The listeners embed it, so that their fields
// read s.MaxBytes, s.ReadTimeout and so on.
type Limits struct {
	// MaxBytes is the largest message taken, advertised with SIZE
	// (RFC 1870); a larger one is answered 552 5.3.4 (§6.1) and the
	// connection goes on.
	MaxBytes int64
	// MaxRecipients bounds RCPT per transaction.
	MaxRecipients int
	// MaxConnsPerIP and MaxConns bound the connections held at once, per
	// client address and overall, over all of a server's listeners. A
	// connection beyond either is refused at once: with a 421 on a
	// clear-text port, by closing it on an implicit-TLS port (a TLS client
	// could not read a clear-text reply).
	MaxConnsPerIP int
	MaxConns      int
	// ReadTimeout, WriteTimeout, DataTimeout and HandlerTimeout: see the
	// Default constants.
	ReadTimeout    time.Duration
	WriteTimeout   time.Duration
	DataTimeout    time.Duration
	HandlerTimeout time.Duration
	// MaxJunkCommands and MaxErrors bound what a session may send without
	// getting a message through: past either, it is answered
	// 421 4.7.0 and closed (RFC 5321 §3.8). Both counts start again at
	// each message taken. Junk is a command that does nothing: NOOP, RSET,
	// VRFY, HELP, EHLO or HELO again, and any command go-smtp answers
	// itself without reaching the listener (an unknown or malformed
	// command, one out of sequence). An error is a command the listener
	// refuses: a 5xx, or a 4xx of the client's making (a rate limit); a
	// temporary failure of the service (ServiceFailure) is not counted.
	MaxJunkCommands int
	MaxErrors       int
	// SessionTimeout bounds a session: once it has passed, the reply to
	// the next command is followed by 421 4.7.0 and the connection is
	// closed. A message under way finishes first, within DataTimeout.
	SessionTimeout time.Duration
}

// withDefaults is l with every zero field taken from def, and then from
// the Default constants.
func (l Limits) withDefaults(def Limits) Limits {
	shared := Limits{
		MaxConnsPerIP: DefaultMaxConnsPerIP, MaxConns: DefaultMaxConns,
		ReadTimeout: DefaultReadTimeout, WriteTimeout: DefaultWriteTimeout,
		DataTimeout: DefaultDataTimeout, HandlerTimeout: DefaultHandlerTimeout,
		MaxJunkCommands: DefaultMaxJunkCommands, MaxErrors: DefaultMaxErrors,
		SessionTimeout: DefaultSessionTimeout,
	}
	return l.or(def).or(shared)
}

func (l Limits) or(def Limits) Limits {
	return Limits{
		MaxBytes:        positive.Or(l.MaxBytes, def.MaxBytes),
		MaxRecipients:   positive.Or(l.MaxRecipients, def.MaxRecipients),
		MaxConnsPerIP:   positive.Or(l.MaxConnsPerIP, def.MaxConnsPerIP),
		MaxConns:        positive.Or(l.MaxConns, def.MaxConns),
		ReadTimeout:     positive.Or(l.ReadTimeout, def.ReadTimeout),
		WriteTimeout:    positive.Or(l.WriteTimeout, def.WriteTimeout),
		DataTimeout:     positive.Or(l.DataTimeout, def.DataTimeout),
		HandlerTimeout:  positive.Or(l.HandlerTimeout, def.HandlerTimeout),
		MaxJunkCommands: positive.Or(l.MaxJunkCommands, def.MaxJunkCommands),
		MaxErrors:       positive.Or(l.MaxErrors, def.MaxErrors),
		SessionTimeout:  positive.Or(l.SessionTimeout, def.SessionTimeout),
	}
}
