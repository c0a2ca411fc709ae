package tlsrpt

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/mailroom/mailroom/netguard"
)

// postTimeout bounds one POST of a report.
const postTimeout = time.Minute

// NewHTTPClient is the client reports are posted with, guarded as
// webhook deliveries are (package webhook's client, docs/api.md
// "Webhooks"): a TLS-RPT record's https URI is the recipient domain's to
// choose, so it must not reach the operator's own networks.
//   - no proxy, whatever the environment says (a proxy would dial past
//     the guard);
//   - netguard.Control on every connection, on the address actually
//     dialled (DNS rebinding is refused there), unless allowPrivate (the
//     operator's choice, as --webhook-allow-private);
//   - names resolved through resolver (--dns-server) when it is set;
//   - no redirect followed (its target was never checked);
//   - roots, when set, instead of the system's (tests).
func NewHTTPClient(resolver netguard.Resolver, roots *x509.CertPool, allowPrivate bool) *http.Client {
	dial := netguard.GuardedDial(resolver, &net.Dialer{Timeout: 10 * time.Second}, allowPrivate)
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            dial,
			ForceAttemptHTTP2:      true,
			TLSClientConfig:        &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout:    10 * time.Second,
			MaxResponseHeaderBytes: 64 << 10,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       postTimeout,
	}
}

// post sends a gzipped report to an https rua (RFC 8460 §5.4): a POST
// whose body is the report, of type application/tlsrpt+gzip; any 2xx is
// success.
func (r *Reporter) post(ctx context.Context, uri string, gz []byte) error {
	if err := netguard.CheckURL(ctx, r.resolver(), uri, r.AllowPrivate); err != nil {
		return fmt.Errorf("the rua %s %v", uri, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, uri, bytes.NewReader(gz))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/tlsrpt+gzip")
	resp, err := r.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%s answered %s", uri, resp.Status)
	}
	return nil
}
