package smtpserver

import (
	"net"
	"sync"
	"time"

	"github.com/mailroom/mailroom/connlimit"
)

// refuseWriteTimeout bounds the write of the 421 to a refused connection.
// The reply fits any socket's empty send buffer, so it never waits in
// practice; the bound is against a kernel that thinks otherwise.
const refuseWriteTimeout = time.Second

// Limiter counts the connections held at once, per client
// (connlimit.ClientKey) and overall, over all the listeners that share it,
// and knows them, so that CloseAll can end them.
type Limiter struct {
	counts *connlimit.Limiter

	mu    sync.Mutex
	conns map[*limitedConn]struct{}
}

// NewLimiter holds at most perIP connections of one client and total in all.
func NewLimiter(perIP, total int) *Limiter {
	return &Limiter{counts: connlimit.New(perIP, total), conns: map[*limitedConn]struct{}{}}
}

// refusals are the 421's words for each cap.
var refusals = map[connlimit.Reason]string{
	connlimit.PerAddress: "too many connections from your address",
	connlimit.Total:      "too many connections",
}

// take admits c, or says why not.
func (l *Limiter) take(c net.Conn) (*limitedConn, string) {
	key := connlimit.ClientKey(c.RemoteAddr())
	if why, ok := l.counts.Take(key); !ok {
		return nil, refusals[why]
	}
	lc := &limitedConn{Conn: c, l: l, key: key}
	l.mu.Lock()
	l.conns[lc] = struct{}{}
	l.mu.Unlock()
	return lc, ""
}

// release gives back c's slots; it runs once per connection.
func (l *Limiter) release(c *limitedConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
	l.counts.Release(c.key)
}

// CloseAll closes every connection held: a server that stops has go-smtp
// close the connections it knows, and one accepted but not yet handed to it
// would otherwise wait for its read timeout.
func (l *Limiter) CloseAll() {
	l.mu.Lock()
	conns := make([]*limitedConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// Listener refuses, inside Accept, the connections beyond the caps:
// it costs no goroutine, so a client opening thousands of connections
// costs the server almost nothing beyond the accept itself. On a clear-text
// port the refusal is RFC 5321 §3.8's 421 in place of the greeting; on an
// implicit-TLS port (Silent) the connection is just closed, since the
// client awaits a TLS handshake and could not read a reply.
type Listener struct {
	net.Listener
	Limiter *Limiter
	// Hostname is named in the 421.
	Hostname string
	// OnRefuse, when set, hears of each refusal (a log line, a metric).
	OnRefuse func(remote net.Addr, reason string)
	Silent   bool
	// guard, when set, makes the guard of each connection taken: the
	// Server's session limits (sessionGuard).
	guard func(raw net.Conn) *sessionGuard

	mu     sync.Mutex
	closed bool
}

// Accept returns the next connection within the caps, refusing the others
// on the way.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		closed := l.closed
		l.mu.Unlock()
		if closed {
			l.refuse(c, "shutting down")
			continue
		}
		lc, reason := l.Limiter.take(c)
		if lc == nil {
			l.refuse(c, reason)
			continue
		}
		if l.guard != nil {
			lc.guard = l.guard(lc)
		}
		return lc, nil
	}
}

func (l *Listener) refuse(c net.Conn, reason string) {
	if l.OnRefuse != nil {
		l.OnRefuse(c.RemoteAddr(), reason)
	}
	if !l.Silent {
		_ = c.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
		_, _ = c.Write([]byte("421 4.7.0 " + l.Hostname + " " + reason + ", try again later\r\n"))
	}
	_ = c.Close()
}

// Close stops accepting; the connections held go on.
func (l *Listener) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	return l.Listener.Close()
}

// limitedConn holds its slots until closed. go-smtp closes a connection
// more than once (QUIT, then the end of its loop), and TLS closes it
// through the tls.Conn wrapping it: release runs on the first. Its guard,
// when set, sees each read deadline set and each write, also under TLS,
// whose connection sets them on this one (sessionGuard).
type limitedConn struct {
	net.Conn
	l     *Limiter
	key   string
	once  sync.Once
	guard *sessionGuard
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.release(c)
		if c.guard != nil {
			c.guard.connClosed()
		}
	})
	return err
}

// SetReadDeadline comes before each command go-smtp reads: the guard may
// end the session there.
func (c *limitedConn) SetReadDeadline(t time.Time) error {
	if c.guard != nil {
		if err := c.guard.beforeRead(); err != nil {
			return err
		}
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *limitedConn) Write(p []byte) (int, error) {
	if c.guard != nil {
		c.guard.wrote(p)
	}
	return c.Conn.Write(p)
}
