package sealer

import (
	"crypto/hmac"
	"crypto/sha256"
)

// verifierKeyLabel names the key the verifier is computed under, among
// those DeriveKey gives; verifierMessage is what it authenticates. Changing
// either makes every stored verifier a mismatch, and every node refuse to
// start: they are fixed for good.
const (
	verifierKeyLabel = "mailroom secret-key verifier"
	verifierMessage  = "mailroom: this store's data at rest is sealed under this secret key (v1)"
)

// Verifier returns the verifier of the secret key that a store keeps
// (docs/api.md "One secret key per store"): HMAC-SHA256 of a fixed label
// under a key derived from the secret key (DeriveKey, RFC 5869 §2.3). It
// tells whether two nodes hold the same key without storing the key, or
// anything from which it could be found short of guessing all 2^256.
func (s *Sealer) Verifier() []byte {
	m := hmac.New(sha256.New, s.DeriveKey(verifierKeyLabel))
	m.Write([]byte(verifierMessage))
	return m.Sum(nil)
}

// Verifies reports whether stored is the verifier of this Sealer's key,
// comparing in constant time (the comparison's duration tells nothing of
// where the two first differ).
func (s *Sealer) Verifies(stored []byte) bool {
	return hmac.Equal(s.Verifier(), stored)
}
