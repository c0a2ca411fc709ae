package webhook

import (
	"bytes"
	"cmp"
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mailroom/mailroom"
)

// attempt POSTs one delivery and returns its outcome: the attempt to log
// and the delivery's next state; nil when no attempt was made because of
// the service itself (a secret it cannot open): nothing is logged against
// the endpoint, whose five days must not run for the operator's mistake,
// and the claim lapses, so the delivery is tried again after its lease.
func (d *Dispatcher) attempt(ctx context.Context, del *mailroom.WebhookDelivery) *mailroom.WebhookOutcome {
	start := time.Now()
	res := d.post(ctx, del)
	took := time.Since(start)
	if res.ours {
		return nil
	}
	if d.Observe != nil {
		d.Observe(res.outcome, took)
	}

	now := d.Now().UTC()
	n := del.Attempts + 1
	a := &mailroom.WebhookAttempt{
		ID: mailroom.NewID(mailroom.PrefixWebhookAttempt, now), AccountID: del.AccountID,
		EndpointID: del.EndpointID, DeliveryID: del.ID, Attempt: n,
		StatusCode: res.status, Duration: took, ResponseBody: res.body, CreatedAt: now,
		Status: mailroom.WebhookAttemptSucceeded,
	}
	if del.Event != nil {
		a.EventID, a.EventType = del.Event.ID, del.Event.Type
	}
	if res.outcome != OutcomeSucceeded {
		a.Status, a.Error = mailroom.WebhookAttemptFailed, res.err
		if res.retry {
			a.NextAttemptAt = NextAttempt(n, now)
		}
	}
	// The delivery as it stands after this attempt, as mailroom.NewAttempt
	// counts a recipient's: the claim's own copy is left as it was read.
	after := *del
	after.Attempts = n
	return &mailroom.WebhookOutcome{Delivery: &after, Attempt: a}
}

// result is what one POST came to.
type result struct {
	outcome string // one of the Outcome constants
	status  int    // the response's status, 0 when none came
	err     string // why it failed, in words for the endpoint's owner
	body    string // the response body's first bytes
	// retry is false when trying again cannot help (the event is gone).
	retry bool
	// ours is set when the service, not the endpoint, is at fault.
	ours bool
}

// post makes the request of Standard Webhooks ("Sending webhooks"): the
// body {"type","timestamp","data"} (or Resend's, for an endpoint of that
// format), the event id as webhook-id (the same on
// every retry, so that consumers deduplicate on it), the attempt's time
// as webhook-timestamp (a verifier refuses one older than its tolerance,
// so a retry is signed anew) and the signatures over both.
func (d *Dispatcher) post(ctx context.Context, del *mailroom.WebhookDelivery) result {
	if del.Event == nil || del.Endpoint == nil {
		return result{outcome: OutcomeNotSent, err: "the event is no longer stored"}
	}
	if err := d.checkScheme(del.Endpoint.URL); err != "" {
		return result{outcome: OutcomeRefused, err: err, retry: true}
	}
	signedAt := d.Now()
	keys, err := d.Keys(del.Endpoint, signedAt)
	if err != nil {
		// The operator's fault (a --secret-key that is not the one the
		// secret was sealed with), not the endpoint's: said in the log, and
		// in plain words to the customer.
		d.Log.Error("cannot sign a webhook delivery; it is tried again when its claim lapses", "delivery_id", del.ID, "endpoint_id", del.EndpointID, "err", err)
		return result{outcome: OutcomeNotSent, ours: true}
	}
	body, err := BodyFor(del.Endpoint, del.Event)
	if err != nil {
		// Stored data that does not read as its type's: trying again
		// cannot help.
		d.Log.Error("cannot write a webhook delivery's body", "delivery_id", del.ID, "endpoint_id", del.EndpointID, "err", err)
		return result{outcome: OutcomeNotSent, err: "the event's data cannot be written in the endpoint's format"}
	}

	ctx, cancel := context.WithTimeout(ctx, mailroom.WebhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, del.Endpoint.URL, bytes.NewReader(body))
	if err != nil {
		return result{outcome: OutcomeRefused, err: "the URL cannot be requested", retry: true}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Mailroom-Webhooks/"+d.version())
	SetSignature(req.Header, del.Event.ID, signedAt, Sign(keys, del.Event.ID, signedAt, body))

	resp, err := d.httpClient().Do(req)
	if err != nil {
		outcome, text := describe(err)
		return result{outcome: outcome, err: text, retry: true}
	}
	excerpt := readExcerpt(resp.Body)
	res := result{status: resp.StatusCode, body: excerpt, retry: true}
	switch {
	case AnswerSucceeded(resp.StatusCode):
		res.outcome = OutcomeSucceeded
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		res.outcome, res.err = OutcomeHTTPError, "redirect ("+strconv.Itoa(resp.StatusCode)+") not followed"
	default:
		res.outcome, res.err = OutcomeHTTPError, "HTTP "+strconv.Itoa(resp.StatusCode)
	}
	return res
}

// checkScheme refuses a URL that is not https (nor http when private
// targets are allowed). The URL was checked when it was saved; this is
// checked again at send time, so that a row changed by other means, or an
// operator who turned --webhooks-allow-private off, cannot send in the
// clear.
func (d *Dispatcher) checkScheme(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "":
		return "the URL is not valid"
	case u.Scheme == "https", d.AllowPrivate && u.Scheme == "http":
		return ""
	}
	return "the URL must be https"
}

func (d *Dispatcher) version() string { return cmp.Or(d.Version, "dev") }

// maxDrain bounds how much of a response past the excerpt is read and
// thrown away so that its connection can be kept alive; a receiver that
// answers with more gets its connection closed instead.
const maxDrain = 64 << 10

// readExcerpt reads a response's first mailroom.MaxWebhookResponseExcerpt
// bytes, drains a bounded amount more, and closes it. The excerpt is made
// valid UTF-8 without NUL bytes, since it is stored as text (PostgreSQL
// refuses both) and shown to people.
func readExcerpt(body io.ReadCloser) string {
	defer body.Close()
	b, _ := io.ReadAll(io.LimitReader(body, mailroom.MaxWebhookResponseExcerpt))
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxDrain))
	s := strings.ToValidUTF8(string(trimPartialRune(b)), "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	// The replacements may have made it longer than the limit.
	for len(s) > mailroom.MaxWebhookResponseExcerpt {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// trimPartialRune drops a UTF-8 sequence cut off at the end of b (by the
// excerpt's limit), which would otherwise show as a replacement character.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}
