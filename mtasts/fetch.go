package mtasts

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/mailroom/mailroom"
)

// MaxPolicySize is the largest policy file read (docs/api.md "TLS policy":
// 64 KiB; RFC 8461 §3.3 lets senders bound it). A larger one is refused,
// and never read past this bound.
const MaxPolicySize = 64 << 10

// wellKnownPath is where the policy is served (RFC 8461 §3.2).
const wellKnownPath = "/.well-known/mta-sts.txt"

// fetchError is a policy that could not be had, with its TLS-RPT result
// type (RFC 8460 §4.3.2.1): sts-webpki-invalid when the policy host's
// certificate does not verify for mta-sts.<domain>; sts-policy-invalid
// when a response came that is not a valid policy (media type, size,
// syntax); sts-policy-fetch-error for everything else (DNS, connection,
// timeout, a status other than 200, a redirect).
type fetchError struct {
	failure mailroom.TLSFailure
	detail  string
}

func (e *fetchError) Error() string { return string(e.failure) + ": " + e.detail }

// newClient is the HTTPS client of policy fetches (RFC 8461 §3.3): the
// certificate verified for the URL's host, mta-sts.<domain>, against
// roots; no redirects followed (CheckRedirect hands the 3xx back, which
// fetch refuses); no HTTP cache, no proxy (a fetch goes where MX
// connections go, straight); no connection kept, since a domain's policy
// is fetched rarely; and the whole exchange bounded by timeout.
func newClient(dial func(ctx context.Context, network, addr string) (net.Conn, error), roots *tls.Config, timeout time.Duration) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            dial,
			TLSClientConfig:        roots,
			TLSHandshakeTimeout:    timeout,
			ResponseHeaderTimeout:  timeout,
			DisableKeepAlives:      true,
			DisableCompression:     true,
			MaxResponseHeaderBytes: 64 << 10,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       timeout,
	}
}

// dialPolicyHost connects to the policy host, its addresses looked up
// through the configured resolver (--dns-server) rather than the system's,
// on p.port (443 but in tests), trying each address in turn.
func (p *Policies) dialPolicyHost(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := p.resolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, ip := range ips {
		conn, err := p.dialer.DialContext(ctx, network, net.JoinHostPort(ip.IP.String(), strconv.Itoa(p.port)))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// fetch gets and parses domain's policy from
// https://mta-sts.<domain>/.well-known/mta-sts.txt (RFC 8461 §3.3).
func (p *Policies) fetch(ctx context.Context, domain string) (Policy, string, *fetchError) {
	where := "https://mta-sts." + domain + wellKnownPath
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, where, nil)
	if err != nil {
		return Policy{}, "", &fetchError{mailroom.TLSFailSTSPolicyFetch, err.Error()}
	}
	resp, err := p.client.Do(req)
	if err != nil {
		var verr *tls.CertificateVerificationError
		if errors.As(err, &verr) {
			return Policy{}, "", &fetchError{mailroom.TLSFailSTSWebPKIInvalid, fmt.Sprintf("%s: %v", where, verr.Err)}
		}
		return Policy{}, "", &fetchError{mailroom.TLSFailSTSPolicyFetch, fmt.Sprintf("%s: %v", where, unwrapURLError(err))}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		detail := fmt.Sprintf("%s answered %s", where, resp.Status)
		if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && loc != "" {
			detail += ", a redirect, which is not followed (RFC 8461 §3.3)"
		}
		return Policy{}, "", &fetchError{mailroom.TLSFailSTSPolicyFetch, detail}
	}
	// RFC 8461 §3.3: the policy is served as text/plain (a charset
	// parameter may come with it).
	mediaType, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mediaType != "text/plain" {
		return Policy{}, "", &fetchError{mailroom.TLSFailSTSPolicyInvalid,
			fmt.Sprintf("%s is served as %q, not text/plain", where, clip(resp.Header.Get("Content-Type")))}
	}
	if resp.ContentLength > MaxPolicySize {
		return Policy{}, "", tooLarge(where)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxPolicySize+1))
	if err != nil {
		return Policy{}, "", &fetchError{mailroom.TLSFailSTSPolicyFetch, fmt.Sprintf("%s: reading: %v", where, unwrapURLError(err))}
	}
	if len(body) > MaxPolicySize {
		return Policy{}, "", tooLarge(where)
	}
	text := string(body)
	pol, err := ParsePolicy(text)
	if err != nil {
		return Policy{}, "", &fetchError{mailroom.TLSFailSTSPolicyInvalid, fmt.Sprintf("%s: %v", where, err)}
	}
	return pol, text, nil
}

func tooLarge(where string) *fetchError {
	return &fetchError{mailroom.TLSFailSTSPolicyInvalid, fmt.Sprintf("%s is larger than %d bytes", where, MaxPolicySize)}
}

// unwrapURLError drops net/http's `Get "url": ` prefix, the URL being
// named already.
func unwrapURLError(err error) error {
	if uerr, ok := errors.AsType[*url.Error](err); ok {
		return uerr.Err
	}
	return err
}
