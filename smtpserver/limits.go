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
}

// withDefaults is l with every zero field taken from def, and then from
// the Default constants.
func (l Limits) withDefaults(def Limits) Limits {
	shared := Limits{
		MaxConnsPerIP: DefaultMaxConnsPerIP, MaxConns: DefaultMaxConns,
		ReadTimeout: DefaultReadTimeout, WriteTimeout: DefaultWriteTimeout,
		DataTimeout: DefaultDataTimeout, HandlerTimeout: DefaultHandlerTimeout,
	}
	return l.or(def).or(shared)
}

func (l Limits) or(def Limits) Limits {
	return Limits{
		MaxBytes:       positive.Or(l.MaxBytes, def.MaxBytes),
		MaxRecipients:  positive.Or(l.MaxRecipients, def.MaxRecipients),
		MaxConnsPerIP:  positive.Or(l.MaxConnsPerIP, def.MaxConnsPerIP),
		MaxConns:       positive.Or(l.MaxConns, def.MaxConns),
		ReadTimeout:    positive.Or(l.ReadTimeout, def.ReadTimeout),
		WriteTimeout:   positive.Or(l.WriteTimeout, def.WriteTimeout),
		DataTimeout:    positive.Or(l.DataTimeout, def.DataTimeout),
		HandlerTimeout: positive.Or(l.HandlerTimeout, def.HandlerTimeout),
	}
}
