package storetest

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// The audit log (docs/api.md "Audit log"): an entry for each change, in
// the transaction of the change, only when it happened, never with a
// secret. Entries made through the API carry its origin; those with none
// are the system's.

func init() {
	extraSuites = append(extraSuites,
		suite{"AuditRecordsChangesOnly", testAuditRecordsChangesOnly},
		suite{"AuditListFiltersAndPages", testAuditList},
		suite{"AuditRetention", testAuditRetention},
	)
}

// apiOrigin is a request of key keyID from 192.0.2.7.
func apiOrigin(keyID, requestID string) context.Context {
	return mailroom.WithAuditOrigin(context.Background(), mailroom.AuditOrigin{
		Actor: mailroom.AuditActor{Type: mailroom.AuditByAPIKey, KeyID: keyID}, RequestID: requestID, IP: "192.0.2.7"})
}

// auditEntries lists all of acct's entries, oldest first.
func auditEntries(t *testing.T, s mailroom.Store, acct *mailroom.Account, f mailroom.AuditFilter) []*mailroom.AuditEntry {
	t.Helper()
	all, _ := Try2(s.ListAuditEntries(context.Background(), acct.ID, f, mailroom.Page{Limit: mailroom.MaxPageLimit})).Must(t)
	slices.Reverse(all)
	return all
}

// mustDo fails the test when a change that must succeed fails.
func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func changesJSON(t *testing.T, c mailroom.AuditChanges) string {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func testAuditRecordsChangesOnly(t *testing.T, s mailroom.Store) {
	ctx := apiOrigin("keyadmin00000001", "req_audit_1")
	acct := NewAccount(t, s, "acme")
	no := func(err error, code string) {
		t.Helper()
		wantCode(t, err, code)
	}

	// API keys: created; revoked; revoking again and an unknown key
	// change nothing.
	full, k := mailroom.NewAPIKey(acct.ID, "ci", mailroom.Scopes{mailroom.ScopeSend, mailroom.ScopeKeys}, t0)
	mustDo(t, s.CreateAPIKey(ctx, k))
	dup := *k
	dup.Name = "again"
	no(s.CreateAPIKey(ctx, &dup), mailroom.ECodeAlreadyExists)
	Try(s.RevokeAPIKey(ctx, acct.ID, k.KeyID, t0.Add(time.Hour))).Must(t)
	Try(s.RevokeAPIKey(ctx, acct.ID, k.KeyID, t0.Add(2*time.Hour))).Must(t)
	_, err := s.RevokeAPIKey(ctx, acct.ID, "nosuchkey0000000", t0)
	no(err, mailroom.ECodeNotFound)

	// Domains: created; a duplicate and a domain over the limit are
	// refused; an update that sets what is there, and reads, change
	// nothing.
	d := NewDomain(acct, "example.com", t0)
	d.DKIMPrivateKeySealed = []byte("DKIM-PRIVATE-KEY-MARKER")
	mustDo(t, s.CreateDomain(ctx, d, mailroom.DefaultMaxDomains))
	no(s.CreateDomain(ctx, NewDomain(acct, "example.com", t0), mailroom.DefaultMaxDomains), mailroom.ECodeAlreadyExists)
	if err := s.CreateDomain(ctx, NewDomain(acct, "two.example", t0), 1); err == nil {
		t.Fatal("a domain over the limit was created")
	}
	enforced, opportunistic := mailroom.TLSEnforced, mailroom.TLSOpportunistic
	Try(s.UpdateDomain(ctx, acct.ID, "example.com", mailroom.DomainUpdate{TLS: &opportunistic})).Must(t)
	Try(s.UpdateDomain(ctx, acct.ID, "example.com", mailroom.DomainUpdate{TLS: &enforced})).Must(t)
	_, err = s.UpdateDomain(ctx, acct.ID, "nosuch.example", mailroom.DomainUpdate{TLS: &enforced})
	no(err, mailroom.ECodeNotFound)
	Try(s.Domain(ctx, acct.ID, "example.com")).Must(t)
	// A check that moves the status, from the background (no origin):
	// the system's; one that leaves it is nothing.
	checked := Try(s.Domain(ctx, acct.ID, "example.com")).Must(t)
	mustDo(t, s.SaveDomainCheck(context.Background(), checked, nil))
	checked.Status = mailroom.DomainVerified
	mustDo(t, s.SaveDomainCheck(context.Background(), checked, nil))
	mustDo(t, s.DeleteDomain(ctx, acct.ID, "example.com"))
	no(s.DeleteDomain(ctx, acct.ID, "example.com"), mailroom.ECodeNotFound)

	// Webhooks: created, updated (only the URL changes), secret rotated,
	// deleted; an update to the same values changes nothing.
	w := newWebhook(acct, t0, mailroom.EventEmailDelivered)
	mustDo(t, s.CreateWebhook(ctx, w, mailroom.DefaultMaxWebhooks))
	sameURL, newURL := w.URL, "https://hooks.example/new"
	Try(s.UpdateWebhook(ctx, acct.ID, w.ID, mailroom.WebhookChange{URL: &sameURL, Events: w.Events}, t0)).Must(t)
	Try(s.UpdateWebhook(ctx, acct.ID, w.ID, mailroom.WebhookChange{URL: &newURL, Events: w.Events}, t0)).Must(t)
	Try(s.RotateWebhookSecret(ctx, acct.ID, w.ID, []byte("NEW-WEBHOOK-SECRET-MARKER"), t0.Add(24*time.Hour), t0)).Must(t)
	mustDo(t, s.DeleteWebhook(ctx, acct.ID, w.ID))
	no(s.DeleteWebhook(ctx, acct.ID, w.ID), mailroom.ECodeNotFound)

	// Templates: created, a new version, deleted; over the version limit
	// is refused.
	tpl := &mailroom.Template{ID: mailroom.NewID(mailroom.PrefixTemplate, t0), AccountID: acct.ID, Name: "welcome",
		Subject: "Hi", HTML: "<p>Hi</p>", CreatedAt: t0, UpdatedAt: t0}
	mustDo(t, s.CreateTemplate(ctx, tpl, mailroom.DefaultMaxTemplates))
	v2 := *tpl
	v2.Subject = "Hello"
	mustDo(t, s.UpdateTemplate(ctx, &v2, mailroom.DefaultMaxTemplateVersions))
	v3 := v2
	if err := s.UpdateTemplate(ctx, &v3, 2); err == nil {
		t.Fatal("a version over the limit was stored")
	}
	mustDo(t, s.DeleteTemplate(ctx, acct.ID, tpl.ID))
	no(s.DeleteTemplate(ctx, acct.ID, tpl.ID), mailroom.ECodeNotFound)

	// Suppressions: added; adding again and deleting an unknown address
	// change nothing.
	sup := &mailroom.Suppression{AccountID: acct.ID, Address: "Someone@Example.com", Reason: mailroom.SuppressedManual, CreatedAt: t0}
	Try(s.AddSuppression(ctx, sup)).Must(t)
	Try(s.AddSuppression(ctx, sup)).Must(t)
	mustDo(t, s.DeleteSuppression(ctx, acct.ID, "someone@example.com"))
	no(s.DeleteSuppression(ctx, acct.ID, "someone@example.com"), mailroom.ECodeNotFound)

	// The account's limits: set, then set to the same.
	cli := mailroom.WithAuditOrigin(context.Background(), mailroom.AuditOrigin{Actor: mailroom.AuditActor{Type: mailroom.AuditByCLI}})
	Try(s.UpdateAccountLimits(cli, "acme", 50, 0)).Must(t)
	Try(s.UpdateAccountLimits(cli, "acme", 50, 0)).Must(t)
	_, err = s.UpdateAccountLimits(cli, "nobody", 50, 0)
	no(err, mailroom.ECodeNotFound)

	got := auditEntries(t, s, acct, mailroom.AuditFilter{})
	var actions []mailroom.AuditAction
	for _, e := range got {
		actions = append(actions, e.Action)
	}
	want := []mailroom.AuditAction{
		mailroom.AuditAccountCreated, mailroom.AuditAPIKeyCreated, mailroom.AuditAPIKeyRevoked,
		mailroom.AuditDomainCreated, mailroom.AuditDomainUpdated, mailroom.AuditDomainVerified, mailroom.AuditDomainDeleted,
		mailroom.AuditWebhookCreated, mailroom.AuditWebhookUpdated, mailroom.AuditWebhookSecretRotated, mailroom.AuditWebhookDeleted,
		mailroom.AuditTemplateCreated, mailroom.AuditTemplateUpdated, mailroom.AuditTemplateDeleted,
		mailroom.AuditSuppressionCreated, mailroom.AuditSuppressionDeleted, mailroom.AuditAccountUpdated,
	}
	if !slices.Equal(actions, want) {
		t.Fatalf("recorded\n%v\nwant\n%v", actions, want)
	}
	by := map[mailroom.AuditAction]*mailroom.AuditEntry{}
	for _, e := range got {
		by[e.Action] = e
	}

	// Who and where: the API's key, request id and address; the system
	// and the CLI with neither.
	keyCreated := by[mailroom.AuditAPIKeyCreated]
	if keyCreated.Actor != (mailroom.AuditActor{Type: mailroom.AuditByAPIKey, KeyID: "keyadmin00000001"}) ||
		keyCreated.RequestID != "req_audit_1" || keyCreated.IP != "192.0.2.7" ||
		keyCreated.Target != (mailroom.AuditTarget{Type: mailroom.AuditTargetAPIKey, ID: k.KeyID}) {
		t.Errorf("api_key.created: %+v", keyCreated)
	}
	for _, a := range []mailroom.AuditAction{mailroom.AuditAccountCreated, mailroom.AuditDomainVerified} {
		if e := by[a]; e.Actor != (mailroom.AuditActor{Type: mailroom.AuditBySystem}) || e.RequestID != "" || e.IP != "" {
			t.Errorf("%s: want the system's, got %+v", a, e)
		}
	}
	if e := by[mailroom.AuditAccountUpdated]; e.Actor.Type != mailroom.AuditByCLI || e.Target.ID != acct.ID {
		t.Errorf("account.updated: %+v", e)
	}
	if e := by[mailroom.AuditSuppressionDeleted]; e.Target != (mailroom.AuditTarget{Type: mailroom.AuditTargetSuppression, ID: "someone@example.com"}) {
		t.Errorf("suppression.deleted target: %+v", e.Target)
	}
	if e := by[mailroom.AuditDomainDeleted]; e.Target != (mailroom.AuditTarget{Type: mailroom.AuditTargetDomain, ID: d.ID}) {
		t.Errorf("domain.deleted target: %+v", e.Target)
	}

	// What changed, by the API's field names: only what differs.
	for a, want := range map[mailroom.AuditAction]string{
		mailroom.AuditAPIKeyCreated:        `{"name":[null,"ci"],"scopes":[null,["send","keys"]]}`,
		mailroom.AuditAPIKeyRevoked:        `{"revokedAt":[null,"2026-11-22T11:00:00Z"]}`,
		mailroom.AuditDomainUpdated:        `{"tls":["opportunistic","enforced"]}`,
		mailroom.AuditDomainVerified:       `{"status":["pending","verified"]}`,
		mailroom.AuditDomainDeleted:        `{"name":["example.com",null]}`,
		mailroom.AuditWebhookUpdated:       `{"url":["` + sameURL + `","https://hooks.example/new"]}`,
		mailroom.AuditWebhookSecretRotated: `{"previousSecretExpiresAt":[null,"2026-11-23T10:00:00Z"]}`,
		mailroom.AuditTemplateUpdated:      `{"subject":["Hi","Hello"],"version":[1,2]}`,
		mailroom.AuditTemplateDeleted:      `{"name":["welcome",null]}`,
		mailroom.AuditSuppressionCreated:   `{"address":[null,"someone@example.com"],"reason":[null,"manual"]}`,
		mailroom.AuditSuppressionDeleted:   `{"address":["someone@example.com",null],"reason":["manual",null]}`,
		mailroom.AuditAccountUpdated:       `{"rate":[null,50]}`,
		mailroom.AuditAccountCreated:       `{"name":[null,"acme"]}`,
	} {
		if got := changesJSON(t, by[a].Changes); got != want {
			t.Errorf("%s changes: got %s, want %s", a, got, want)
		}
	}

	// Never a secret: the key (and its digest), the webhook's secrets, the
	// DKIM private key, in any encoding.
	all, _ := json.Marshal(got)
	for _, secret := range [][]byte{[]byte(full), k.SecretDigest, w.SecretSealed, []byte("NEW-WEBHOOK-SECRET-MARKER"), d.DKIMPrivateKeySealed} {
		for _, enc := range []string{string(secret), base64.StdEncoding.EncodeToString(secret), base64.RawURLEncoding.EncodeToString(secret), hex.EncodeToString(secret)} {
			if strings.Contains(string(all), enc) {
				t.Errorf("an audit entry holds a secret (%q)", enc)
			}
		}
	}
}

func testAuditList(t *testing.T, s mailroom.Store) {
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	for i := range 5 {
		keyID := "keyfirst00000001"
		if i%2 == 1 {
			keyID = "keysecond0000002"
		}
		_, k := mailroom.NewAPIKey(acme.ID, "k", mailroom.Scopes{mailroom.ScopeSend}, t0)
		mustDo(t, s.CreateAPIKey(apiOrigin(keyID, "req"), k))
	}
	_, other := mailroom.NewAPIKey(globex.ID, "theirs", mailroom.Scopes{mailroom.ScopeSend}, t0)
	mustDo(t, s.CreateAPIKey(apiOrigin("keyfirst00000001", "req"), other))

	// Paging: every entry once, newest first, never another account's.
	var seen []*mailroom.AuditEntry
	cursor := ""
	for pages := 0; ; pages++ {
		page, next := Try2(s.ListAuditEntries(context.Background(), acme.ID, mailroom.AuditFilter{}, mailroom.Page{Limit: 2, Cursor: cursor})).Must(t)
		seen = append(seen, page...)
		if next == "" {
			break
		}
		cursor = next
		if pages > 10 {
			t.Fatal("paging does not end")
		}
	}
	if len(seen) != 6 { // account.created and five keys
		t.Fatalf("paged %d entries, want 6", len(seen))
	}
	for i, e := range seen {
		if e.AccountID != acme.ID {
			t.Fatalf("another account's entry: %+v", e)
		}
		if i > 0 && (e.CreatedAt.After(seen[i-1].CreatedAt) || e.ID == seen[i-1].ID) {
			t.Fatalf("not newest first at %d", i)
		}
	}

	byKey := auditEntries(t, s, acme, mailroom.AuditFilter{KeyID: "keysecond0000002"})
	if len(byKey) != 2 {
		t.Errorf("keyId filter: %d entries, want 2", len(byKey))
	}
	created := auditEntries(t, s, acme, mailroom.AuditFilter{Action: mailroom.AuditAccountCreated})
	if len(created) != 1 || created[0].Action != mailroom.AuditAccountCreated {
		t.Errorf("action filter: %+v", created)
	}
	// since is inclusive, until exclusive.
	third := seen[len(seen)-3].CreatedAt
	since := auditEntries(t, s, acme, mailroom.AuditFilter{Since: &third})
	until := auditEntries(t, s, acme, mailroom.AuditFilter{Until: &third})
	if len(since)+len(until) != 6 || len(since) < 1 || !since[0].CreatedAt.Equal(third) {
		t.Errorf("since %d + until %d entries, want 6 together, since starting at %v", len(since), len(until), third)
	}
}

func testAuditRetention(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	for range 2 {
		_, k := mailroom.NewAPIKey(acct.ID, "old", mailroom.Scopes{mailroom.ScopeSend}, t0)
		mustDo(t, s.CreateAPIKey(ctx, k))
	}
	old := auditEntries(t, s, acct, mailroom.AuditFilter{})
	cutoff := old[len(old)-1].CreatedAt.Add(time.Microsecond)
	// The next entry must be younger than the cutoff: wait out the
	// clock's microsecond, no longer.
	for !time.Now().After(cutoff) {
	}
	_, k := mailroom.NewAPIKey(acct.ID, "new", mailroom.Scopes{mailroom.ScopeSend}, t0)
	mustDo(t, s.CreateAPIKey(ctx, k))

	// Batches of at most limit, oldest first, until none is older.
	if n := Try(s.DeleteExpiredAuditEntries(ctx, cutoff, 2)).Must(t); n != 2 {
		t.Fatalf("first batch removed %d, want 2", n)
	}
	if n := Try(s.DeleteExpiredAuditEntries(ctx, cutoff, 2)).Must(t); n != 1 {
		t.Fatalf("second batch removed %d, want 1", n)
	}
	if n := Try(s.DeleteExpiredAuditEntries(ctx, cutoff, 2)).Must(t); n != 0 {
		t.Fatalf("third batch removed %d, want 0", n)
	}
	left := auditEntries(t, s, acct, mailroom.AuditFilter{})
	if len(left) != 1 || left[0].Target.ID != k.KeyID {
		t.Fatalf("left %+v, want the new key's entry alone", left)
	}
}
