package smtpserver

import (
	"crypto/tls"
	"log/slog"
)

// Config is what every listener is set with. The listeners embed it, so
// that their fields read s.TLS, s.Hostname, s.MaxBytes and so on; set them
// before the first Serve, and not afterwards.
type Config struct {
	// TLS, when set, is offered through STARTTLS (RFC 3207) and spoken
	// from the first byte on an implicit-TLS port. Its NextProtos are
	// ignored: SMTP has no ALPN protocol, and a server insisting on "h2"
	// would fail a client that offers another.
	TLS *tls.Config
	// Hostname is the name the server greets with (RFC 5321 §4.3.1) and
	// names in its 421s; the machine's hostname when empty.
	Hostname string
	// Log receives the server's lines (refused connections at Debug);
	// slog.Default() when nil. Message contents are never logged.
	Log *slog.Logger
	// Observe, when set, is called once for each outcome of a connection,
	// recipient, login or message (the listener's Outcomes); its Metrics
	// makes one.
	Observe func(outcome string)
	Limits
}
