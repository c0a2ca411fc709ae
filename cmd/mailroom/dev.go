package main

import (
	"context"
	"crypto/subtle"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apikey"
	"github.com/mailroom/mailroom/atomicfile"
	"github.com/mailroom/mailroom/domain"
)

const (
	devAccountName = "dev"
	// devKeyFile keeps the dev account's key so that every start of
	// --dev prints the same one. It is the only key secret Mailroom ever
	// writes down, and only in development mode, readable by its owner alone.
	devKeyFile = "dev-api-key"
	// devSandboxDomain is verified from the start, so mail can be sent
	// from it at once (.test is reserved by RFC 2606: no real domain).
	devSandboxDomain = "mailroom.test"
)

// ensureDevAccount creates, once, the account "dev" with its verified
// sandbox domain and a key with every scope, and returns that key. A key
// that no longer works (revoked, or the database was replaced) is replaced
// by a new one.
func ensureDevAccount(ctx context.Context, s mailroom.Store, domains *domain.Service, dataDir string, now time.Time) (string, error) {
	path := filepath.Join(dataDir, devKeyFile)
	acct, err := s.AccountByName(ctx, devAccountName)
	if mailroom.IsCode(err, mailroom.ECodeNotFound) {
		var key string
		if acct, key, err = createAccount(ctx, s, devAccountName, now); err != nil {
			return "", err
		}
		if _, err := domains.AddSandbox(ctx, acct.ID, devSandboxDomain); err != nil {
			return "", err
		}
		return key, writeDevKey(path, key)
	}
	if err != nil {
		return "", err
	}
	if _, err := domains.AddSandbox(ctx, acct.ID, devSandboxDomain); err != nil {
		return "", err
	}
	if key, ok := usableDevKey(ctx, s, acct, path); ok {
		return key, nil
	}
	full, _, err := (&apikey.Service{Store: s, Now: func() time.Time { return now }}).CreateFull(ctx, acct.ID, "dev")
	if err != nil {
		return "", err
	}
	return full, writeDevKey(path, full)
}

// usableDevKey reads the kept key and checks it still opens the account.
func usableDevKey(ctx context.Context, s mailroom.Store, acct *mailroom.Account, path string) (string, bool) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	full := strings.TrimSpace(string(raw))
	keyID, secret, ok := mailroom.ParseAPIKey(full)
	if !ok {
		return "", false
	}
	k, err := s.APIKey(ctx, keyID)
	if err != nil || k.AccountID != acct.ID || k.RevokedAt != nil ||
		subtle.ConstantTimeCompare(k.SecretDigest, mailroom.SecretDigest(secret)) != 1 {
		return "", false
	}
	return full, true
}

func writeDevKey(path, key string) error {
	return atomicfile.Replace(path, []byte(key+"\n"), 0o600)
}
