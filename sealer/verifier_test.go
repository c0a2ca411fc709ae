package sealer_test

import (
	"bytes"
	"testing"

	"github.com/mailroom/mailroom/sealer"
)

func TestVerifierTellsKeysApart(t *testing.T) {
	a := mustNew(t, bytes.Repeat([]byte{1}, 32))
	again := mustNew(t, bytes.Repeat([]byte{1}, 32))
	b := mustNew(t, bytes.Repeat([]byte{2}, 32))

	v := a.Verifier()
	if len(v) != 32 {
		t.Fatalf("verifier is %d bytes, want 32", len(v))
	}
	if !again.Verifies(v) {
		t.Error("a sealer with the same key does not accept the verifier")
	}
	if b.Verifies(v) {
		t.Error("a sealer with another key accepts the verifier")
	}
	if a.Verifies(nil) || a.Verifies(v[:31]) {
		t.Error("a missing or cut verifier is accepted")
	}
	// Neither the key nor a key derived for another purpose is stored.
	for _, label := range []string{"mailroom return-path v1", "mailroom secret-key verifier"} {
		if bytes.Equal(v, a.DeriveKey(label)) {
			t.Errorf("the verifier equals the key derived for %q", label)
		}
	}
	if bytes.Contains(v, bytes.Repeat([]byte{1}, 8)) {
		t.Error("the verifier holds the key's bytes")
	}
}

func mustNew(t *testing.T, key []byte) *sealer.Sealer {
	t.Helper()
	s, err := sealer.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
