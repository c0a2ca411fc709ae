package smtp

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/netip"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/positive"
)

// Dialer opens network connections; *net.Dialer is one. Tests and
// operators may give another (a proxy, a fixed source address).
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Defaults for the fields of Direct and Relay left zero.
const (
	// DefaultPort is the SMTP port, where MX hosts listen.
	DefaultPort = 25
	// DefaultDialTimeout bounds one TCP connect.
	DefaultDialTimeout = 30 * time.Second
	// DefaultCommandTimeout bounds each command's reply. RFC 5321
	// §4.5.3.2 suggests five minutes per command; a server that takes a
	// minute to answer a RCPT is better retried later than waited for.
	DefaultCommandTimeout = 60 * time.Second
	// DefaultDataTimeout bounds sending the message and awaiting the final
	// reply: the ten minutes of RFC 5321 §4.5.3.2.6, since the receiver may
	// scan the message before it answers.
	DefaultDataTimeout = 10 * time.Minute
	// DefaultIdleTimeout is how long a connection waits in the pool for
	// the next message to its host.
	DefaultIdleTimeout = 30 * time.Second
	// DefaultMaxConnsPerHost caps connections to one MX host: receivers
	// throttle senders that open many at once.
	DefaultMaxConnsPerHost = 4
	// DefaultMaxConns caps connections overall.
	DefaultMaxConns = 100
)

// engineConfig is what Direct and Relay have in common.
type engineConfig struct {
	hostname       string
	dialer         Dialer
	dialTimeout    time.Duration
	commandTimeout time.Duration
	dataTimeout    time.Duration
	idleTimeout    time.Duration
	maxPerHost     int
	maxTotal       int
	// sites, when set, caps connections per site and source address
	// (mailroom.Sites.MaxConnections) instead of maxPerHost per key.
	sites mailroom.Sites

	// tlsConfig is cloned for each session, with ServerName set to the
	// host when it has none.
	tlsConfig *tls.Config
	// implicitTLS starts TLS before the greeting (RFC 8314 §3.3);
	// otherwise STARTTLS is used when offered (RFC 3207).
	implicitTLS bool
	// requireTLS fails a session that cannot have TLS rather than going on
	// in clear: credentials are never sent unencrypted.
	requireTLS bool
	// verifyCerts checks every TLS session's certificate after the
	// handshake against roots (nil: the system's) for the host's name
	// (verifyPeer); the handshake itself verifies nothing (tlsConfig
	// skips it), so that a certificate that fails still encrypts where no
	// policy requires more. Direct sets it; a relay's handshake verifies.
	verifyCerts bool
	roots       *x509.CertPool
	// plainFallback dials a server whose TLS failed again and goes on in
	// clear, remembering the failure for a while (see engine.open). Direct
	// sets it; a relay never does.
	plainFallback bool
	// auth, when set, makes a SASL client for each session (RFC 4954).
	auth func() sasl.Client
}

// engine runs deliveries over pooled sessions within the connection caps.
type engine struct {
	cfg   engineConfig
	conns *conns
	// tlsFailures is nil unless cfg.plainFallback.
	tlsFailures *tlsMemory
}

func newEngine(cfg engineConfig) *engine {
	cfg.hostname = cmp.Or(cfg.hostname, "localhost")
	if cfg.dialer == nil {
		cfg.dialer = &net.Dialer{}
	}
	cfg.dialTimeout = positive.Or(cfg.dialTimeout, DefaultDialTimeout)
	cfg.commandTimeout = positive.Or(cfg.commandTimeout, DefaultCommandTimeout)
	cfg.dataTimeout = positive.Or(cfg.dataTimeout, DefaultDataTimeout)
	cfg.idleTimeout = positive.Or(cfg.idleTimeout, DefaultIdleTimeout)
	cfg.maxPerHost = positive.Or(cfg.maxPerHost, DefaultMaxConnsPerHost)
	cfg.maxTotal = positive.Or(cfg.maxTotal, DefaultMaxConns)
	capOf := func(connKey) int { return cfg.maxPerHost }
	if sites := cfg.sites; sites != nil {
		// 0 while a site that refused a connection may not be dialled again.
		capOf = func(k connKey) int { return max(0, sites.MaxConnections(k)) }
	}
	e := &engine{cfg: cfg, conns: newConns(cfg.maxTotal, cfg.idleTimeout, capOf, cfg.sites != nil)}
	if cfg.plainFallback {
		e.tlsFailures = newTLSMemory(tlsFailureMemory, maxTLSFailures)
	}
	return e
}

// addrFunc gives the addresses (ip:port) to dial for an MX host from a
// source address (the system's choice when not valid), or why there are
// none.
type addrFunc func(ctx context.Context, host string, src netip.Addr) ([]string, status)

// dialSpec is how a delivery's new connections are made.
type dialSpec struct {
	source mailroom.SourceAddress
	// ehlo is the name given in EHLO: the source address's own, or the
	// hostname.
	ehlo         string
	dialTimeout  time.Duration
	greetTimeout time.Duration
	// sites, when set, is told when the connection is greeted and closed
	// (under key), and throttled tells the replies that throttle.
	sites     mailroom.Sites
	key       connKey
	throttled throttleRule
	now       func() time.Time
	// gate is the delivery's TLS requirement (nil: none, a relay's).
	gate *tlsGate
}

// spec is the dialSpec from src without a site: the engine's timeouts.
func (e *engine) spec(src mailroom.SourceAddress) dialSpec {
	return dialSpec{source: src, ehlo: cmp.Or(src.EHLOName, e.cfg.hostname),
		dialTimeout: e.cfg.dialTimeout, greetTimeout: e.cfg.commandTimeout}
}

// attempt delivers d through host, on a pooled session or a new one to the
// first of host's addresses that answers, from one of sources (w.keys
// are theirs), each session one gate admits (nil: any). When no session
// could be had, it returns ok false and why, so that the caller may try
// the next MX host.
func (e *engine) attempt(ctx context.Context, host string, w connRequest, sources []mailroom.SourceAddress, addrs addrFunc, d *mailroom.Delivery, gate *tlsGate) (res []mailroom.RecipientResult, why status, ok bool) {
	if gate != nil {
		w.fits = gate.fits
	}
	l, err := e.conns.acquire(ctx, w)
	if err != nil {
		if d.MayNotStart() {
			return d.NotAttempted(), status{}, true
		}
		why = deferred(enhCongestion, "no connection to %s could be had before the deadline: %v", host, err)
		gate.failedOther(why)
		return nil, why, false
	}
	// Waiting for the slot may have taken long: ask again whether this
	// node may still send, right before anything goes on the wire.
	if d.MayNotStart() {
		e.conns.giveBack(l)
		return d.NotAttempted(), status{}, true
	}
	spec := e.spec(sources[l.index])
	spec.gate = gate
	c, _, why := e.session(ctx, &l, []string{host}, addrs, spec)
	if c == nil {
		return nil, why, false
	}
	res, reusable, _ := e.use(ctx, c, d, nil, gate)
	if reusable {
		e.conns.put(c)
	} else {
		afterRecorded(c, c.close)
	}
	return res, status{}, true
}

// session readies a session for a delivery that holds l: l's idle session
// when the server still answers NOOP (RFC 5321 §4.1.1.9: servers close
// idle sessions, and a message must not be deferred for that), else a new
// connection to the first address of hosts, in order, that greets and that
// the delivery's TLS requirement admits (spec.gate: a host it does not
// allow is not dialled, a session it refuses is closed with QUIT before
// MAIL). A throttle on connecting (why.Reason) ends the search: other
// hosts of the site would say the same. Without a session, l's slot is
// given back. last is the host tried last.
func (e *engine) session(ctx context.Context, l *lease, hosts []string, addrs addrFunc, spec dialSpec) (c *client, last string, why status) {
	g := spec.gate
	if c := l.c; c != nil {
		l.c = nil
		stop := context.AfterFunc(ctx, func() { _ = c.raw.Close() })
		r, err := c.cmd("NOOP")
		if stop() && err == nil && r.Code == 250 {
			if _, ok := g.admit(c); ok {
				return c, c.host, status{}
			}
		}
		// Its slot is this delivery's for a new connection.
		l.s = c.detachSlot()
		c.close()
	}
	defer func() {
		if c == nil && l.s != nil {
			l.s.release()
			l.s = nil
		}
	}()
	for _, host := range hosts {
		last = host
		if !g.allows(host) {
			why = g.rejectMX(host)
			continue
		}
		list, notFound := addrs(ctx, host, spec.source.IP)
		if len(list) == 0 {
			why = notFound
			g.failedOther(why)
		}
		for _, addr := range list {
			var fault *tlsFault
			c, why, fault = e.open(ctx, host, addr, spec)
			if c != nil {
				var ok bool
				if why, ok = g.admit(c); !ok {
					// RFC 8461 §5, RFC 8689 §4.2.1: nothing of the
					// message goes to this host.
					c.quit()
					c = nil
					continue
				}
				c.slot, l.s = l.s, nil
				return c, host, status{}
			}
			switch {
			case fault != nil && g.strict():
				why = g.failedTLS(host, addr, fault)
			default:
				g.failedOther(why)
			}
			if why.Reason == mailroom.DeferThrottled || ctx.Err() != nil {
				return nil, host, why
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, last, why
}

// use runs one transaction on c. A context that ends mid-way closes the
// connection, which ends the transaction with a network error: deferred.
// Under gate, MAIL FROM carries REQUIRETLS when the delivery asked for it
// (RFC 8689 §4.2.1), and each result the session's TLS.
func (e *engine) use(ctx context.Context, c *client, d *mailroom.Delivery, throttled throttleRule, gate *tlsGate) ([]mailroom.RecipientResult, bool, *status) {
	stop := context.AfterFunc(ctx, func() { _ = c.raw.Close() })
	res, reusable, throttle := c.send(d, throttled, gate != nil && gate.req.RequireTLS, ctx.Done())
	if !stop() {
		reusable = false
	}
	if info := gate.info(c); info != nil {
		for i := range res {
			res[i].TLS = info
		}
	}
	return res, reusable, throttle
}

// close ends every idle session.
func (e *engine) close() error {
	e.conns.close()
	return nil
}
