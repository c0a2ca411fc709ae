package smtp

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// RelayConfig is the smarthost of relay mode (--relay-url).
type RelayConfig struct {
	Host string
	Port int
	// Username and Password, when set, are given with AUTH PLAIN, and only
	// over TLS.
	Username string
	Password string
	// ImplicitTLS is smtps://: TLS from the first byte (RFC 8314 §3.3);
	// otherwise STARTTLS is used when the relay offers it.
	ImplicitTLS bool
}

// Default relay ports: smtp:// means the SMTP port, smtps:// the
// submissions port of RFC 8314. A submission relay on 587 is written with
// its port.
const (
	DefaultRelayPort    = 25
	DefaultRelayTLSPort = 465
)

// ParseRelayURL reads smtp://user:pass@host:port or smtps://… . User and
// password are percent-decoded. Its errors never quote the password, nor
// the URL, which holds it: they go to logs.
func ParseRelayURL(raw string) (RelayConfig, error) {
	const form = "the relay URL must look like smtp://user:password@host:port or smtps://user:password@host:port"
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		// url.Error quotes the whole URL, and a bad escape quotes part of
		// the password: say only that it could not be read.
		return RelayConfig{}, errors.New("cannot parse the relay URL: " + form)
	}
	var cfg RelayConfig
	switch strings.ToLower(u.Scheme) {
	case "smtp":
		cfg.Port = DefaultRelayPort
	case "smtps":
		cfg.ImplicitTLS = true
		cfg.Port = DefaultRelayTLSPort
	default:
		return RelayConfig{}, fmt.Errorf("relay URL scheme %q is not smtp or smtps: %s", u.Scheme, form)
	}
	cfg.Host = u.Hostname()
	if cfg.Host == "" {
		return RelayConfig{}, errors.New("relay URL has no host: " + form)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			// The value is not repeated: a '#' or '/' in an unescaped
			// password makes the parser take part of it for the port.
			return RelayConfig{}, errors.New("relay URL port is not a number from 1 to 65535 (escape any #, / or @ in the password)")
		}
		cfg.Port = n
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return RelayConfig{}, errors.New("relay URL has a path, query or fragment, which mean nothing here: " + form)
	}
	if u.User != nil {
		cfg.Username = u.User.Username()
		cfg.Password, _ = u.User.Password()
		if cfg.Username == "" {
			return RelayConfig{}, errors.New("relay URL has a password but no user name: " + form)
		}
		if cfg.Password == "" {
			return RelayConfig{}, fmt.Errorf("relay URL has user name %q but no password: %s", cfg.Username, form)
		}
	}
	return cfg, nil
}

// Addr is host:port.
func (c RelayConfig) Addr() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }

// String is the relay's URL with the password masked, for logs and flags'
// help text.
func (c RelayConfig) String() string {
	u := url.URL{Scheme: "smtp", Host: c.Addr()}
	if c.ImplicitTLS {
		u.Scheme = "smtps"
	}
	if c.Username != "" {
		u.User = url.UserPassword(c.Username, "xxxxx")
	}
	return u.String()
}

// GoString keeps %#v from printing the password too.
func (c RelayConfig) GoString() string { return "smtp.RelayConfig(" + c.String() + ")" }
