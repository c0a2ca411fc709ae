// Package connlimit caps the connections a listener holds at once, per
// client address and overall, and refuses the others inside Accept: a
// refused connection is closed before anything is read from it (for a TLS
// listener, before the handshake), so a client that opens thousands of
// connections costs the server the accept alone, not a goroutine, a TLS
// handshake or a file descriptor kept open.
//
// Its Listener is the HTTPS listener's; smtpserver counts the SMTP
// listeners' connections with the same Limiter and client key, and
// refuses them with a 421 of its own.
package connlimit

import (
	"net"
	"sync"
)

// Reason says which cap refused a connection; it is a metric's label.
type Reason string

const (
	// PerAddress: the client address already holds its share.
	PerAddress Reason = "per_address"
	// Total: the listener holds all it may.
	Total Reason = "total"
)

// Limiter counts the connections held at once, per client key and
// overall. One Limiter may be shared by several listeners.
type Limiter struct {
	perAddress, total int

	mu    sync.Mutex
	byKey map[string]int
	open  int
}

// New holds at most perAddress connections of one client (ClientKey) and
// total in all. Neither may be below 1.
func New(perAddress, total int) *Limiter {
	return &Limiter{perAddress: max(perAddress, 1), total: max(total, 1), byKey: map[string]int{}}
}

// Open is how many connections are held now.
func (l *Limiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// Take counts a connection of key, or says which cap refuses it.
func (l *Limiter) Take(key string) (Reason, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.byKey[key] >= l.perAddress:
		return PerAddress, false
	case l.open >= l.total:
		return Total, false
	}
	l.byKey[key]++
	l.open++
	return "", true
}

// Release gives back a connection of key; it runs once per connection
// taken.
func (l *Limiter) Release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byKey[key]--; l.byKey[key] <= 0 {
		delete(l.byKey, key)
	}
}

// Listener refuses, inside Accept, the connections beyond its Limiter's
// caps, and returns the others wrapped so that closing them gives their
// slot back. Wrap it in tls.NewListener (or hand it to
// http.Server.ServeTLS), not the other way round, so that a refusal costs
// no handshake.
type Listener struct {
	net.Listener
	Limiter *Limiter
	// OnRefuse, when set, hears of each refusal (a metric). It runs in
	// the accept loop and must not block.
	OnRefuse func(remote net.Addr, why Reason)
}

// Accept returns the next connection within the caps, closing the others
// on the way.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key := ClientKey(c.RemoteAddr())
		why, ok := l.Limiter.Take(key)
		if ok {
			return &conn{Conn: c, l: l.Limiter, key: key}, nil
		}
		if l.OnRefuse != nil {
			l.OnRefuse(c.RemoteAddr(), why)
		}
		refuse(c)
	}
}

// refuse closes c at once. A reset rather than the orderly close: the
// client has nothing to be told (a TLS client could not read a clear-text
// word), and the server's side of the connection then leaves no TIME_WAIT
// entry behind (RFC 9293 §3.6.1), which a flood would pile up.
func refuse(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// conn holds its slot until it is first closed: net/http and crypto/tls
// may close a connection more than once (the TLS layer closes the
// connection it wraps), and only the first gives the slot back.
type conn struct {
	net.Conn
	l    *Limiter
	key  string
	once sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.Release(c.key) })
	return err
}

// ClientKey is what the per-address cap counts by: the IPv4 address, or
// the IPv6 /64, since one IPv6 host commonly has a whole /64 to draw from
// (RFC 4291 §2.5.1 interface identifiers are 64 bits). An IPv4-mapped
// IPv6 address counts as its IPv4 address.
func ClientKey(a net.Addr) string {
	var ip net.IP
	switch a := a.(type) {
	case *net.TCPAddr:
		ip = a.IP
	default:
		host, _, err := net.SplitHostPort(a.String())
		if err != nil {
			return a.String()
		}
		if ip = net.ParseIP(host); ip == nil {
			return host
		}
	}
	if ip4 := ip.To4(); ip4 != nil {
		return ip4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
