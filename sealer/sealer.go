package sealer

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// KeySize is the length of a sealing key in bytes: AES-256.
const KeySize = 32

// formatV1 is the first byte of every sealed blob: AES-256-GCM with a
// 12-byte random nonce. A version byte lets a later format (another
// cipher, a rotated key) be told apart from rows sealed today.
const formatV1 = 0x01

const (
	nonceSize = 12 // the GCM standard nonce (NIST SP 800-38D §8.2.2)
	tagSize   = 16
	overhead  = 1 + nonceSize + tagSize
)

// Errors from Open. They carry no detail of the input, so they can be
// logged as they are.
var (
	// ErrTruncated means the input is shorter than any sealed blob.
	ErrTruncated = errors.New("sealer: sealed data is truncated")
	// ErrUnknownVersion means the input's first byte names no format this
	// build knows.
	ErrUnknownVersion = errors.New("sealer: sealed data has an unknown format version")
	// ErrNotAuthentic means authentication failed: the data was sealed
	// under another key or other associated data, or was altered. GCM
	// cannot tell these apart, and neither should a caller.
	ErrNotAuthentic = errors.New("sealer: sealed data does not authenticate (wrong key, wrong associated data, or altered)")
)

// Sealer seals and opens secrets with one AES-256-GCM key. It is safe for
// concurrent use.
type Sealer struct {
	aead cipher.AEAD
	key  []byte
}

// New returns a Sealer for key, which must be exactly KeySize bytes: a
// shorter key would silently select AES-128 or AES-192.
func New(key []byte) (*Sealer, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("sealer: key is %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("sealer: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("sealer: %w", err)
	}
	return &Sealer{aead: aead, key: append([]byte(nil), key...)}, nil
}

// DeriveKey returns a key for another purpose than sealing, named by
// label (HMAC-SHA256 of the label under the secret key, as HKDF-Expand
// does for one block, RFC 5869 §2.3): tokens the service signs (return
// paths, unsubscribe links) need a key every node shares, and one key per
// purpose keeps a token of one kind from passing for another.
func (s *Sealer) DeriveKey(label string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(label))
	m.Write([]byte{1})
	return m.Sum(nil)
}

// Seal encrypts plaintext and returns version byte || nonce || ciphertext
// and tag.
//
// associatedData is authenticated but not stored: pass what identifies the
// row the blob belongs to (such as a domain or webhook id), and Open with
// the same value. A blob copied into another row then fails to open instead
// of handing one customer's key to another.
//
// Nonces are random. With 96-bit random nonces a key may seal about 2^32
// messages before a repeat becomes a concern (NIST SP 800-38D §8.3), far
// beyond the number of DKIM keys and webhook secrets a service holds.
func (s *Sealer) Seal(plaintext, associatedData []byte) []byte {
	out := make([]byte, 1+nonceSize, len(plaintext)+overhead)
	out[0] = formatV1
	nonce := out[1 : 1+nonceSize]
	// crypto/rand.Read does not fail; on a broken system it aborts the
	// program rather than return predictable bytes.
	rand.Read(nonce)
	return s.aead.Seal(out, nonce, plaintext, associatedData)
}

// Open decrypts what Seal returned for the same associatedData. It fails
// with ErrTruncated, ErrUnknownVersion or ErrNotAuthentic.
func (s *Sealer) Open(sealed, associatedData []byte) ([]byte, error) {
	if len(sealed) == 0 {
		return nil, ErrTruncated
	}
	if sealed[0] != formatV1 {
		return nil, ErrUnknownVersion
	}
	if len(sealed) < overhead {
		return nil, ErrTruncated
	}
	nonce := sealed[1 : 1+nonceSize]
	plaintext, err := s.aead.Open(nil, nonce, sealed[1+nonceSize:], associatedData)
	if err != nil {
		return nil, ErrNotAuthentic
	}
	return plaintext, nil
}
