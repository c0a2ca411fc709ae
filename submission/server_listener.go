package submission

import (
	"net"
	"sync"
	"time"
)

// refuseWriteTimeout bounds the write of the 421 to a refused connection.
// The reply fits any socket's empty send buffer, so it never waits in
// practice; the bound is against a kernel that thinks otherwise.
const refuseWriteTimeout = time.Second

// connLimiter counts the connections held at once, per client and overall,
// over all the listeners of a Server.
type connLimiter struct {
	perIP, total int

	mu    sync.Mutex
	byIP  map[string]int
	conns map[*limitedConn]struct{}
}

func newConnLimiter(perIP, total int) *connLimiter {
	return &connLimiter{perIP: perIP, total: total, byIP: map[string]int{}, conns: map[*limitedConn]struct{}{}}
}

// take admits c, or says why not.
func (l *connLimiter) take(c net.Conn) (*limitedConn, string) {
	key := clientKey(c.RemoteAddr())
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.byIP[key] >= l.perIP:
		return nil, "too many connections from your address"
	case len(l.conns) >= l.total:
		return nil, "too many connections"
	}
	lc := &limitedConn{Conn: c, l: l, key: key}
	l.byIP[key]++
	l.conns[lc] = struct{}{}
	return lc, ""
}

// release gives back c's slots; it runs once per connection.
func (l *connLimiter) release(c *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.conns, c)
	if l.byIP[c.key]--; l.byIP[c.key] <= 0 {
		delete(l.byIP, c.key)
	}
}

// closeConns closes every connection held.
func (l *connLimiter) closeConns() {
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

// limitListener refuses, inside Accept, the connections beyond the caps:
// it costs no goroutine, so a client opening thousands of connections
// costs the server almost nothing beyond the accept itself. On a clear-text
// port the refusal is RFC 5321 §3.8's 421 in place of the greeting; on an
// implicit-TLS port (silent) the connection is just closed, since the
// client awaits a TLS handshake and could not read a reply.
type limitListener struct {
	net.Listener
	lim      *connLimiter
	hostname string
	onRefuse func(remote net.Addr, reason string)
	silent   bool

	mu     sync.Mutex
	closed bool
}

// Accept returns the next connection within the caps, refusing the others
// on the way.
func (l *limitListener) Accept() (net.Conn, error) {
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
		lc, reason := l.lim.take(c)
		if lc == nil {
			l.refuse(c, reason)
			continue
		}
		return lc, nil
	}
}

func (l *limitListener) refuse(c net.Conn, reason string) {
	if l.onRefuse != nil {
		l.onRefuse(c.RemoteAddr(), reason)
	}
	if !l.silent {
		_ = c.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
		_, _ = c.Write([]byte("421 4.7.0 " + l.hostname + " " + reason + ", try again later\r\n"))
	}
	_ = c.Close()
}

// Close stops accepting; the connections held go on.
func (l *limitListener) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	return l.Listener.Close()
}

// limitedConn holds its slots until closed. go-smtp closes a connection
// more than once (QUIT, then the end of its loop), and TLS closes it
// through the tls.Conn wrapping it: release runs on the first.
type limitedConn struct {
	net.Conn
	l    *connLimiter
	key  string
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}

// clientKey is what the per-client caps count by: the IPv4 address, or the
// IPv6 /64, since one IPv6 host commonly has a whole /64 to draw from.
func clientKey(a net.Addr) string {
	var ip net.IP
	switch a := a.(type) {
	case *net.TCPAddr:
		ip = a.IP
	default:
		host, _, err := net.SplitHostPort(a.String())
		if err != nil {
			return a.String()
		}
		ip = net.ParseIP(host)
		if ip == nil {
			return host
		}
	}
	if ip4 := ip.To4(); ip4 != nil {
		return ip4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
