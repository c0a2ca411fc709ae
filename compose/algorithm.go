package compose

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"

	"github.com/mailroom/mailroom"
)

// keySigner is one key of a domain with its parsed signer.
type keySigner struct {
	key    mailroom.DKIMKey
	signer crypto.Signer
}

// signersFor parses key and the keys that sign beside it (key.Also): one
// DKIM-Signature each (RFC 6376 §4.2; RFC 8463 §3, Ed25519 beside RSA).
func signersFor(key mailroom.DKIMKey) ([]keySigner, error) {
	out := make([]keySigner, 0, 1+len(key.Also))
	for i, k := range append([]mailroom.DKIMKey{key}, key.Also...) {
		s, err := signerFor(k)
		if err != nil {
			return nil, err
		}
		if _, ed := s.(ed25519.PrivateKey); ed && i == 0 {
			// RFC 8463 §3: verifiers that know only RSA would find no
			// signature they can check.
			return nil, fmt.Errorf("compose: DKIM key of %s (selector %s) is Ed25519, which signs only beside an RSA key", k.Domain, k.Selector)
		}
		k.Also = nil
		out = append(out, keySigner{key: k, signer: s})
	}
	return out, nil
}

// algorithm is the a= tag of a signature made with signer: rsa-sha256
// (RFC 6376 §3.3.1) or ed25519-sha256 (RFC 8463 §3).
func algorithm(signer crypto.Signer) string {
	if _, ok := signer.(ed25519.PrivateKey); ok {
		return "ed25519-sha256"
	}
	return "rsa-sha256"
}

// signDigest signs the SHA-256 digest of the signed data: RSASSA-PKCS1-v1_5
// over the digest for RSA (RFC 6376 §3.3.1), and for Ed25519 PureEdDSA with
// the 32 digest bytes as its message (RFC 8463 §3: "the Ed25519 algorithm
// is applied to the SHA-256 hash"). Neither has randomness in its result.
func signDigest(signer crypto.Signer, digest []byte) ([]byte, error) {
	if _, ok := signer.(ed25519.PrivateKey); ok {
		return signer.Sign(nil, digest, crypto.Hash(0))
	}
	return signer.Sign(rand.Reader, digest, crypto.SHA256)
}
