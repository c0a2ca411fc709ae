package storetest_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// TestAuditInTheChangesTransaction: the audit entry is written in the
// transaction of its change, so a change whose entry cannot be written is
// not made either (and no entry outlives a change that failed). The table
// is renamed away beneath a running store, so that every entry's INSERT
// fails; each change must then fail and leave nothing behind.
func TestAuditInTheChangesTransaction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		open, db := storetest.Reopenable(t, e)
		s := open()
		ctx := context.Background()
		acct := storetest.NewAccount(t, s, "acme")
		_, revocable := mailroom.NewAPIKey(acct.ID, "kept", mailroom.Scopes{mailroom.ScopeSend}, time.Now())
		if err := s.CreateAPIKey(ctx, revocable); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`ALTER TABLE audit_log RENAME TO audit_log_away`); err != nil {
			t.Fatal(err)
		}

		_, k := mailroom.NewAPIKey(acct.ID, "new", mailroom.Scopes{mailroom.ScopeSend}, time.Now())
		if err := s.CreateAPIKey(ctx, k); err == nil {
			t.Error("a key was created without its audit entry")
		}
		if _, err := s.APIKey(ctx, k.KeyID); !mailroom.IsCode(err, mailroom.ECodeNotFound) {
			t.Errorf("the key whose entry failed exists: %v", err)
		}
		if _, err := s.RevokeAPIKey(ctx, acct.ID, revocable.KeyID, time.Now()); err == nil {
			t.Error("a key was revoked without its audit entry")
		}
		if got, err := s.APIKey(ctx, revocable.KeyID); err != nil || got.RevokedAt != nil {
			t.Errorf("the key whose revocation's entry failed: %+v, %v", got, err)
		}
		d := storetest.NewDomain(acct, "example.com", time.Now())
		if err := s.CreateDomain(ctx, d, mailroom.DefaultMaxDomains); err == nil {
			t.Error("a domain was created without its audit entry")
		}
		if _, err := s.Domain(ctx, acct.ID, "example.com"); !mailroom.IsCode(err, mailroom.ECodeNotFound) {
			t.Errorf("the domain whose entry failed exists: %v", err)
		}
		sup := &mailroom.Suppression{AccountID: acct.ID, Address: "a@example.com", Reason: mailroom.SuppressedManual, CreatedAt: time.Now()}
		if _, err := s.AddSuppression(ctx, sup); err == nil {
			t.Error("a suppression was added without its audit entry")
		}
		if _, err := s.Suppression(ctx, acct.ID, "a@example.com"); !mailroom.IsCode(err, mailroom.ECodeNotFound) {
			t.Errorf("the suppression whose entry failed exists: %v", err)
		}
		if _, err := s.UpdateAccountLimits(ctx, "acme", 42, 0); err == nil {
			t.Error("an account's limits changed without its audit entry")
		}
		if a, err := s.AccountByName(ctx, "acme"); err != nil || a.RateLimit.Rate != 0 {
			t.Errorf("the account whose entry failed: %+v, %v", a, err)
		}

		if _, err := db.Exec(`ALTER TABLE audit_log_away RENAME TO audit_log`); err != nil {
			t.Fatal(err)
		}
		// The other way round: an entry written before the part of its
		// change that fails goes with it. Disabling an endpoint writes
		// webhook.updated, then drops its queued deliveries; with their
		// table away, the whole change fails.
		w := &mailroom.WebhookEndpoint{ID: mailroom.NewID(mailroom.PrefixWebhook, time.Now()), AccountID: acct.ID,
			URL: "https://hooks.example/a", Events: []string{mailroom.EventEmailDelivered}, Enabled: true,
			SecretSealed: []byte("sealed"), CreatedAt: time.Now(), UpdatedAt: time.Now()}
		if err := s.CreateWebhook(ctx, w, mailroom.DefaultMaxWebhooks); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`ALTER TABLE webhook_deliveries RENAME TO webhook_deliveries_away`); err != nil {
			t.Fatal(err)
		}
		off := false
		if _, err := s.UpdateWebhook(ctx, acct.ID, w.ID, mailroom.WebhookChange{Enabled: &off, DisabledReason: "test"}, time.Now()); err == nil {
			t.Error("an endpoint was disabled although its deliveries could not be dropped")
		}
		if _, err := db.Exec(`ALTER TABLE webhook_deliveries_away RENAME TO webhook_deliveries`); err != nil {
			t.Fatal(err)
		}

		entries, _, err := s.ListAuditEntries(ctx, acct.ID, mailroom.AuditFilter{}, mailroom.Page{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var actions []mailroom.AuditAction
		for _, e := range entries {
			actions = append(actions, e.Action)
		}
		// Newest first: webhook.created, then the two made before.
		want := []mailroom.AuditAction{mailroom.AuditWebhookCreated, mailroom.AuditAPIKeyCreated, mailroom.AuditAccountCreated}
		if !slices.Equal(actions, want) {
			t.Errorf("entries after the failed changes: %v, want %v", actions, want)
		}
	})
}
