package mailroom_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"regexp"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func TestNewDKIMKey(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	selector, priv, pub, err := mailroom.NewDKIMKey(now)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^mr2611[0-9a-f]{6}$`).MatchString(selector) {
		t.Errorf("selector = %q, want mr2611 followed by 6 hex digits", selector)
	}

	// The private key is PKCS #8 RSA-2048, and the published key is its half.
	k, err := x509.ParsePKCS8PrivateKey(priv)
	if err != nil {
		t.Fatalf("private key is not PKCS #8: %v", err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		t.Fatalf("private key is %T, want RSA", k)
	}
	if rk.N.BitLen() != 2048 {
		t.Errorf("key has %d bits, want 2048", rk.N.BitLen())
	}
	der, err := base64.StdEncoding.DecodeString(pub)
	if err != nil {
		t.Fatalf("public key is not base64: %v", err)
	}
	pk, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		t.Fatalf("public key is not a SubjectPublicKeyInfo: %v", err)
	}
	if !rk.PublicKey.Equal(pk) {
		t.Error("published key is not the private key's public half")
	}

	// A receiver verifies a signature made with the private key using p=.
	digest := sha256.Sum256([]byte("message"))
	sig, err := rsa.SignPKCS1v15(rand.Reader, rk, crypto.SHA256, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	if err := rsa.VerifyPKCS1v15(pk.(*rsa.PublicKey), crypto.SHA256, digest[:], sig); err != nil {
		t.Errorf("signature does not verify with the published key: %v", err)
	}

	// The selector is derived from the key: another key, another selector.
	selector2, _, pub2, err := mailroom.NewDKIMKey(now)
	if err != nil {
		t.Fatal(err)
	}
	if pub2 == pub || selector2 == selector {
		t.Errorf("two keys share a selector or key: %q %q", selector, selector2)
	}

	if got, want := mailroom.DKIMRecordValue(pub), "v=DKIM1; k=rsa; p="+pub; got != want {
		t.Errorf("DKIMRecordValue = %q, want %q", got, want)
	}
}
