package tlscert_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/tlscert"
)

// operatorPair writes a certificate and key, as an operator would supply
// them, into a fresh directory and returns their paths.
func operatorPair(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	dataDir := t.TempDir()
	mustSelfSigned(t, dataDir, "mail.example.com", testNow, true)
	return tlscert.CertPath(dataDir), keyPath(dataDir)
}

func TestLoadFiles(t *testing.T) {
	certFile, keyFile := operatorPair(t)
	cert, err := tlscert.LoadFiles(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(readFile(t, certFile))
	if string(block.Bytes) != string(cert.Certificate[0]) {
		t.Error("loaded certificate is not the one in the file")
	}
	if cert.PrivateKey == nil {
		t.Error("loaded certificate has no private key")
	}
}

func TestLoadFilesAcceptsSEC1Key(t *testing.T) {
	certFile, keyFile := operatorPair(t)
	block, _ := pem.Decode(readFile(t, keyFile))
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	sec1, err := x509.MarshalECPrivateKey(key.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1}), 0o600)
	if _, err := tlscert.LoadFiles(certFile, keyFile); err != nil {
		t.Fatalf("EC PRIVATE KEY rejected: %v", err)
	}
}

func TestLoadFilesErrors(t *testing.T) {
	garbage := []byte("this is not PEM\n")
	for _, tc := range []struct {
		name string
		// setup damages the pair and returns the paths to pass.
		setup        func(t *testing.T, certFile, keyFile string) (string, string)
		wantInError  []string // substrings; "{cert}"/"{key}" stand for the paths
		wantNotExist bool
	}{
		{
			name: "missing certificate",
			setup: func(t *testing.T, certFile, keyFile string) (string, string) {
				return filepath.Join(filepath.Dir(certFile), "absent.pem"), keyFile
			},
			wantInError:  []string{"certificate file", "absent.pem"},
			wantNotExist: true,
		},
		{
			name: "missing key",
			setup: func(t *testing.T, certFile, keyFile string) (string, string) {
				return certFile, filepath.Join(filepath.Dir(keyFile), "absent-key.pem")
			},
			wantInError:  []string{"key file", "absent-key.pem"},
			wantNotExist: true,
		},
		{
			name: "garbage certificate",
			setup: func(t *testing.T, certFile, keyFile string) (string, string) {
				writeFile(t, certFile, garbage, 0o644)
				return certFile, keyFile
			},
			wantInError: []string{"certificate file {cert}", "no PEM CERTIFICATE"},
		},
		{
			name: "corrupt certificate body",
			setup: func(t *testing.T, certFile, keyFile string) (string, string) {
				writeFile(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")}), 0o644)
				return certFile, keyFile
			},
			wantInError: []string{"certificate file {cert}", "unreadable certificate"},
		},
		{
			name: "garbage key",
			setup: func(t *testing.T, certFile, keyFile string) (string, string) {
				writeFile(t, keyFile, garbage, 0o600)
				return certFile, keyFile
			},
			wantInError: []string{"key file {key}", "no PEM PRIVATE KEY"},
		},
		{
			name: "corrupt key body",
			setup: func(t *testing.T, certFile, keyFile string) (string, string) {
				writeFile(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("secret-looking-bytes")}), 0o600)
				return certFile, keyFile
			},
			wantInError: []string{"key file {key}", "unreadable PRIVATE KEY"},
		},
		{
			name: "files swapped",
			setup: func(t *testing.T, certFile, keyFile string) (string, string) {
				return keyFile, certFile
			},
			wantInError: []string{"certificate file {cert}", "swapped"},
		},
		{
			name: "key of another certificate",
			setup: func(t *testing.T, certFile, keyFile string) (string, string) {
				other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
				if err != nil {
					t.Fatal(err)
				}
				der, err := x509.MarshalPKCS8PrivateKey(other)
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
				return certFile, keyFile
			},
			wantInError: []string{"key file {key} does not belong to certificate file {cert}"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			certFile, keyFile := operatorPair(t)
			certArg, keyArg := tc.setup(t, certFile, keyFile)
			_, err := tlscert.LoadFiles(certArg, keyArg)
			if err == nil {
				t.Fatal("LoadFiles succeeded")
			}
			expand := strings.NewReplacer("{cert}", certArg, "{key}", keyArg)
			for _, want := range tc.wantInError {
				if want = expand.Replace(want); !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			assertNoKeyMaterial(t, err, certArg, keyArg)
			if tc.wantNotExist && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("error %v does not wrap fs.ErrNotExist", err)
			}
		})
	}
}

// assertNoKeyMaterial fails if err quotes any private key held in paths,
// either its raw bytes or their base64 as it appears in the PEM file.
func assertNoKeyMaterial(t *testing.T, err error, paths ...string) {
	t.Helper()
	for _, path := range paths {
		rest, readErr := os.ReadFile(path)
		if readErr != nil {
			continue // a missing file holds no key
		}
		for {
			var block *pem.Block
			if block, rest = pem.Decode(rest); block == nil {
				break
			}
			if !strings.HasSuffix(block.Type, "PRIVATE KEY") {
				continue
			}
			encoded := base64.StdEncoding.EncodeToString(block.Bytes)
			for _, secret := range []string{string(block.Bytes), encoded[:min(len(encoded), 24)]} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q quotes the private key in %s", err, path)
				}
			}
		}
	}
}
