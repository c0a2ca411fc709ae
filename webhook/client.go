package webhook

import (
	"crypto/tls"
	"net"
	"net/http"
	"time"

	"github.com/mailroom/mailroom/netguard"
)

// httpClient is the one client every attempt of the dispatcher uses, so
// that its transport keeps connections alive per endpoint host across
// attempts (docs/api.md: a fast endpoint is not made to shake hands per
// event).
func (d *Dispatcher) httpClient() *http.Client {
	d.clientOnce.Do(func() { d.client = d.newClient() })
	return d.client
}

// newClient builds the client of docs/api.md "Webhooks and events":
//   - no proxy, whatever the environment says: a proxy would dial on our
//     behalf, past the guard, and HTTPS_PROXY in an operator's shell is
//     not meant for customers' URLs;
//   - the guard (netguard.Control) on every connection, on the address
//     actually dialled, so that a name that resolves to a private address
//     now (DNS rebinding) is refused although it passed when it was saved;
//   - no redirect followed (its target was never checked, and the 3xx is a
//     failure of the attempt: AnswerSucceeded);
//   - the whole attempt bounded by mailroom.WebhookTimeout (attempt sets it
//     on the request's context, which covers the body too).
func (d *Dispatcher) newClient() *http.Client {
	dial := netguard.GuardedDial(d.Resolver, &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}, d.AllowPrivate)
	transport := &http.Transport{
		Proxy:       nil,
		DialContext: dial,
		// Setting a dialer and a TLS configuration turns HTTP/2 off unless
		// asked for, as http.DefaultTransport asks.
		ForceAttemptHTTP2: true,
		TLSClientConfig:   &tls.Config{RootCAs: d.RootCAs, MinVersion: tls.VersionTLS12},
		// As many idle connections to a host as attempts may run to one
		// endpoint, so that a busy endpoint's connections are all reused.
		MaxIdleConnsPerHost:    d.perEndpoint(),
		MaxIdleConns:           d.maxInFlight(),
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport:     transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// closeIdle drops the kept-alive connections (the end of a Run).
func (d *Dispatcher) closeIdle() {
	if d.client != nil {
		d.client.CloseIdleConnections()
	}
}
