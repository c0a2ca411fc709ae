package tlscert_test

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mailroom/mailroom/tlscert"
)

// testNow is a fixed clock with whole seconds, the resolution certificates
// store, so validity bounds compare exactly.
var testNow = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

func keyPath(dataDir string) string { return filepath.Join(dataDir, "tls", "key.pem") }

// mustSelfSigned calls SelfSigned and fails the test on error, checking
// that created is what the caller expects.
func mustSelfSigned(t *testing.T, dataDir, hostname string, now time.Time, wantCreated bool) tls.Certificate {
	t.Helper()
	cert, created, err := tlscert.SelfSigned(dataDir, hostname, now)
	if err != nil {
		t.Fatalf("SelfSigned(%q, %v): %v", hostname, now, err)
	}
	if created != wantCreated {
		t.Fatalf("SelfSigned(%q, %v): created = %v, want %v", hostname, now, created, wantCreated)
	}
	return cert
}

// leafOf parses the served certificate from its DER bytes, independently of
// whatever Leaf the package filled in.
func leafOf(t *testing.T, cert tls.Certificate) *x509.Certificate {
	t.Helper()
	if len(cert.Certificate) == 0 {
		t.Fatal("certificate has no DER bytes")
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatalf("parse leaf: %v", err)
	}
	return leaf
}

// poolFromCertFile builds the trust store a client would, from cert.pem.
func poolFromCertFile(t *testing.T, dataDir string) *x509.CertPool {
	t.Helper()
	pemBytes, err := os.ReadFile(tlscert.CertPath(dataDir))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatal("cert.pem holds no certificate a client can trust")
	}
	return pool
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
