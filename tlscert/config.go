package tlscert

import "crypto/tls"

// ServerConfig returns the TLS configuration of the HTTPS listener serving
// cert.
//
// TLS 1.0 and 1.1 are refused (RFC 8996 deprecates them). HTTP/2 is offered
// before HTTP/1.1 through ALPN (RFC 7301) so that clients able to multiplex
// do; net/http serves both when NextProtos lists them.
func ServerConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"h2", "http/1.1"},
	}
}
