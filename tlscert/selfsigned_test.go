package tlscert_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mailroom/mailroom/tlscert"
)

func TestCertPath(t *testing.T) {
	got := tlscert.CertPath("/var/lib/mailroom")
	if want := filepath.Join("/var/lib/mailroom", "tls", "cert.pem"); got != want {
		t.Fatalf("CertPath = %q, want %q", got, want)
	}
}

func TestSelfSignedCreatesFilesWithModes(t *testing.T) {
	dataDir := t.TempDir()
	cert := mustSelfSigned(t, dataDir, "", testNow, true)

	for _, tc := range []struct {
		path string
		mode os.FileMode
	}{
		{filepath.Join(dataDir, "tls"), os.ModeDir | 0o700},
		{tlscert.CertPath(dataDir), 0o644},
		{keyPath(dataDir), 0o600},
	} {
		info, err := os.Stat(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode() != tc.mode {
			t.Errorf("%s: mode %v, want %v", tc.path, info.Mode(), tc.mode)
		}
	}

	// Nothing but the pair is left behind: temporary files were renamed.
	entries, err := os.ReadDir(filepath.Join(dataDir, "tls"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"cert.pem", "key.pem"}) {
		t.Errorf("tls directory holds %v, want [cert.pem key.pem]", names)
	}

	// The files on disk are the certificate returned.
	block, _ := pem.Decode(readFile(t, tlscert.CertPath(dataDir)))
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("cert.pem: want a CERTIFICATE block, got %v", block)
	}
	if !bytes.Equal(block.Bytes, cert.Certificate[0]) {
		t.Error("cert.pem does not hold the certificate returned")
	}
}

func TestSelfSignedTightensExistingDirectory(t *testing.T) {
	dataDir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dataDir, "tls"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustSelfSigned(t, dataDir, "", testNow, true)
	info, err := os.Stat(filepath.Join(dataDir, "tls"))
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o700 {
		t.Errorf("tls directory mode %v, want 0700", perm)
	}
}

func TestSelfSignedKeyIsPKCS8P256(t *testing.T) {
	dataDir := t.TempDir()
	cert := mustSelfSigned(t, dataDir, "", testNow, true)

	block, rest := pem.Decode(readFile(t, keyPath(dataDir)))
	if block == nil || block.Type != "PRIVATE KEY" {
		t.Fatalf("key.pem: want a PRIVATE KEY block, got %v", block)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		t.Errorf("key.pem has %d bytes after the key", len(rest))
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatalf("key.pem is not PKCS#8: %v", err)
	}
	key, ok := parsed.(*ecdsa.PrivateKey)
	if !ok {
		t.Fatalf("key is %T, want *ecdsa.PrivateKey", parsed)
	}
	if key.Curve != elliptic.P256() {
		t.Errorf("curve %s, want P-256", key.Curve.Params().Name)
	}
	if !key.PublicKey.Equal(leafOf(t, cert).PublicKey) {
		t.Error("key.pem does not hold the certificate's key")
	}
}

func TestSelfSignedCertificateFields(t *testing.T) {
	leaf := leafOf(t, mustSelfSigned(t, t.TempDir(), "", testNow, true))

	if !leaf.NotBefore.Equal(testNow.Add(-time.Hour)) {
		t.Errorf("NotBefore %v, want %v", leaf.NotBefore, testNow.Add(-time.Hour))
	}
	if want := testNow.AddDate(5, 0, 0); !leaf.NotAfter.Equal(want) {
		t.Errorf("NotAfter %v, want %v", leaf.NotAfter, want)
	}
	if leaf.KeyUsage != x509.KeyUsageDigitalSignature {
		t.Errorf("KeyUsage %v, want DigitalSignature only", leaf.KeyUsage)
	}
	if !slices.Equal(leaf.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
		t.Errorf("ExtKeyUsage %v, want [ServerAuth]", leaf.ExtKeyUsage)
	}
	if !leaf.IsCA || !leaf.BasicConstraintsValid {
		t.Errorf("IsCA=%v BasicConstraintsValid=%v, want both true", leaf.IsCA, leaf.BasicConstraintsValid)
	}
	if leaf.PublicKeyAlgorithm != x509.ECDSA || leaf.SignatureAlgorithm != x509.ECDSAWithSHA256 {
		t.Errorf("algorithms %v / %v, want ECDSA / ECDSAWithSHA256", leaf.PublicKeyAlgorithm, leaf.SignatureAlgorithm)
	}
	// CheckSignatureFrom would insist on KeyUsageCertSign in the parent;
	// what matters here is that the certificate's own key signed it.
	if err := leaf.CheckSignature(leaf.SignatureAlgorithm, leaf.RawTBSCertificate, leaf.Signature); err != nil {
		t.Errorf("certificate is not self-signed: %v", err)
	}
	limit := new(big.Int).Lsh(big.NewInt(1), 128)
	if leaf.SerialNumber.Sign() <= 0 || leaf.SerialNumber.Cmp(limit) >= 0 {
		t.Errorf("serial %v outside [1, 2^128)", leaf.SerialNumber)
	}
}

func TestSelfSignedSerialsAreRandom(t *testing.T) {
	a := leafOf(t, mustSelfSigned(t, t.TempDir(), "", testNow, true))
	b := leafOf(t, mustSelfSigned(t, t.TempDir(), "", testNow, true))
	if a.SerialNumber.Cmp(b.SerialNumber) == 0 {
		t.Errorf("two certificates share serial %v", a.SerialNumber)
	}
	// A random 128-bit serial has fewer than 97 bits with odds of 2^-32.
	if a.SerialNumber.BitLen() < 97 && b.SerialNumber.BitLen() < 97 {
		t.Errorf("serials %v and %v are too short to be 128-bit random", a.SerialNumber, b.SerialNumber)
	}
}

func TestSelfSignedReusesStoredCertificate(t *testing.T) {
	dataDir := t.TempDir()
	first := mustSelfSigned(t, dataDir, "mail.example.com", testNow, true)
	certBefore := readFile(t, tlscert.CertPath(dataDir))
	keyBefore := readFile(t, keyPath(dataDir))

	second := mustSelfSigned(t, dataDir, "mail.example.com", testNow.Add(24*time.Hour), false)
	if tlscert.Fingerprint(first) != tlscert.Fingerprint(second) {
		t.Errorf("fingerprint changed on reuse: %s then %s", tlscert.Fingerprint(first), tlscert.Fingerprint(second))
	}
	if !bytes.Equal(certBefore, readFile(t, tlscert.CertPath(dataDir))) ||
		!bytes.Equal(keyBefore, readFile(t, keyPath(dataDir))) {
		t.Error("reuse rewrote the stored files")
	}
	if second.Leaf == nil {
		t.Error("reused certificate has no Leaf")
	}
}

func TestSelfSignedReusesForNamesAlreadyCovered(t *testing.T) {
	dataDir := t.TempDir()
	first := mustSelfSigned(t, dataDir, "mail.example.com", testNow, true)
	for _, hostname := range []string{"", "localhost", "127.0.0.1", "::1", "[::1]", "MAIL.Example.com."} {
		again := mustSelfSigned(t, dataDir, hostname, testNow, false)
		if tlscert.Fingerprint(again) != tlscert.Fingerprint(first) {
			t.Errorf("hostname %q: certificate replaced", hostname)
		}
	}
}

func TestSelfSignedRegeneratesForNewHostname(t *testing.T) {
	dataDir := t.TempDir()
	first := mustSelfSigned(t, dataDir, "a.example.com", testNow, true)
	second := mustSelfSigned(t, dataDir, "b.example.com", testNow, true)
	if tlscert.Fingerprint(first) == tlscert.Fingerprint(second) {
		t.Fatal("new hostname kept the old certificate")
	}
	if err := leafOf(t, second).VerifyHostname("b.example.com"); err != nil {
		t.Errorf("new certificate does not cover the new hostname: %v", err)
	}
	// The new certificate is what is now stored and reused.
	third := mustSelfSigned(t, dataDir, "b.example.com", testNow, false)
	if tlscert.Fingerprint(third) != tlscert.Fingerprint(second) {
		t.Error("stored certificate is not the regenerated one")
	}
	loaded, err := tlscert.LoadFiles(tlscert.CertPath(dataDir), keyPath(dataDir))
	if err != nil {
		t.Fatal(err)
	}
	if tlscert.Fingerprint(loaded) != tlscert.Fingerprint(second) {
		t.Error("files on disk are not the regenerated pair")
	}
}

func TestSelfSignedRenewsNearExpiry(t *testing.T) {
	notAfter := testNow.AddDate(5, 0, 0)
	for _, tc := range []struct {
		name        string
		now         time.Time
		wantCreated bool
	}{
		{"31 days left", notAfter.Add(-31 * 24 * time.Hour), false},
		{"29 days left", notAfter.Add(-29 * 24 * time.Hour), true},
		{"expired", notAfter.Add(time.Hour), true},
		{"clock before NotBefore", testNow.Add(-2 * time.Hour), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dataDir := t.TempDir()
			first := mustSelfSigned(t, dataDir, "", testNow, true)
			later := mustSelfSigned(t, dataDir, "", tc.now, tc.wantCreated)
			sameCert := tlscert.Fingerprint(first) == tlscert.Fingerprint(later)
			if sameCert == tc.wantCreated {
				t.Errorf("same certificate = %v, want %v", sameCert, !tc.wantCreated)
			}
			if tc.wantCreated && !leafOf(t, later).NotAfter.Equal(tc.now.AddDate(5, 0, 0)) {
				t.Errorf("renewed NotAfter %v, want five years after %v", leafOf(t, later).NotAfter, tc.now)
			}
		})
	}
}

func TestSelfSignedReplacesBrokenPair(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dataDir string)
	}{
		{"garbage certificate", func(t *testing.T, dataDir string) {
			writeFile(t, tlscert.CertPath(dataDir), []byte("not a certificate"), 0o644)
		}},
		{"truncated key", func(t *testing.T, dataDir string) {
			key := readFile(t, keyPath(dataDir))
			writeFile(t, keyPath(dataDir), key[:len(key)/2], 0o600)
		}},
		{"key of another certificate", func(t *testing.T, dataDir string) {
			other := t.TempDir()
			mustSelfSigned(t, other, "", testNow, true)
			writeFile(t, keyPath(dataDir), readFile(t, keyPath(other)), 0o600)
		}},
		{"key missing", func(t *testing.T, dataDir string) {
			if err := os.Remove(keyPath(dataDir)); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dataDir := t.TempDir()
			first := mustSelfSigned(t, dataDir, "", testNow, true)
			tc.damage(t, dataDir)
			second := mustSelfSigned(t, dataDir, "", testNow, true)
			if tlscert.Fingerprint(first) == tlscert.Fingerprint(second) {
				t.Error("broken pair was not replaced")
			}
			if _, err := tlscert.LoadFiles(tlscert.CertPath(dataDir), keyPath(dataDir)); err != nil {
				t.Errorf("replacement pair does not load: %v", err)
			}
		})
	}
}

func TestSelfSignedReportsUnwritableDataDir(t *testing.T) {
	// A regular file where the data directory should be: nothing can be
	// stored, and the caller must hear about it.
	notADir := filepath.Join(t.TempDir(), "file")
	writeFile(t, notADir, []byte("x"), 0o600)
	if _, _, err := tlscert.SelfSigned(notADir, "", testNow); err == nil {
		t.Fatal("SelfSigned succeeded with a file as data directory")
	}
}

func writeFile(t *testing.T, path string, data []byte, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, perm); err != nil {
		t.Fatal(err)
	}
}
