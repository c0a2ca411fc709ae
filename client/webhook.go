package client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mailroom/mailroom/client/api"
)

// Webhook requests are signed by the Standard Webhooks rules
// (standardwebhooks.com): the webhook-signature header holds one or more
// space-separated "v1,<base64>" entries, each the HMAC-SHA256 of
// "<webhook-id>.<webhook-timestamp>.<body>" keyed by the bytes that the
// base64 part of a "whsec_…" secret encodes. During the 24 hours after a
// rotation two signatures are sent, one with each secret.

// WebhookTolerance is how far a webhook-timestamp may be from the
// verifier's clock, either way: an older request is refused as a replay.
const WebhookTolerance = 5 * time.Minute

// The errors of VerifyWebhook; test for them with errors.Is.
var (
	// ErrWebhookMissingHeader: webhook-id, webhook-timestamp or
	// webhook-signature is absent or empty (the error names which).
	ErrWebhookMissingHeader = errors.New("mailroom: webhook: missing header")
	// ErrWebhookInvalidSecret: the secret is not "whsec_" and base64.
	ErrWebhookInvalidSecret = errors.New("mailroom: webhook: the secret is not a whsec_ secret")
	// ErrWebhookInvalidTimestamp: webhook-timestamp is not a number of
	// seconds.
	ErrWebhookInvalidTimestamp = errors.New("mailroom: webhook: webhook-timestamp is not a unix time")
	// ErrWebhookTooOld: webhook-timestamp is more than WebhookTolerance in
	// the past.
	ErrWebhookTooOld = errors.New("mailroom: webhook: webhook-timestamp is too old")
	// ErrWebhookTooNew: webhook-timestamp is more than WebhookTolerance in
	// the future.
	ErrWebhookTooNew = errors.New("mailroom: webhook: webhook-timestamp is too far in the future")
	// ErrWebhookNoMatchingSignature: no v1 signature of webhook-signature
	// was made with the secret over this id, timestamp and body.
	ErrWebhookNoMatchingSignature = errors.New("mailroom: webhook: no signature matches")
)

// VerifyWebhook checks that a webhook request comes from the service and
// is recent: its webhook-timestamp within WebhookTolerance of now, and one
// of the v1 signatures of its webhook-signature made with secret (the
// endpoint's "whsec_…" secret) over its webhook-id, webhook-timestamp and
// body. Verify the raw body, before parsing it (ParseEvent), and
// deduplicate on webhook-id: a delivery may come more than once.
func VerifyWebhook(secret string, header http.Header, body []byte) error {
	return VerifyWebhookAt(secret, header, body, time.Now())
}

// VerifyWebhookAt is VerifyWebhook with the clock at now.
func VerifyWebhookAt(secret string, header http.Header, body []byte, now time.Time) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(strings.TrimSpace(secret), "whsec_"))
	if err != nil || len(key) == 0 {
		return ErrWebhookInvalidSecret
	}
	id, ts, sigs := header.Get("webhook-id"), header.Get("webhook-timestamp"), header.Get("webhook-signature")
	for _, h := range []struct{ name, value string }{{"webhook-id", id}, {"webhook-timestamp", ts}, {"webhook-signature", sigs}} {
		if h.value == "" {
			return fmt.Errorf("%w: %s", ErrWebhookMissingHeader, h.name)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %q", ErrWebhookInvalidTimestamp, ts)
	}
	switch at := time.Unix(sec, 0); {
	case now.Sub(at) > WebhookTolerance:
		return fmt.Errorf("%w: signed at %s, %s ago", ErrWebhookTooOld, at.UTC().Format(time.RFC3339), now.Sub(at).Round(time.Second))
	case at.Sub(now) > WebhookTolerance:
		return fmt.Errorf("%w: signed at %s, %s ahead", ErrWebhookTooNew, at.UTC().Format(time.RFC3339), at.Sub(now).Round(time.Second))
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	want := m.Sum(nil)
	for _, s := range strings.Fields(sigs) {
		version, sig, ok := strings.Cut(s, ",")
		if !ok || version != "v1" {
			continue // another scheme; Standard Webhooks says to ignore it
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrWebhookNoMatchingSignature
}

// ParseEvent decodes the body of a webhook delivery. Verify it first
// (VerifyWebhook). Its EmailData, DomainData and TestData decode the data
// of each kind of event.
func ParseEvent(body []byte) (*Event, error) {
	var ev api.Event
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, fmt.Errorf("mailroom: webhook body: %w", err)
	}
	if ev.Type == "" {
		return nil, errors.New("mailroom: webhook body: no type")
	}
	return &ev, nil
}
