package client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// sign signs as the service does (webhook.Sign in the root module, which a
// test of the root module checks against VerifyWebhook too).
func sign(secret, id string, ts time.Time, body string) string {
	key, _ := base64.StdEncoding.DecodeString(secret[len("whsec_"):])
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + "." + body))
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func webhookHeader(id string, ts time.Time, sig string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	h.Set("webhook-signature", sig)
	return h
}

const (
	secretA = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	secretB = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"
	body    = `{"type":"email.delivered","timestamp":"2026-11-22T10:00:00.123Z","data":{"messageId":"msg_1","recipient":"ann@example.com","from":"o@shop.example","subject":"Hi","tags":{"kind":"receipt"},"smtpCode":250,"smtpResponse":"250 2.0.0 OK","mx":"mx.example.com","attempt":1}}`
)

// The example of the Standard Webhooks specification, signed by another
// implementation.
func TestVerifyWebhookSpecificationVector(t *testing.T) {
	h := http.Header{}
	h.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set("webhook-timestamp", "1614265330")
	h.Set("webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	now := time.Unix(1614265330, 0).Add(time.Minute)
	if err := VerifyWebhookAt(secretA, h, []byte(`{"test": 2432232314}`), now); err != nil {
		t.Fatal(err)
	}
	if err := VerifyWebhookAt(secretA, h, []byte(`{"test": 2432232315}`), now); !errors.Is(err, ErrWebhookNoMatchingSignature) {
		t.Errorf("another body: %v", err)
	}
}

func TestVerifyWebhook(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 1, 0, time.UTC)
	id := "evt_01jd7x0000000000000000000"
	valid := webhookHeader(id, now, sign(secretA, id, now, body))
	for _, tc := range []struct {
		name   string
		secret string
		header http.Header
		body   string
		now    time.Time
		want   error
	}{
		{"valid", secretA, valid, body, now, nil},
		{"valid without the prefix", secretA[len("whsec_"):], valid, body, now, nil},
		{"signed 4 minutes ago", secretA, valid, body, now.Add(4 * time.Minute), nil},
		{"tampered body", secretA, valid, body[:len(body)-2] + "2}}", now, ErrWebhookNoMatchingSignature},
		{"wrong secret", secretB, valid, body, now, ErrWebhookNoMatchingSignature},
		{"expired", secretA, valid, body, now.Add(5*time.Minute + time.Second), ErrWebhookTooOld},
		{"from the future", secretA, valid, body, now.Add(-6 * time.Minute), ErrWebhookTooNew},
		{"another id", secretA, webhookHeader("evt_other", now, sign(secretA, id, now, body)), body, now, ErrWebhookNoMatchingSignature},
		{"another timestamp", secretA, webhookHeader(id, now.Add(time.Second), sign(secretA, id, now, body)), body, now, ErrWebhookNoMatchingSignature},
		{"rotated: the second signature matches", secretB, webhookHeader(id, now, sign(secretA, id, now, body)+" "+sign(secretB, id, now, body)), body, now, nil},
		{"rotated: the first signature matches", secretA, webhookHeader(id, now, sign(secretA, id, now, body)+" "+sign(secretB, id, now, body)), body, now, nil},
		{"other schemes are ignored", secretA, webhookHeader(id, now, "v1a,xyz "+sign(secretA, id, now, body)), body, now, nil},
		{"no v1", secretA, webhookHeader(id, now, "v2,"+sign(secretA, id, now, body)[3:]), body, now, ErrWebhookNoMatchingSignature},
		{"a cut signature", secretA, webhookHeader(id, now, sign(secretA, id, now, body)[:20]), body, now, ErrWebhookNoMatchingSignature},
		{"no webhook-id", secretA, without(valid, "webhook-id"), body, now, ErrWebhookMissingHeader},
		{"no webhook-timestamp", secretA, without(valid, "webhook-timestamp"), body, now, ErrWebhookMissingHeader},
		{"no webhook-signature", secretA, without(valid, "webhook-signature"), body, now, ErrWebhookMissingHeader},
		{"a timestamp that is no number", secretA, with(valid, "webhook-timestamp", "soon"), body, now, ErrWebhookInvalidTimestamp},
		{"a secret that is not base64", "whsec_!!!", valid, body, now, ErrWebhookInvalidSecret},
		{"an empty secret", "", valid, body, now, ErrWebhookInvalidSecret},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifyWebhookAt(tc.secret, tc.header, []byte(tc.body), tc.now)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("err %v, want %v", err, tc.want)
			}
		})
	}
	// VerifyWebhook uses the clock: a request signed now passes.
	t0 := time.Now()
	if err := VerifyWebhook(secretA, webhookHeader(id, t0, sign(secretA, id, t0, body)), []byte(body)); err != nil {
		t.Errorf("VerifyWebhook: %v", err)
	}
	if err := VerifyWebhookAt(secretA, without(valid, "webhook-id"), []byte(body), now); err == nil || err.Error() != "mailroom: webhook: missing header: webhook-id" {
		t.Errorf("the error does not name the header: %v", err)
	}
}

func without(h http.Header, name string) http.Header {
	h = h.Clone()
	h.Del(name)
	return h
}

func with(h http.Header, name, value string) http.Header {
	h = h.Clone()
	h.Set(name, value)
	return h
}

func TestParseEvent(t *testing.T) {
	ev, err := ParseEvent([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != EventEmailDelivered || !ev.Timestamp.Equal(time.Date(2026, 11, 22, 10, 0, 0, 123e6, time.UTC)) {
		t.Errorf("event %+v", ev)
	}
	d, err := ev.EmailData()
	if err != nil {
		t.Fatal(err)
	}
	if d.MessageID != "msg_1" || d.Recipient != "ann@example.com" || d.SMTPCode != 250 || d.MX != "mx.example.com" || d.Tags["kind"] != "receipt" || d.Attempt != 1 {
		t.Errorf("data %+v", d)
	}
	if _, err := ev.DomainData(); err == nil {
		t.Error("an email event gave domain data")
	}
	if _, err := ev.TestData(); err == nil {
		t.Error("an email event gave test data")
	}

	dom, err := ParseEvent([]byte(`{"type":"domain.verified","timestamp":"2026-11-22T10:00:00.000Z","data":{"domain":"shop.example","status":"verified","records":[{"purpose":"dkim","type":"TXT","name":"mr1._domainkey.shop.example","status":"verified"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if dd, err := dom.DomainData(); err != nil || dd.Domain != "shop.example" || dd.Status != "verified" || dd.Records[0].Purpose != "dkim" {
		t.Errorf("domain data %+v, %v", dd, err)
	}
	test, err := ParseEvent([]byte(`{"type":"webhook.test","timestamp":"2026-11-22T10:00:00.000Z","data":{"webhookId":"wh_1","message":"A test event"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if td, err := test.TestData(); err != nil || td.WebhookID != "wh_1" {
		t.Errorf("test data %+v, %v", td, err)
	}
	for _, bad := range []string{``, `[]`, `{}`, `{"type":"email.delivered","timestamp":"yesterday"}`} {
		if _, err := ParseEvent([]byte(bad)); err == nil {
			t.Errorf("ParseEvent(%q) took it", bad)
		}
	}
	if _, err := (&Event{Type: EventEmailBounced, Data: []byte(`{"smtpCode":"x"}`)}).EmailData(); err == nil {
		t.Error("data of the wrong shape decoded")
	}
}
