package resend

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/mailroom/mailroom/netguard"
)

// FetchTimeout bounds one fetch of an attachment's path, its body
// included, and all the fetches of one request together (the caller's
// context).
const FetchTimeout = 30 * time.Second

// maxFetchRedirects is how many redirects a fetch follows, each to a
// URL checked as the first one is.
const maxFetchRedirects = 3

// Fetched is an attachment fetched from its path.
type Fetched struct {
	Content []byte
	// ContentType is the answer's Content-Type ("" when it gave none).
	ContentType string
}

// Fetcher fetches an attachment's path, reading at most limit bytes of
// it.
type Fetcher interface {
	Fetch(ctx context.Context, rawURL string, limit int) (*Fetched, error)
}

// AttachmentFetcher fetches the attachments Resend's requests give by
// path (https://resend.com/docs/api-reference/emails/send-email,
// attachments.path): the URL is the client's to choose, so it is held to
// the rules of webhook URLs (docs/api.md "Webhooks and events", package
// webhook's client), which the same operator flag relaxes
// (--webhooks-allow-private):
//   - an https URL (http too when private targets are allowed), checked
//     with netguard.CheckURL, and each redirect's target as well;
//   - netguard.Control on every connection, on the address actually
//     dialled (GuardedDial), so that a name that resolves to a private
//     address when dialled (DNS rebinding) is refused too;
//   - no proxy, whatever the environment says (it would dial past the
//     guard);
//   - the whole fetch bounded by FetchTimeout, and its body by the room
//     the attachment limits leave (reading stops one byte past it).
type AttachmentFetcher struct {
	client       *http.Client
	resolver     netguard.Resolver
	allowPrivate bool
}

// NewAttachmentFetcher builds the fetcher: names resolved through
// resolver (nil: the system's), roots trusted instead of the system's
// when set (tests), private targets allowed when allowPrivate.
func NewAttachmentFetcher(resolver netguard.Resolver, roots *x509.CertPool, allowPrivate bool) *AttachmentFetcher {
	f := &AttachmentFetcher{resolver: resolver, allowPrivate: allowPrivate}
	if f.resolver == nil {
		f.resolver = net.DefaultResolver
	}
	dial := netguard.GuardedDial(resolver, &net.Dialer{Timeout: 10 * time.Second}, allowPrivate)
	f.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            dial,
			ForceAttemptHTTP2:      true,
			TLSClientConfig:        &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout:    10 * time.Second,
			ResponseHeaderTimeout:  FetchTimeout,
			MaxResponseHeaderBytes: 64 << 10,
			IdleConnTimeout:        30 * time.Second,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxFetchRedirects {
				return fmt.Errorf("it redirects more than %d times", maxFetchRedirects)
			}
			if err := netguard.CheckURL(req.Context(), f.resolver, req.URL.String(), f.allowPrivate); err != nil {
				return fmt.Errorf("it redirects to %s, which %v", req.URL.Redacted(), err)
			}
			return nil
		},
		Timeout: FetchTimeout,
	}
	return f
}

// Fetch GETs rawURL and returns its body, refusing one of more than limit
// bytes. Its error says, for the client, why the file could not be had.
func (f *AttachmentFetcher) Fetch(ctx context.Context, rawURL string, limit int) (*Fetched, error) {
	if err := netguard.CheckURL(ctx, f.resolver, rawURL, f.allowPrivate); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, errors.New("is not a URL")
	}
	resp, err := f.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, netguard.ErrRefused) {
			return nil, fmt.Errorf("could not be fetched: %v; the service only calls public addresses", err)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("could not be fetched in time: the files of one request are fetched within %s together", FetchTimeout)
		}
		return nil, fmt.Errorf("could not be fetched: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("answered %s, not the file", resp.Status)
	}
	if resp.ContentLength > int64(limit) {
		return nil, fmt.Errorf("is %d bytes, more than the %d left of the 10 MiB attachments may add up to", resp.ContentLength, limit)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("could not be read to its end: %v", err)
	case len(body) > limit:
		return nil, fmt.Errorf("is more than the %d bytes left of the 10 MiB attachments may add up to", limit)
	}
	out := &Fetched{Content: body}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		if mediaType, params, err := mime.ParseMediaType(ct); err == nil {
			// Mailroom labels a part utf-8 or us-ascii only (its
			// validation refuses another charset): the bytes are sent as
			// they came, labelled with the type alone.
			if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "us-ascii") {
				delete(params, "charset")
			}
			out.ContentType = mime.FormatMediaType(mediaType, params)
		}
	}
	return out, nil
}

// FilenameFromURL is the file name an attachment fetched from rawURL
// takes when the request gives none: the last segment of the URL's path
// ("" when it has none).
func FilenameFromURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	name := path.Base(u.Path)
	if name == "/" || name == "." {
		return ""
	}
	return name
}
