package smtptest

import (
	"crypto/tls"
	"time"
)

// Option changes how a Server is started.
type Option func(*config)

type config struct {
	startTLS    bool
	cert        *tls.Certificate
	requireTLS  bool
	implicitTLS bool
	failTLS     bool
	refuseTLS   bool
	user, pass  string
	maxBytes    int64
	noPipeline  bool

	hosts  []string
	port   int
	domain string

	maxConns      int
	rateN         int
	ratePer       time.Duration
	greylist      bool
	greylistDelay time.Duration
	latencyMin    time.Duration
	latencyMax    time.Duration
	dead          bool
	now           func() time.Time
}

// WithSTARTTLS offers STARTTLS (RFC 3207) with a self-signed certificate
// made in memory; RootCAs trusts it.
func WithSTARTTLS() Option { return func(c *config) { c.startTLS = true } }

// WithCertificate offers STARTTLS (RFC 3207) presenting cert instead of
// the self-signed one: a certificate from a test authority (package
// tlscert/tlstest), for clients that verify it against that authority and
// the MX host's name (RFC 8461 §4.2). RootCAs is then nil.
func WithCertificate(cert tls.Certificate) Option {
	return func(c *config) { c.startTLS, c.cert = true, &cert }
}

// WithREQUIRETLS advertises REQUIRETLS (RFC 8689 §4.1) and accepts it on
// MAIL FROM; go-smtp advertises it only under TLS, as the RFC has it.
// Received.RequireTLS says whether a message's MAIL FROM carried it.
func WithREQUIRETLS() Option { return func(c *config) { c.requireTLS = true } }

// WithFailingTLS offers STARTTLS and answers it with 220, but aborts every
// TLS handshake with an alert, as a receiver with a broken TLS stack or no
// protocol version or cipher suite in common with the client does. go-smtp
// then answers 550 in clear and the session goes on without TLS.
// Stats.TLSHandshakes counts the handshakes begun.
func WithFailingTLS() Option {
	return func(c *config) { c.startTLS, c.failTLS = true, true }
}

// WithRefusedSTARTTLS announces STARTTLS but answers the command with an
// error (go-smtp's 502, having no certificate), as a receiver whose TLS is
// misconfigured does; the session goes on in clear. Like
// WithoutPipelining, it edits the EHLO reply.
func WithRefusedSTARTTLS() Option { return func(c *config) { c.refuseTLS = true } }

// WithImplicitTLS speaks TLS from the first byte, as on port 465 (RFC 8314
// §3.3), with the same kind of certificate.
func WithImplicitTLS() Option { return func(c *config) { c.implicitTLS = true } }

// WithAuth requires AUTH PLAIN (RFC 4954) with these credentials before
// MAIL. Without TLS options AUTH is offered in clear; with them, only under
// TLS, as real servers do.
func WithAuth(user, pass string) Option {
	return func(c *config) { c.user, c.pass = user, pass }
}

// WithMaxMessageBytes announces SIZE n (RFC 1870) and refuses larger
// messages.
func WithMaxMessageBytes(n int64) Option { return func(c *config) { c.maxBytes = n } }

// WithoutPipelining hides PIPELINING (RFC 2920) from the EHLO reply, so
// that a client must wait for each reply, as with older servers. It works
// on connections in clear only: under TLS the server offers it again.
func WithoutPipelining() Option { return func(c *config) { c.noPipeline = true } }

// WithAddresses listens on each of these addresses (loopback addresses
// such as 127.0.0.2: Linux routes all of 127.0.0.0/8 to lo) instead of
// 127.0.0.1, all on one port: one receiving site with several MX hosts,
// whose limits, script and counters they share.
func WithAddresses(ips ...string) Option {
	return func(c *config) { c.hosts = append([]string(nil), ips...) }
}

// WithPort listens on port on every address. Without it the first address
// gets a free port and the others the same one, since a sender's
// --smtp-port dials one port on every MX host.
func WithPort(port int) Option { return func(c *config) { c.port = port } }

// WithDomain is the name the server greets with (Domain by default).
func WithDomain(name string) Option { return func(c *config) { c.domain = name } }

// WithMaxConnections caps the connections one client address may have
// open: one more is greeted with `421 4.7.0 Too many concurrent
// connections` and closed (RFC 5321 §3.8), as the big providers do.
// Stats.Refused counts them.
func WithMaxConnections(k int) Option { return func(c *config) { c.maxConns = k } }

// WithMaxRate caps the transactions one client address may begin in any
// window of length per (a sliding window): MAIL beyond n is answered
// `450 4.7.28` with Google's "unusual rate" text. Stats.Throttled counts
// them.
func WithMaxRate(n int, per time.Duration) Option {
	return func(c *config) { c.rateN, c.ratePer = n, per }
}

// WithGreylisting answers the first RCPT of each client address, sender
// and recipient triplet `451 4.7.1 Greylisted, try again later`, and the
// same triplet again until delay has passed since it was first seen, as
// Postgrey does (RFC 6647 §2.1). Stats.Greylisted counts the replies.
func WithGreylisting(delay time.Duration) Option {
	return func(c *config) { c.greylist, c.greylistDelay = true, delay }
}

// WithLatency makes every transaction wait a random time between min and
// max (uniform) once its data is read, before the final reply: a receiver
// that scans mail, as real ones do, so that each transaction costs time.
// It adds to SlowData's wait.
func WithLatency(min, max time.Duration) Option {
	return func(c *config) { c.latencyMin, c.latencyMax = min, max }
}

// WithDead accepts connections but never greets or answers: a receiver
// whose SMTP process hangs. The client's own timeouts are all that end
// the connection (or Close). Stats counts them in Connections and Open.
func WithDead() Option { return func(c *config) { c.dead = true } }

// WithClock gives the server the time for its greylisting and rate
// windows, so that a test can move it on instead of waiting.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }
