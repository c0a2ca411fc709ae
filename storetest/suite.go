package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// Exercise runs the conformance suite against the stores open returns: every
// engine must pass all of it unchanged.
func Exercise(t *testing.T, open func(t testing.TB) mailroom.Store) {
	t.Run("Accounts", func(t *testing.T) { testAccounts(t, open(t)) })
	t.Run("APIKeys", func(t *testing.T) { testAPIKeys(t, open(t)) })
	t.Run("APIKeyPaging", func(t *testing.T) { testAPIKeyPaging(t, open(t)) })
	t.Run("TouchAPIKeys", func(t *testing.T) { testTouchAPIKeys(t, open(t)) })
	for _, s := range extraSuites {
		t.Run(s.name, func(t *testing.T) { s.run(t, open(t)) })
	}
}

// suite is one group of conformance tests; files that add capabilities
// register theirs in extraSuites from init.
type suite struct {
	name string
	run  func(*testing.T, mailroom.Store)
}

var extraSuites []suite

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// NewAccount stores an account named name and returns it.
func NewAccount(t testing.TB, s mailroom.Store, name string) *mailroom.Account {
	t.Helper()
	a := &mailroom.Account{ID: mailroom.NewID(mailroom.PrefixAccount, t0), Name: name, CreatedAt: t0}
	if err := s.CreateAccount(context.Background(), a); err != nil {
		t.Fatalf("create account %s: %v", name, err)
	}
	return a
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := mailroom.ErrorCode(err); err == nil || got != code {
		t.Fatalf("got error %v (code %s), want code %s", err, got, code)
	}
}

func testAccounts(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	a := NewAccount(t, s, "acme")
	b := NewAccount(t, s, "globex")

	got := Try(s.AccountByName(ctx, "acme")).Must(t)
	if got.ID != a.ID || !got.CreatedAt.Equal(t0) {
		t.Fatalf("by name: got %+v, want %+v", got, a)
	}
	got = Try(s.AccountByID(ctx, b.ID)).Must(t)
	if got.Name != "globex" {
		t.Fatalf("by id: got %+v", got)
	}
	_, err := s.AccountByName(ctx, "nobody")
	wantCode(t, err, mailroom.ECodeNotFound)

	dup := &mailroom.Account{ID: mailroom.NewID(mailroom.PrefixAccount, t0), Name: "acme", CreatedAt: t0}
	wantCode(t, s.CreateAccount(ctx, dup), mailroom.ECodeAlreadyExists)

	all := Try(s.ListAccounts(ctx)).Must(t)
	if len(all) != 2 || all[0].Name != "acme" || all[1].Name != "globex" {
		t.Fatalf("list: got %d accounts %v", len(all), all)
	}
}

func testAPIKeys(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	full, k := mailroom.NewAPIKey(acct.ID, "ci", mailroom.Scopes{mailroom.ScopeSend, mailroom.ScopeKeys}, t0)
	if err := s.CreateAPIKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	got := Try(s.APIKey(ctx, k.KeyID)).Must(t)
	if got.AccountID != acct.ID || got.Name != "ci" || got.Scopes.String() != "send,keys" ||
		string(got.SecretDigest) != string(k.SecretDigest) || got.RevokedAt != nil || got.LastUsedAt != nil {
		t.Fatalf("stored key differs: %+v", got)
	}
	_, secret, _ := mailroom.ParseAPIKey(full)
	if string(got.SecretDigest) == secret {
		t.Fatal("the secret itself was stored")
	}
	_, err := s.APIKey(ctx, "0000000000000000")
	wantCode(t, err, mailroom.ECodeNotFound)

	// Another account cannot revoke it: not found, and it stays active.
	other := NewAccount(t, s, "globex")
	_, err = s.RevokeAPIKey(ctx, other.ID, k.KeyID, t0.Add(time.Hour))
	wantCode(t, err, mailroom.ECodeNotFound)
	if got := Try(s.APIKey(ctx, k.KeyID)).Must(t); got.RevokedAt != nil {
		t.Fatalf("another account's revoke touched the key: %+v", got)
	}

	revoked := Try(s.RevokeAPIKey(ctx, acct.ID, k.KeyID, t0.Add(time.Hour))).Must(t)
	if revoked.RevokedAt == nil || !revoked.RevokedAt.Equal(t0.Add(time.Hour)) || revoked.Status() != mailroom.KeyStatusRevoked {
		t.Fatalf("revoke: %+v", revoked)
	}
	again := Try(s.RevokeAPIKey(ctx, acct.ID, k.KeyID, t0.Add(2*time.Hour))).Must(t)
	if !again.RevokedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("revoking twice moved revokedAt to %v", again.RevokedAt)
	}
	_, err = s.RevokeAPIKey(ctx, acct.ID, "0000000000000000", t0)
	wantCode(t, err, mailroom.ECodeNotFound)
}

func testAPIKeyPaging(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	other := NewAccount(t, s, "globex")
	var made []string
	for i := range 7 {
		// Two keys share each creation time, so ties must page correctly too.
		_, k := mailroom.NewAPIKey(acct.ID, "k", mailroom.Scopes{mailroom.ScopeSend}, t0.Add(time.Duration(i/2)*time.Second))
		if err := s.CreateAPIKey(ctx, k); err != nil {
			t.Fatal(err)
		}
		made = append(made, k.KeyID)
	}
	_, foreign := mailroom.NewAPIKey(other.ID, "k", mailroom.Scopes{mailroom.ScopeSend}, t0)
	if err := s.CreateAPIKey(ctx, foreign); err != nil {
		t.Fatal(err)
	}

	seen := map[string]bool{}
	var last time.Time
	cursor := ""
	pages := 0
	for {
		page, next, err := s.ListAPIKeys(ctx, acct.ID, mailroom.Page{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, k := range page {
			if seen[k.KeyID] || k.AccountID != acct.ID {
				t.Fatalf("key %s repeated or from another account", k.KeyID)
			}
			if !last.IsZero() && k.CreatedAt.After(last) {
				t.Fatalf("not newest first: %v after %v", k.CreatedAt, last)
			}
			last = k.CreatedAt
			seen[k.KeyID] = true
		}
		if next == "" {
			break
		}
		cursor = next
		// A key created while paging must not disturb the pages to come.
		if pages == 1 {
			_, k := mailroom.NewAPIKey(acct.ID, "late", mailroom.Scopes{mailroom.ScopeSend}, t0.Add(time.Hour))
			if err := s.CreateAPIKey(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
	}
	if pages != 3 || len(seen) != len(made) {
		t.Fatalf("got %d keys in %d pages, want %d in 3", len(seen), pages, len(made))
	}
	_, _, err := s.ListAPIKeys(ctx, acct.ID, mailroom.Page{Cursor: "not-a-cursor!"})
	wantCode(t, err, mailroom.ECodeValidation)
}

func testTouchAPIKeys(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	_, a := mailroom.NewAPIKey(acct.ID, "a", mailroom.Scopes{mailroom.ScopeSend}, t0)
	_, b := mailroom.NewAPIKey(acct.ID, "b", mailroom.Scopes{mailroom.ScopeSend}, t0)
	for _, k := range []*mailroom.APIKey{a, b} {
		if err := s.CreateAPIKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	later := t0.Add(10 * time.Minute)
	if err := s.TouchAPIKeys(ctx, map[string]time.Time{a.KeyID: later, b.KeyID: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	// An older use flushed late (another node) must not move it back.
	if err := s.TouchAPIKeys(ctx, map[string]time.Time{a.KeyID: t0.Add(5 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	got := Try(s.APIKey(ctx, a.KeyID)).Must(t)
	if got.LastUsedAt == nil || !got.LastUsedAt.Equal(later) {
		t.Fatalf("lastUsedAt = %v, want %v", got.LastUsedAt, later)
	}
	got = Try(s.APIKey(ctx, b.KeyID)).Must(t)
	if got.LastUsedAt == nil || !got.LastUsedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("lastUsedAt of b = %v", got.LastUsedAt)
	}
}
