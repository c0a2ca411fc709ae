package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// The wire format of Standard Webhooks (standardwebhooks.com, "Signature
// scheme"): an HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}",
// keyed by the bytes that the base64 part of a "whsec_" secret encodes,
// sent as "v1,<base64>" in webhook-signature; several signatures (during a
// secret's rotation) are separated by spaces.

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_"

// webhookSecretBytes is the size of a signing key: Standard Webhooks asks
// for between 24 and 64 bytes; 32 match the HMAC-SHA256 block's strength.
const webhookSecretBytes = 32

// NewSecret returns a fresh signing key and its "whsec_" form,
// which is shown to the customer once.
func NewSecret() (key []byte, secret string) {
	key = make([]byte, webhookSecretBytes)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (Go 1.24)
	return key, SecretString(key)
}

// SecretString is the "whsec_" form of a signing key.
func SecretString(key []byte) string {
	return SecretPrefix + base64.StdEncoding.EncodeToString(key)
}

// ParseSecret returns the signing key a "whsec_" secret encodes.
func ParseSecret(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(key) == 0 {
		return nil, errors.New("not a whsec_ secret")
	}
	return key, nil
}

// Sign returns the webhook-signature header of a request: one
// "v1,<base64>" per key, separated by spaces.
func Sign(keys [][]byte, id string, timestamp time.Time, body []byte) string {
	sigs := make([]string, len(keys))
	for i, k := range keys {
		sigs[i] = "v1," + base64.StdEncoding.EncodeToString(webhookMAC(k, id, timestamp.Unix(), body))
	}
	return strings.Join(sigs, " ")
}

func webhookMAC(key []byte, id string, ts int64, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// SetSignature sets the headers that sign a request: Standard Webhooks'
// webhook-id, webhook-timestamp and webhook-signature, and the same values
// again as svix-id, svix-timestamp and svix-signature, the names Svix's
// libraries read and Resend's documentation tells its users to pass to
// webhooks.verify (the Node SDK hands them to the Standard Webhooks library;
// the Go SDK reads them as WebhookHeaders). Every request carries both,
// whatever the endpoint's format, so that any of those verifiers accepts
// it.
func SetSignature(h http.Header, id string, timestamp time.Time, signature string) {
	ts := strconv.FormatInt(timestamp.Unix(), 10)
	for _, prefix := range []string{"Webhook-", "Svix-"} {
		h.Set(prefix+"Id", id)
		h.Set(prefix+"Timestamp", ts)
		h.Set(prefix+"Signature", signature)
	}
}

// Tolerance is how far a webhook-timestamp may be from the
// verifier's clock, as the Standard Webhooks libraries allow: older
// requests are refused as replays.
const Tolerance = 5 * time.Minute

// Verify checks a request by the rules of Standard Webhooks: its
// timestamp within Tolerance of now, and one of its v1 signatures
// made with key. It is what a consumer (and this project's tests and Go
// client) runs on a request it receives.
func Verify(key []byte, id, timestamp, signatures string, body []byte, now time.Time) error {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return errors.New("webhook-timestamp is not a number")
	}
	if d := now.Sub(time.Unix(ts, 0)); d > Tolerance || d < -Tolerance {
		return errors.New("webhook-timestamp is too far from now")
	}
	want := webhookMAC(key, id, ts, body)
	for _, s := range strings.Fields(signatures) {
		version, sig, ok := strings.Cut(s, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no valid signature")
}

// webhookPayload is the body of a delivery.
type webhookPayload struct {
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// Body is the body a delivery of e sends: its type, when it
// happened (RFC 3339 with milliseconds, UTC) and its data.
func Body(e *mailroom.Event) []byte {
	b, err := json.Marshal(webhookPayload{Type: e.Type, Timestamp: e.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z07:00"), Data: e.Data})
	if err != nil {
		panic("marshal webhook body: " + err.Error()) // stored data is JSON that marshalled once
	}
	return b
}
