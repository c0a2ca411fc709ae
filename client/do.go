package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// maxAnswerBytes bounds an answer read into memory: a raw message is at
// most a 16 MiB request's worth of content, base64 included.
const maxAnswerBytes = 64 << 20

// retryMode says which failures of a request may be tried again.
type retryMode int

const (
	// retrySafe: 429, 503 and every network error. For reads, sends under
	// an idempotency key, and writes that end in the same state however
	// often they are made.
	retrySafe retryMode = iota
	// retryUnsent: 429, 503, and network errors from before the request
	// could be sent (the connection was never made). For writes that
	// would be made twice.
	retryUnsent
	// retryNever: one attempt (GET /readyz: a 503 is its answer).
	retryNever
)

// call is one API request, however many attempts it takes.
type call struct {
	method string
	path   string // escaped, from /
	query  url.Values
	body   []byte // JSON, kept to be sent again on every attempt; nil for none
	header http.Header
	mode   retryMode
	out    any     // the 2xx answer is decoded into it unless nil
	raw    *[]byte // or kept as it is
	status *int    // receives the 2xx status when not nil
	// requestID, when not nil, receives the 2xx answer's X-Request-Id.
	requestID *string
	// answerHeader, when not nil, receives the 2xx answer's header fields.
	answerHeader *http.Header
	// keys are the idempotency keys a send went under, in the order of
	// its messages; nil for every other call. A send whose outcome is
	// unknown fails with an *OutcomeUnknownError naming them.
	keys []string
}

// newCall returns a call whose body is v encoded, or an error.
func newCall(method, path string, v any, mode retryMode) (*call, error) {
	cl := &call{method: method, path: path, mode: mode}
	if v != nil {
		// HTML bodies go as they are, not with < as \u003c.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, fmt.Errorf("mailroom: encode the body of %s %s: %w", method, path, err)
		}
		cl.body = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	return cl, nil
}

// do runs cl, retrying as its mode and the client's options allow.
func (c *Client) do(ctx context.Context, cl *call) error {
	if c.baseErr != nil {
		return c.baseErr
	}
	if c.optErr != nil {
		return c.optErr
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mailroom: %w", err) // nothing was sent
	}
	var last error
	acted := false // whether an attempt may have been acted on
	for attempt := 0; ; attempt++ {
		status, header, body, err := c.attempt(ctx, cl)
		if err == nil && status >= 200 && status < 300 {
			return cl.decode(status, header, body)
		}
		var wait time.Duration
		retry := false
		if err != nil {
			retry = retryableNetError(err, cl.mode)
			acted = acted || mayHaveArrived(err)
			err = fmt.Errorf("mailroom: %s %s: %w", cl.method, cl.path, err)
		} else {
			e := newError(status, header, body, c.now())
			err = e
			acted = acted || mayHaveActed(status)
			switch {
			case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
				retry = cl.mode != retryNever
				wait = e.RetryAfter
			case status == http.StatusBadGateway || status == http.StatusGatewayTimeout:
				// A proxy in front that lost the service: safe to repeat
				// only what may be repeated after a network error.
				retry = cl.mode == retrySafe
			}
		}
		if ctx.Err() != nil {
			// The caller's context ended: never retried.
			if !errors.Is(err, ctx.Err()) {
				last = err // an answer that came as the context ended
			}
			if last == nil {
				return cl.outcome(err, acted) // the first attempt was cut short
			}
			return cl.outcome(canceled(ctx, last), acted)
		}
		last = err
		if !retry || attempt >= c.maxRetries {
			return cl.outcome(last, acted)
		}
		if wait == 0 {
			wait = c.jitter(c.backoffCap(attempt))
		} else if wait > c.retryMax {
			return cl.outcome(last, acted) // the caller decides whether to wait that long
		} else {
			// Saturating: a cap of the longest Duration lets through the
			// longest Retry-After, which a fifth more would overflow.
			wait += min(c.spread(wait/5), math.MaxInt64-wait)
		}
		if deadline, ok := ctx.Deadline(); ok && c.now().Add(wait).After(deadline) {
			return cl.outcome(last, acted)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return cl.outcome(canceled(ctx, last), acted)
		}
	}
}

// canceled is the error of a call whose context ended between attempts.
func canceled(ctx context.Context, last error) error {
	if last == nil {
		return fmt.Errorf("mailroom: %w", ctx.Err())
	}
	return fmt.Errorf("mailroom: %w; the last attempt: %w", ctx.Err(), last)
}

// attempt sends cl once and reads its answer whole.
func (c *Client) attempt(ctx context.Context, cl *call) (int, http.Header, []byte, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	u := c.base + cl.path
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	var body io.Reader
	if cl.body != nil {
		body = bytes.NewReader(cl.body)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, u, body)
	if err != nil {
		return 0, nil, nil, err
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if cl.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if cl.raw == nil {
		req.Header.Set("Accept", "application/json")
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	for k, vs := range cl.header {
		req.Header[k] = vs
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return 0, nil, nil, err
	}
	if len(b) > maxAnswerBytes {
		return 0, nil, nil, fmt.Errorf("the answer is larger than %d MiB", maxAnswerBytes>>20)
	}
	return resp.StatusCode, resp.Header, b, nil
}

// decode takes a 2xx answer.
func (cl *call) decode(status int, header http.Header, body []byte) error {
	if cl.status != nil {
		*cl.status = status
	}
	if cl.requestID != nil {
		*cl.requestID = header.Get("X-Request-Id")
	}
	if cl.answerHeader != nil {
		*cl.answerHeader = header
	}
	switch {
	case cl.raw != nil:
		*cl.raw = body
	case cl.out != nil:
		if err := json.Unmarshal(body, cl.out); err != nil {
			return fmt.Errorf("mailroom: decode the answer to %s %s: %w", cl.method, cl.path, err)
		}
	}
	return nil
}

// backoffCap is the longest wait before retry n (from 0):
// min(retryMax, retryBase×2ⁿ).
func (c *Client) backoffCap(n int) time.Duration {
	d := c.retryBase
	for i := 0; i < n && d < c.retryMax; i++ {
		d *= 2
	}
	return min(d, c.retryMax)
}

// equalJitter is a random wait from half of maxWait to maxWait.
func equalJitter(maxWait time.Duration) time.Duration {
	if maxWait <= 0 {
		return 0
	}
	return maxWait/2 + mrand.N(maxWait/2+1)
}

// uniformUpTo is a random wait from 0 to maxWait.
func uniformUpTo(maxWait time.Duration) time.Duration {
	if maxWait <= 0 {
		return 0
	}
	return mrand.N(maxWait + 1)
}

func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryableNetError says whether a failure to get an answer may be tried
// again under mode. The caller's context has not ended: a deadline here is
// one attempt's (WithTimeout).
func retryableNetError(err error, mode retryMode) bool {
	if mode == retryNever || permanentNetError(err) {
		return false
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // *url.Error is a net.Error itself, whatever it wraps
	}
	if mode == retryUnsent {
		// Only a connection never made is sure to have carried nothing.
		var op *net.OpError
		return errors.As(err, &op) && op.Op == "dial"
	}
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE)
}

// permanentNetError says whether err fails the same way every time: a
// certificate that does not verify, a server that does not speak TLS.
func permanentNetError(err error) bool {
	var cve *tls.CertificateVerificationError
	var uae x509.UnknownAuthorityError
	var he x509.HostnameError
	var cie x509.CertificateInvalidError
	var rhe tls.RecordHeaderError
	return errors.As(err, &cve) || errors.As(err, &uae) || errors.As(err, &he) || errors.As(err, &cie) ||
		errors.As(err, &rhe)
}

// maxRetryAfterSeconds is the longest Retry-After a time.Duration holds,
// in whole seconds (about 292 years).
const maxRetryAfterSeconds = math.MaxInt64 / int64(time.Second)

// parseRetryAfter reads a Retry-After header: whole seconds, or an HTTP
// date (RFC 9110 §10.2.3). 0 when absent or unreadable. The wait is the
// server's, however long: a number past time.Duration's range (even past
// int64's) is the longest Duration, a wait no retry begins, rather than
// unreadable, which would be retried at once.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	// On overflow ParseInt answers ErrRange with MaxInt64 (or MinInt64).
	if n, err := strconv.ParseInt(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, maxRetryAfterSeconds)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// NewIdempotencyKey returns a random key of 32 hex characters (128 bits
// from crypto/rand), as Send and SendBatch make for requests that have
// none.
func NewIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b[:])
}

// pathEscape escapes one path segment: an address's or a name's "/"
// stays inside its segment.
func pathEscape(s string) string { return url.PathEscape(s) }
