package mailroom

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"time"
)

// dkimKeyBits is the RSA modulus size of new DKIM keys: RFC 8301 §3.2 makes
// 1024 the floor and recommends 2048, which every major receiver accepts and
// which still fits one TXT record.
const dkimKeyBits = 2048

// NewDKIMKey makes the RSA key of a new domain. It returns:
//   - selector: "mr" + yymm of now + 6 hex digits of the SHA-256 of the public
//     key (e.g. "mr2611a7f3c2"), unique to the key so that a rotated key and
//     the same domain added by two accounts get selectors of their own, and
//     dated so that an operator can tell old keys at a glance (RFC 6376 §3.1
//     leaves the naming to the signer);
//   - privatePKCS8: the private key, PKCS #8 DER, to be sealed before storing;
//   - publicB64: base64 of the DER SubjectPublicKeyInfo, the p= value of the
//     key record (RFC 6376 §3.6.1).
func NewDKIMKey(now time.Time) (selector string, privatePKCS8 []byte, publicB64 string, err error) {
	key, err := rsa.GenerateKey(rand.Reader, dkimKeyBits)
	if err != nil {
		return "", nil, "", err
	}
	privatePKCS8, err = x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", nil, "", err
	}
	spki, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", nil, "", err
	}
	sum := sha256.Sum256(spki)
	selector = "mr" + now.UTC().Format("0601") + hex.EncodeToString(sum[:3])
	return selector, privatePKCS8, base64.StdEncoding.EncodeToString(spki), nil
}

// DKIMRecordValue is the TXT value that publishes a key (RFC 6376 §3.6.1).
// v=DKIM1 comes first as §3.6.1 requires when present; k=rsa is the default
// but spelled out so that nobody has to know that.
func DKIMRecordValue(publicB64 string) string {
	return "v=DKIM1; k=rsa; p=" + publicB64
}

// NewDKIMEd25519Key makes an Ed25519 key for signing beside the RSA one
// (RFC 8463). The selector is "ed" + yymm + 6 hex digits of the SHA-256 of
// the public key, so that it cannot meet an RSA selector ("mr…") and is
// unique to the key; publicB64 is the base64 of the 32 raw bytes of the
// public key, the p= value RFC 8463 §4.2 asks for (not a
// SubjectPublicKeyInfo, unlike RSA's).
func NewDKIMEd25519Key(now time.Time) (selector string, privatePKCS8 []byte, publicB64 string, err error) {
	public, private, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", nil, "", err
	}
	privatePKCS8, err = x509.MarshalPKCS8PrivateKey(private)
	if err != nil {
		return "", nil, "", err
	}
	sum := sha256.Sum256(public)
	selector = "ed" + now.UTC().Format("0601") + hex.EncodeToString(sum[:3])
	return selector, privatePKCS8, base64.StdEncoding.EncodeToString(public), nil
}

// DKIMEd25519RecordValue is the TXT value that publishes an Ed25519 key
// (RFC 8463 §4.2: k=ed25519, p= the raw public key in base64).
func DKIMEd25519RecordValue(publicB64 string) string {
	return "v=DKIM1; k=ed25519; p=" + publicB64
}
