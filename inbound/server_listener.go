package inbound

import (
	"net"
	"sync"
	"time"
)

// refuseWriteTimeout bounds the write of the 421 to a refused connection.
// The reply fits any socket's empty send buffer, so it never waits in
// practice; the bound is against a kernel that thinks otherwise.
const refuseWriteTimeout = time.Second

// limitListener caps the connections held at once, per client and
// overall. A connection beyond a cap is answered 421 (RFC 5321 §3.8, "the
// server MAY reply 421 and close the connection" instead of the greeting)
// and closed at once, inside Accept: it costs no goroutine, so a client
// opening thousands of connections costs the server almost nothing beyond
// the accept itself.
type limitListener struct {
	net.Listener
	perIP, total int
	hostname     string
	onRefuse     func(remote net.Addr, reason string)

	mu     sync.Mutex
	closed bool
	byIP   map[string]int
	conns  map[*limitedConn]struct{}
}

func newLimitListener(ln net.Listener, perIP, total int, hostname string, onRefuse func(net.Addr, string)) *limitListener {
	return &limitListener{
		Listener: ln,
		perIP:    perIP,
		total:    total,
		hostname: hostname,
		onRefuse: onRefuse,
		byIP:     map[string]int{},
		conns:    map[*limitedConn]struct{}{},
	}
}

// Accept returns the next connection within the caps, refusing the others
// on the way.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key := clientKey(c.RemoteAddr())
		l.mu.Lock()
		var reason string
		switch {
		case l.closed:
			reason = "shutting down"
		case l.byIP[key] >= l.perIP:
			reason = "too many connections from your address"
		case len(l.conns) >= l.total:
			reason = "too many connections"
		}
		if reason != "" {
			l.mu.Unlock()
			l.refuse(c, reason)
			continue
		}
		lc := &limitedConn{Conn: c, l: l, key: key}
		l.byIP[key]++
		l.conns[lc] = struct{}{}
		l.mu.Unlock()
		return lc, nil
	}
}

func (l *limitListener) refuse(c net.Conn, reason string) {
	if l.onRefuse != nil {
		l.onRefuse(c.RemoteAddr(), reason)
	}
	_ = c.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
	_, _ = c.Write([]byte("421 4.7.0 " + l.hostname + " " + reason + ", try again later\r\n"))
	_ = c.Close()
}

// Close stops accepting; the connections held go on.
func (l *limitListener) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	return l.Listener.Close()
}

// closeConns closes every connection held.
func (l *limitListener) closeConns() {
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

// release gives back c's slots; it runs once per connection.
func (l *limitListener) release(c *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.conns, c)
	if l.byIP[c.key]--; l.byIP[c.key] <= 0 {
		delete(l.byIP, c.key)
	}
}

// limitedConn holds its slots until closed. go-smtp closes a connection
// more than once (QUIT, then the end of its loop), and STARTTLS closes it
// through the tls.Conn wrapping it: release runs on the first.
type limitedConn struct {
	net.Conn
	l    *limitListener
	key  string
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}

// clientKey is what the per-client cap counts by: the IPv4 address, or the
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
