package smtp

import (
	"context"
	"crypto/tls"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/mailroom/mailroom"
)

// Relay hands every delivery to one smarthost (--delivery relay). Set its
// fields before the first Deliver; it is safe for concurrent use.
//
// With credentials, TLS is required: STARTTLS when the relay offers it,
// and otherwise nothing is sent, since AUTH PLAIN in clear gives the
// password away (RFC 4954 §4). Unlike Direct, a relay whose TLS fails is
// never tried again in clear: its certificate is verified, so a failed
// handshake may be someone in the middle, and a configured smarthost that
// cannot do TLS is the operator's to fix, not to work around. A refused
// login (535) defers the recipients
// rather than bouncing them: it is the operator's configuration that is
// wrong, and nothing is lost while it is fixed.
type Relay struct {
	Config RelayConfig
	// Hostname is the name given in EHLO (--hostname).
	Hostname string
	// TLSConfig verifies the relay; nil means the system's roots and the
	// relay's host name, as a configured smarthost should be checked
	// (RFC 8314). Tests set RootCAs.
	TLSConfig *tls.Config
	// Dialer opens connections; nil means a net.Dialer.
	Dialer Dialer

	// Timeouts default to the package's Default constants when zero.
	DialTimeout    time.Duration
	CommandTimeout time.Duration
	DataTimeout    time.Duration
	IdleTimeout    time.Duration
	// MaxConns caps the sessions with the relay; zero means
	// DefaultMaxConnsPerHost.
	MaxConns int

	once sync.Once
	eng  *engine
}

var _ mailroom.Transport = (*Relay)(nil)

// NewRelay returns a Relay to cfg that introduces itself as hostname (the
// machine's name when empty), with every other field at its default.
func NewRelay(cfg RelayConfig, hostname string) *Relay {
	if hostname == "" {
		hostname, _ = os.Hostname()
	}
	return &Relay{
		Config:         cfg,
		Hostname:       hostname,
		DialTimeout:    DefaultDialTimeout,
		CommandTimeout: DefaultCommandTimeout,
		DataTimeout:    DefaultDataTimeout,
		IdleTimeout:    DefaultIdleTimeout,
		MaxConns:       DefaultMaxConnsPerHost,
	}
}

func (r *Relay) engine() *engine {
	r.once.Do(func() {
		cfg := engineConfig{
			hostname:       r.Hostname,
			dialer:         r.Dialer,
			dialTimeout:    r.DialTimeout,
			commandTimeout: r.CommandTimeout,
			dataTimeout:    r.DataTimeout,
			idleTimeout:    r.IdleTimeout,
			maxPerHost:     r.MaxConns,
			maxTotal:       r.MaxConns,
			tlsConfig:      r.TLSConfig,
			implicitTLS:    r.Config.ImplicitTLS,
		}
		if cfg.tlsConfig == nil {
			cfg.tlsConfig = &tls.Config{}
		}
		if r.Config.Username != "" {
			user, pass := r.Config.Username, r.Config.Password
			cfg.requireTLS = true
			cfg.auth = func() sasl.Client { return sasl.NewPlainClient("", user, pass) }
		}
		r.eng = newEngine(cfg)
	})
	return r.eng
}

// Deliver sends del to the relay and returns one result per recipient in
// order. The relay's replies are classified as a receiver's would be.
func (r *Relay) Deliver(ctx context.Context, del *mailroom.Delivery) []mailroom.RecipientResult {
	if len(del.Recipients) == 0 {
		return nil
	}
	host := r.Config.Host
	addr := r.Config.Addr()
	addrs := func(context.Context, string, netip.Addr) ([]string, status) { return []string{addr}, status{} }
	w := connRequest{keys: []connKey{{Site: host}}, group: host}
	res, why, ok := r.engine().attempt(ctx, host, w, []mailroom.SourceAddress{{}}, addrs, del, nil)
	if !ok {
		return results(del.Recipients, host, why)
	}
	return res
}

// Close ends the idle sessions with the relay.
func (r *Relay) Close() error { return r.engine().close() }
