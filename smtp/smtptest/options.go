package smtptest

// Option changes how a Server is started.
type Option func(*config)

type config struct {
	startTLS    bool
	implicitTLS bool
	failTLS     bool
	refuseTLS   bool
	user, pass  string
	maxBytes    int64
	noPipeline  bool
}

// WithSTARTTLS offers STARTTLS (RFC 3207) with a self-signed certificate
// made in memory; RootCAs trusts it.
func WithSTARTTLS() Option { return func(c *config) { c.startTLS = true } }

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
