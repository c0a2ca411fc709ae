// Package client is the Go client of Mailroom's HTTPS JSON API: a typed
// method for every route, list iterators that follow cursors, the error body
// as a typed error, retries with backoff that never send a message twice,
// and the verification of webhook requests.
//
// Import it under the name mailroom, as every example here does: the
// package's own name, client, is the name a program wants for its
// variable.
//
//	import mailroom "github.com/mailroom/mailroom/client"
//
//	client := mailroom.New("https://mail.example.com", os.Getenv("MAILROOM_API_KEY"))
//	res, err := client.Send(ctx, &mailroom.SendRequest{From: "Shop <orders@shop.example>",
//		To: []string{"ann@example.com"}, Subject: "Your receipt", Text: "Thanks!"})
//
// The request and response types are those of package
// github.com/mailroom/mailroom/client/api, under the same names here (type
// aliases), and so are the values of every enumeration (message, recipient,
// send, domain, record and key statuses, event types, scopes, …), so that
// one import is enough: m.Status == mailroom.MessageDelivered.
//
// # Trusting a certificate
//
// `mailroom serve --dev` serves a self-signed certificate
// (mailroom-data/tls/cert.pem). WithCAFile trusts it, and only it, on a
// copy of http.DefaultTransport, so that HTTP/2 and the environment's
// proxy stay as they were; WithRootCAs takes an *x509.CertPool instead:
//
//	client := mailroom.New("https://localhost:8443", key,
//		mailroom.WithCAFile("mailroom-data/tls/cert.pem"))
//
// # Errors
//
// Every answer that is not a 2xx is an *Error holding the status, the
// API's error code, its message and details, the request id and
// Retry-After: use errors.As, or IsCode(err, mailroom.CodeNotFound). So is
// a refused item of a batch: SendBatch's res.Data[i].Err(). Other errors
// are the network's, the context's, or a body that could not be encoded or
// decoded.
//
// # Retries
//
// A 429 (rate_limited) or a 503 (service_unavailable: the service refused
// before acting) is retried on every route, after the Retry-After the
// service gives, else after an exponential backoff with jitter
// (WithRetryBackoff, WithMaxRetries). A network error (a refused or failed
// connection, a reset, a timeout of one attempt: WithTimeout) is retried
// when repeating the request is harmless: reads, the sends (under an
// idempotency key, below), and the writes that end in the same state
// however often they are made (PATCH, DELETE, verifying a domain, adding a
// suppression, rendering). The other writes (creating a key, a domain, a
// template or a webhook, saving a template version, rotating a secret,
// testing a webhook, replaying an event) are retried after a network error
// only when the connection was never made, for the request may have been
// acted on. A retried DELETE whose first attempt was acted on answers
// not_found (or invalid_state, for a cancel).
//
// Retrying never outlives the caller's context: a wait that would end
// after the context's deadline is not begun, and the last error is
// returned instead; a Retry-After longer than the backoff's cap (30 s by
// default) is returned to the caller as well, in Error.RetryAfter.
//
// # Idempotency
//
// Send puts an Idempotency-Key header on the request when the
// SendRequest has no IdempotencyKey: a random key made once per call and
// sent on every attempt, so that a retry answers "duplicate" instead of
// sending again. SendBatch gives each item without an IdempotencyKey a key
// of its own (the service refuses the header on a batch). A send that may
// have been accepted though no attempt succeeded (the answer was lost, a
// 500, a proxy's 502 or 504) fails with an *OutcomeUnknownError naming the
// keys: send again under them (OutcomeUnknownError.Keyed), never under new
// ones. To make retries of your own (a new call after a crash) safe too,
// give your own keys.
//
// # Webhooks
//
// VerifyWebhook checks a webhook request by the Standard Webhooks rules;
// ParseEvent decodes its body.
package client

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Version is this client's version, sent in its User-Agent.
const Version = "0.1.0"

// Defaults of the options.
const (
	// DefaultTimeout bounds one attempt of a request, reading its answer
	// included.
	DefaultTimeout = 15 * time.Second
	// DefaultMaxRetries is how many times a request is tried again.
	DefaultMaxRetries = 4
	// DefaultRetryBase and DefaultRetryMax shape the backoff: the wait
	// before retry n (from 0) is random between 0 and
	// min(DefaultRetryMax, DefaultRetryBase×2ⁿ).
	DefaultRetryBase = 500 * time.Millisecond
	DefaultRetryMax  = 30 * time.Second
)

// Client calls one Mailroom service with one API key. It is safe for
// concurrent use.
type Client struct {
	base       string // scheme://host[:port][/prefix], without a trailing slash
	key        string
	hc         *http.Client
	timeout    time.Duration
	maxRetries int
	retryBase  time.Duration
	retryMax   time.Duration
	userAgent  string

	// Seams for tests: the clock, the waits, the jitter and the
	// idempotency keys.
	now    func() time.Time
	sleep  func(ctx context.Context, d time.Duration) error
	jitter func(max time.Duration) time.Duration
	spread func(max time.Duration) time.Duration
	newKey func() string

	// rootCAs, when set, are the only CAs trusted (WithCAFile,
	// WithRootCAs).
	rootCAs *x509.CertPool

	// baseErr is why baseURL is not usable, optErr why an option is not
	// (a CA file that does not read); every call returns it.
	baseErr error
	optErr  error
}

// Option sets an option of New.
type Option func(*Client)

// WithHTTPClient sends the requests with hc: for a proxy of your own,
// client certificates or instrumentation (to trust a CA, such as serve
// --dev's self-signed certificate, WithCAFile is enough). Its own Timeout,
// if any, applies besides WithTimeout's. Its redirect policy is replaced:
// the client never follows a redirect.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithTimeout bounds each attempt of a request, reading the answer
// included (DefaultTimeout, 15 s). 0 takes the bound away (the context's
// deadline still applies).
func WithTimeout(d time.Duration) Option {
	return func(c *Client) { c.timeout = max(d, 0) }
}

// WithMaxRetries sets how many times a retryable failure is tried again
// (DefaultMaxRetries, 4); 0 turns retries off.
func WithMaxRetries(n int) Option {
	return func(c *Client) { c.maxRetries = max(n, 0) }
}

// WithRetryBackoff sets the backoff between retries: the wait before retry
// n (from 0) is random between half of min(maxWait, base×2ⁿ) and all of it
// ("equal jitter": spread out, yet long enough for the default four
// retries to ride out a service's restart of a few seconds). A Retry-After
// from the service is waited instead, plus up to a fifth more so that
// clients told the same time do not come back together, when it is at
// most maxWait. Defaults: DefaultRetryBase (0.5 s) and DefaultRetryMax
// (30 s).
func WithRetryBackoff(base, maxWait time.Duration) Option {
	return func(c *Client) {
		if base > 0 {
			c.retryBase = base
		}
		if maxWait > 0 {
			c.retryMax = maxWait
		}
		c.retryMax = max(c.retryMax, c.retryBase)
	}
}

// WithUserAgent sets the User-Agent header (default
// "mailroom-go/<Version>").
func WithUserAgent(ua string) Option {
	return func(c *Client) { c.userAgent = ua }
}

// New returns a client of the service at baseURL (such as
// "https://127.0.0.1:8443", or with the path prefix of a reverse proxy)
// calling with key ("mailroom_…").
func New(baseURL, key string, opts ...Option) *Client {
	c := &Client{
		base:       strings.TrimRight(baseURL, "/"),
		key:        key,
		hc:         &http.Client{},
		timeout:    DefaultTimeout,
		maxRetries: DefaultMaxRetries,
		retryBase:  DefaultRetryBase,
		retryMax:   DefaultRetryMax,
		userAgent:  "mailroom-go/" + Version,
		now:        time.Now,
		sleep:      sleepContext,
		jitter:     equalJitter,
		spread:     uniformUpTo,
		newKey:     NewIdempotencyKey,
	}
	for _, o := range opts {
		o(c)
	}
	c.baseErr = checkBaseURL(c.base)
	hc := *c.hc
	if c.rootCAs != nil && c.optErr == nil {
		tr, err := trusting(hc.Transport, c.rootCAs)
		hc.Transport, c.optErr = tr, err
	}
	// A redirect is answered to the caller, never followed: following
	// would turn a POST into a GET (RFC 9110 §15.4) and could carry the
	// key over plain http.
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.hc = &hc
	return c
}

// checkBaseURL says what is wrong with a base URL, if anything.
func checkBaseURL(base string) error {
	u, err := url.Parse(base)
	switch {
	case err != nil:
		return fmt.Errorf("mailroom: the base URL %q does not parse: %w", base, err)
	case u.Scheme != "https" && u.Scheme != "http", u.Host == "":
		return fmt.Errorf("mailroom: the base URL %q must be https://host[:port][/prefix]", base)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fmt.Errorf("mailroom: the base URL %q must have no query, fragment or user", base)
	}
	return nil
}

// BaseURL returns the base URL the client calls.
func (c *Client) BaseURL() string { return c.base }
