package smtp

import (
	"cmp"
	"context"
	"crypto/tls"
	"net"
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

	// tlsConfig is cloned for each session, with ServerName set to the
	// host when it has none.
	tlsConfig *tls.Config
	// implicitTLS starts TLS before the greeting (RFC 8314 §3.3);
	// otherwise STARTTLS is used when offered (RFC 3207).
	implicitTLS bool
	// requireTLS fails a session that cannot have TLS rather than going on
	// in clear: credentials are never sent unencrypted.
	requireTLS bool
	// plainFallback dials a server whose TLS failed again and goes on in
	// clear, remembering the failure for a while (see engine.open). Direct
	// sets it; a relay never does.
	plainFallback bool
	// auth, when set, makes a SASL client for each session (RFC 4954).
	auth func() sasl.Client
}

// engine runs deliveries over pooled sessions within the connection limits.
type engine struct {
	cfg    engineConfig
	limits *limits
	pool   *pool
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
	e := &engine{
		cfg:    cfg,
		limits: newLimits(cfg.maxPerHost, cfg.maxTotal),
		pool:   newPool(cfg.maxPerHost, cfg.idleTimeout),
	}
	if cfg.plainFallback {
		e.tlsFailures = newTLSMemory(tlsFailureMemory, maxTLSFailures)
	}
	return e
}

// attempt delivers d through host, on a pooled session or a new one to the
// first of addrs that answers. When no session could be had, it returns
// ok false and why, so that the caller may try the next MX host.
func (e *engine) attempt(ctx context.Context, host string, addrs func(context.Context) ([]string, status), d *mailroom.Delivery) (res []mailroom.RecipientResult, why status, ok bool) {
	release, err := e.limits.acquire(ctx, host)
	if err != nil {
		if d.MayNotStart() {
			return d.NotAttempted(), status{}, true
		}
		return nil, deferred(enhCongestion, "no connection to %s could be had before the deadline: %v", host, err), false
	}
	defer release()
	// Waiting for the slot may have taken long: ask again whether this
	// node may still send, right before anything goes on the wire.
	if d.MayNotStart() {
		return d.NotAttempted(), status{}, true
	}

	c := e.reuse(ctx, host)
	if c == nil {
		list, why := addrs(ctx)
		if len(list) == 0 {
			return nil, why, false
		}
		// Idle sessions to other hosts give way to this new one, so that
		// all the open connections stay within the overall cap.
		e.pool.trim(e.cfg.maxTotal - e.limits.active())
		for _, addr := range list {
			if c, why = e.open(ctx, host, addr); c != nil {
				break
			}
			if ctx.Err() != nil {
				break
			}
		}
		if c == nil {
			return nil, why, false
		}
	}
	res, reusable := e.use(ctx, c, d)
	if reusable {
		e.pool.put(host, c)
	} else {
		c.close()
	}
	return res, status{}, true
}

// reuse takes an idle session to host from the pool, checking with NOOP
// (RFC 5321 §4.1.1.9) that the server still listens: servers close idle
// sessions, and a message must not be deferred for that.
func (e *engine) reuse(ctx context.Context, host string) *client {
	for ctx.Err() == nil {
		c := e.pool.get(host)
		if c == nil {
			return nil
		}
		stop := context.AfterFunc(ctx, func() { _ = c.raw.Close() })
		r, err := c.cmd("NOOP")
		if stop() && err == nil && r.Code == 250 {
			return c
		}
		c.close()
	}
	return nil
}

// use runs one transaction on c. A context that ends mid-way closes the
// connection, which ends the transaction with a network error: deferred.
func (e *engine) use(ctx context.Context, c *client, d *mailroom.Delivery) ([]mailroom.RecipientResult, bool) {
	stop := context.AfterFunc(ctx, func() { _ = c.raw.Close() })
	res, reusable := c.send(d)
	if !stop() {
		reusable = false
	}
	return res, reusable
}

// close ends every idle session.
func (e *engine) close() error {
	e.pool.close()
	return nil
}
