package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"time"
)

// WithCAFile trusts the PEM certificates in the file at path, and only
// them, for the service's TLS certificate: the self-signed certificate
// that `mailroom serve --dev` makes (mailroom-data/tls/cert.pem), or a
// private CA's. It is WithRootCAs with a pool of the file's certificates; a file
// that cannot be read or holds no PEM certificate makes every call fail,
// saying so.
//
// As curl's --cacert and tls.Config.RootCAs do, the file replaces the
// system's CAs: to trust it besides them, build the pool yourself
// (x509.SystemCertPool, then AppendCertsFromPEM) and give WithRootCAs.
func WithCAFile(path string) Option {
	return func(c *Client) {
		pem, err := os.ReadFile(path)
		if err != nil {
			c.optErr = fmt.Errorf("mailroom: WithCAFile: %w", err)
			return
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			c.optErr = fmt.Errorf("mailroom: WithCAFile: %s holds no PEM certificate", path)
			return
		}
		c.rootCAs = roots
	}
}

// WithRootCAs trusts the certificates of roots, and only them, for the
// service's TLS certificate.
//
// The requests then go through a transport with the settings of
// http.DefaultTransport (its timeouts and idle connections, HTTP/2, the
// proxy of the environment's HTTPS_PROXY and NO_PROXY) and these roots:
// not a bare &http.Transport{TLSClientConfig: …}, which would lose HTTP/2
// and the proxy. With WithHTTPClient too, in either order, the client's
// Transport is copied with these roots (HTTP/2 kept when it had no TLS
// configuration of its own); it must then be an *http.Transport, or nil,
// else every call fails, saying so. Neither the given client nor its
// transport is changed.
func WithRootCAs(roots *x509.CertPool) Option {
	return func(c *Client) {
		if roots == nil {
			c.optErr = errors.New("mailroom: WithRootCAs: the pool is nil")
			return
		}
		c.rootCAs = roots
	}
}

// trusting returns rt (nil: http.DefaultTransport) copied to trust roots,
// HTTP/2 kept.
func trusting(rt http.RoundTripper, roots *x509.CertPool) (http.RoundTripper, error) {
	var tr *http.Transport
	switch t := rt.(type) {
	case nil:
		tr = defaultTransport()
		// DefaultTransport's TLS configuration, if any, is net/http's
		// own, made when it first set up HTTP/2.
		tr.TLSClientConfig = nil
	case *http.Transport:
		tr = t.Clone() // its TLS configuration cloned too
	default:
		return nil, fmt.Errorf("mailroom: WithCAFile or WithRootCAs: the Transport of WithHTTPClient's client is a %T, not an *http.Transport: set its RootCAs yourself", rt)
	}
	switch {
	case tr.TLSClientConfig == nil:
		// A TLSClientConfig of its own turns net/http's automatic HTTP/2
		// off unless forced: the roots are no reason to lose it.
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		tr.ForceAttemptHTTP2 = true
	case slices.Contains(tr.TLSClientConfig.NextProtos, "h2"):
		// Clone set HTTP/2 up on the original first, which put "h2" in the
		// configuration the copy inherits: a copy that offers h2 must be
		// set up to speak it, else the server's h2 answer reads as a
		// malformed HTTP/1.1 one.
		tr.ForceAttemptHTTP2 = true
	}
	tr.TLSClientConfig.RootCAs = roots
	return tr, nil
}

// defaultTransport is a copy of http.DefaultTransport, or, when a program
// replaced it with a RoundTripper of another type, a transport with its
// documented settings.
func defaultTransport() *http.Transport {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		return t.Clone()
	}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}
