package mailroom

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// NewAuditFilter refuses what no entry can match, naming the field, and
// reads the rest.
func TestNewAuditFilter(t *testing.T) {
	f, err := NewAuditFilter("domain.verified", "abcdefgh12345678", "2026-11-01T00:00:00Z", "2026-11-02T00:00:00+01:00")
	if err != nil || f.Action != AuditDomainVerified || f.KeyID != "abcdefgh12345678" ||
		!f.Since.Equal(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) || !f.Until.Equal(time.Date(2026, 11, 1, 23, 0, 0, 0, time.UTC)) {
		t.Fatalf("got %+v, %v", f, err)
	}
	if f, err := NewAuditFilter("", "", "", ""); err != nil || f.Action != "" || f.Since != nil || f.Until != nil {
		t.Fatalf("no filters: %+v, %v", f, err)
	}
	for _, c := range []struct{ action, keyID, since, until, field string }{
		{"domain.exploded", "", "", "", "action"},
		{"", "a key", "", "", "keyId"},
		{"", "", "yesterday", "", "since"},
		{"", "", "", "2026-13-01T00:00:00Z", "until"},
		{"", "", "2026-11-02T00:00:00Z", "2026-11-01T00:00:00Z", "until"},
		{"", "", "2026-11-02T00:00:00Z", "2026-11-02T00:00:00Z", "until"},
	} {
		_, err := NewAuditFilter(c.action, c.keyID, c.since, c.until)
		var e *Error
		if !asError(err, &e) || e.Code != ECodeValidation || len(e.Details) != 1 || e.Details[0].Field != c.field {
			t.Errorf("%+v: got %v, want a validation error on %s", c, err, c.field)
		}
	}
}

func asError(err error, target **Error) bool {
	e, ok := err.(*Error)
	*target = e
	return ok
}

// No origin is the system; an origin travels as given.
func TestAuditOrigin(t *testing.T) {
	if o := AuditOriginFrom(context.Background()); o.Actor.Type != AuditBySystem || o.RequestID != "" || o.IP != "" {
		t.Fatalf("no origin: %+v", o)
	}
	want := AuditOrigin{Actor: AuditActor{Type: AuditByAPIKey, KeyID: "k"}, RequestID: "req", IP: "192.0.2.1"}
	if o := AuditOriginFrom(WithAuditOrigin(context.Background(), want)); o != want {
		t.Fatalf("got %+v, want %+v", o, want)
	}
}

// The change rules name only what differs, by the API's names, and never
// copy a secret from the things they describe.
func TestAuditChanges(t *testing.T) {
	js := func(c AuditChanges) string { b, _ := json.Marshal(c); return string(b) }
	k := &APIKey{KeyID: "k", Name: "ci", Scopes: Scopes{ScopeSend}, Domain: "shop.example", SecretDigest: []byte("DIGEST")}
	if got := js(APIKeyCreatedChanges(k)); got != `{"domain":[null,"shop.example"],"name":[null,"ci"],"scopes":[null,["send"]]}` {
		t.Errorf("api_key.created: %s", got)
	}
	d := &Domain{Name: "example.com", Status: DomainPending, DKIMPrivateKeySealed: []byte("PRIVATE")}
	d2 := *d
	d2.TLS, d2.IPPool = TLSEnforced, "eu"
	if got := js(DomainUpdatedChanges(d, &d2)); got != `{"ipPool":[null,"eu"],"tls":["opportunistic","enforced"]}` {
		t.Errorf("domain.updated: %s", got)
	}
	if got := DomainUpdatedChanges(d, d); len(got) != 0 {
		t.Errorf("an update that changes nothing: %v", got)
	}
	w := &WebhookEndpoint{URL: "https://a.example/h", Events: []string{"email.bounced"}, Enabled: true, SecretSealed: []byte("SECRET")}
	w2 := *w
	w2.Events = []string{"email.bounced", "email.delivered"}
	if got := js(WebhookUpdatedChanges(w, &w2)); got != `{"events":[["email.bounced"],["email.bounced","email.delivered"]]}` {
		t.Errorf("webhook.updated: %s", got)
	}
	if got := js(WebhookCreatedChanges(w)); got != `{"description":[null,""],"enabled":[null,true],"events":[null,["email.bounced"]],"format":[null,"mailroom"],"url":[null,"https://a.example/h"]}` {
		t.Errorf("webhook.created: %s", got)
	}
	a := &Account{Name: "acme"}
	b := &Account{Name: "acme", RateLimit: RateLimit{Rate: 5, Burst: 10}}
	if got := js(AccountUpdatedChanges(a, b)); got != `{"burst":[null,10],"rate":[null,5]}` {
		t.Errorf("account.updated: %s", got)
	}
	if got := js(SuppressionChanges(&Suppression{Address: "a@x.example", Reason: SuppressedUnsubscribe}, &Suppression{Address: "a@x.example", Reason: SuppressedManual})); got != `{"reason":["unsubscribe","manual"]}` {
		t.Errorf("suppression replaced: %s", got)
	}
}
