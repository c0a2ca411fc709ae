package mailroom

import (
	"crypto/rand"
	"crypto/sha256"
	"hash/crc32"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// APIKey is a bearer credential of an account (docs/api.md "Authentication"). The secret itself
// is never stored: only SecretDigest, its SHA-256.
type APIKey struct {
	KeyID     string
	AccountID string
	Name      string
	Scopes    Scopes
	// Domain, when set, is the one sending domain (a normalised name) the
	// key may send from: a key given to one application cannot send as
	// another domain of the account (MaySendFrom). "" is every domain of
	// the account.
	Domain       string
	SecretDigest []byte
	CreatedAt    time.Time
	LastUsedAt   *time.Time
	RevokedAt    *time.Time
}

// Key status values as the API shows them.
const (
	KeyStatusActive  = "active"
	KeyStatusRevoked = "revoked"
)

// Status is "active" or "revoked".
func (k *APIKey) Status() string {
	if k.RevokedAt != nil {
		return KeyStatusRevoked
	}
	return KeyStatusActive
}

// The key format is mailroom_<keyId>_<secret>:
//   - keyId: 16 characters [a-z0-9], random, safe to log;
//   - secret: 37 random base62 characters followed by a 6-character base62
//     CRC32 of "mailroom_<keyId>_<first 37>", so that a mistyped or made-up
//     key is refused before any database lookup (the idea of GitHub's token
//     checksums).
const (
	keyPrefix        = "mailroom"
	KeyIDLength      = 16
	secretRandomLen  = 37
	secretChecksumLn = 6
	secretLength     = secretRandomLen + secretChecksumLn
	base62Alphabet   = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	keyIDAlphabet    = "0123456789abcdefghijklmnopqrstuvwxyz"
)

// NewAPIKey makes a key for account with a fresh id and secret. It returns
// the full key string, to be shown once, and the record to store.
func NewAPIKey(accountID, name string, scopes Scopes, now time.Time) (string, *APIKey) {
	keyID := randomString(keyIDAlphabet, KeyIDLength)
	body := randomString(base62Alphabet, secretRandomLen)
	secret := body + keyChecksum(keyID, body)
	return keyPrefix + "_" + keyID + "_" + secret, &APIKey{
		KeyID:        keyID,
		AccountID:    accountID,
		Name:         name,
		Scopes:       scopes,
		SecretDigest: SecretDigest(secret),
		CreatedAt:    now.UTC(),
	}
}

// ParseAPIKey splits a presented key into its id and secret, checking the
// format and the checksum. ok is false for anything malformed.
func ParseAPIKey(key string) (keyID, secret string, ok bool) {
	rest, found := strings.CutPrefix(key, keyPrefix+"_")
	if !found || len(rest) != KeyIDLength+1+secretLength || rest[KeyIDLength] != '_' {
		return "", "", false
	}
	keyID, secret = rest[:KeyIDLength], rest[KeyIDLength+1:]
	if !onlyFrom(keyID, keyIDAlphabet) || !onlyFrom(secret, base62Alphabet) {
		return "", "", false
	}
	if keyChecksum(keyID, secret[:secretRandomLen]) != secret[secretRandomLen:] {
		return "", "", false
	}
	return keyID, secret, true
}

// ValidKeyID reports whether s has the form of a key id.
func ValidKeyID(s string) bool { return len(s) == KeyIDLength && onlyFrom(s, keyIDAlphabet) }

// SecretDigest is what storage keeps of a secret. SHA-256 without a salt is
// enough here: the secret carries 220 bits of randomness, so there is
// nothing to brute-force that a salt or a slow hash would protect.
func SecretDigest(secret string) []byte {
	d := sha256.Sum256([]byte(secret))
	return d[:]
}

// ValidateKeyName checks a key's human-readable name. Names are shown in
// listings, the CLI and logs, so they must read as what they are: control
// characters (C0, DEL, C1) could rewrite a terminal, and invisible format
// characters (Unicode category Cf: the bidi overrides and isolates U+202A–
// U+202E and U+2066–U+2069, the marks U+200E/U+200F, zero-width characters)
// and the line and paragraph separators U+2028/U+2029 could make a name
// display as another one (Unicode Technical Report #36, §2.1; the "Trojan
// Source" reorderings, CVE-2021-42574).
func ValidateKeyName(v *Validator, field, name string) {
	switch {
	case !utf8.ValidString(name):
		v.Add(field, "must be valid UTF-8")
	case strings.TrimSpace(name) == "":
		v.Add(field, "a name is required")
	case utf8.RuneCountInString(name) > 128:
		v.Add(field, "at most 128 characters")
	case strings.ContainsFunc(name, unicode.IsControl):
		v.Add(field, "control characters are not allowed")
	case strings.ContainsFunc(name, IsInvisibleFormat):
		v.Add(field, "invisible formatting characters (such as bidi overrides, U+202A–U+202E, U+2066–U+2069) are not allowed")
	}
}

// IsInvisibleFormat reports the characters that change how the text
// around them is displayed without being seen: Unicode's format characters
// (Cf) and the line and paragraph separators (Zl, Zp).
func IsInvisibleFormat(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

func keyChecksum(keyID, body string) string {
	sum := crc32.ChecksumIEEE([]byte(keyPrefix + "_" + keyID + "_" + body))
	// 62^6 > 2^32, so six digits always suffice; pad with leading zeros.
	out := []byte("000000")
	for i := len(out) - 1; sum > 0; i-- {
		out[i] = base62Alphabet[sum%62]
		sum /= 62
	}
	return string(out)
}

// randomString draws n characters uniformly from alphabet with crypto/rand.
func randomString(alphabet string, n int) string {
	out := make([]byte, n)
	// Rejection sampling keeps the draw uniform for alphabets that do not
	// divide 256.
	limit := 256 - 256%len(alphabet)
	buf := make([]byte, 1)
	for i := 0; i < n; {
		if _, err := rand.Read(buf); err != nil {
			panic("crypto/rand failed: " + err.Error()) // never on supported platforms (Go 1.24+)
		}
		if int(buf[0]) >= limit {
			continue
		}
		out[i] = alphabet[int(buf[0])%len(alphabet)]
		i++
	}
	return string(out)
}

func onlyFrom(s, alphabet string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(alphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}
