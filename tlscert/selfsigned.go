package tlscert

import (
	"github.com/mailroom/mailroom/atomicfile"

	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

const (
	// dirName is the directory under the data directory that holds the
	// self-signed pair.
	dirName      = "tls"
	certFileName = "cert.pem"
	keyFileName  = "key.pem"

	// renewBefore is how long before expiry a stored certificate is
	// replaced, so a service restarted now and then never serves an
	// expired one.
	renewBefore = 30 * 24 * time.Hour
)

// CertPath returns where SelfSigned keeps the certificate in dataDir, the
// file clients pass to `curl --cacert`.
func CertPath(dataDir string) string {
	return filepath.Join(dataDir, dirName, certFileName)
}

// keyPath returns where SelfSigned keeps the private key in dataDir.
func keyPath(dataDir string) string {
	return filepath.Join(dataDir, dirName, keyFileName)
}

// SelfSigned returns the self-signed certificate stored in dataDir, making
// and storing a new one when there is none, when the stored one does not
// cover hostname, when it is not valid at now, or when it expires within
// 30 days. created reports that a new certificate was made, which the CLI
// uses to say the fingerprint changed and clients must trust it anew.
//
// A stored pair that does not load (corrupt, or the key of one certificate
// beside another, as a crash between the two renames could leave) is
// replaced rather than reported: the files are this package's own, and
// nobody can repair them by hand. Errors reading them, such as permission
// denied, are reported, since a new pair could not be written either.
func SelfSigned(dataDir string, hostname string, now time.Time) (cert tls.Certificate, created bool, err error) {
	hostname = normalizeHostname(hostname)
	stored, err := loadStored(dataDir)
	if err != nil {
		return tls.Certificate{}, false, err
	}
	if stored != nil && stillUsable(stored.Leaf, hostname, now) {
		return *stored, false, nil
	}
	cert, err = createSelfSigned(dataDir, hostname, now)
	if err != nil {
		return tls.Certificate{}, false, err
	}
	return cert, true, nil
}

// loadStored returns the stored pair, or nil when it is missing or does not
// load.
func loadStored(dataDir string) (*tls.Certificate, error) {
	certPEM, err := os.ReadFile(CertPath(dataDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tlscert: reading self-signed certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyPath(dataDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tlscert: reading self-signed key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, nil
	}
	cert.Leaf = leaf
	return &cert, nil
}

// stillUsable reports whether leaf may go on being served for hostname.
func stillUsable(leaf *x509.Certificate, hostname string, now time.Time) bool {
	if now.Before(leaf.NotBefore) || now.Add(renewBefore).After(leaf.NotAfter) {
		return false
	}
	if hostname == "" {
		return true
	}
	return leaf.VerifyHostname(hostname) == nil
}

// createSelfSigned makes a new pair for hostname and stores it in dataDir.
// The key is written before the certificate: until the certificate's
// rename, the old certificate stands beside a key it does not match, which
// loadStored treats as no pair at all.
func createSelfSigned(dataDir, hostname string, now time.Time) (tls.Certificate, error) {
	certPEM, keyPEM, err := generateSelfSigned(hostname, now)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlscert: generating self-signed certificate: %w", err)
	}
	dir := filepath.Join(dataDir, dirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return tls.Certificate{}, fmt.Errorf("tlscert: creating %s: %w", dir, err)
	}
	// MkdirAll leaves an existing directory's mode alone; the key's
	// directory is ours and should not be listable by others.
	if err := os.Chmod(dir, 0o700); err != nil {
		return tls.Certificate{}, fmt.Errorf("tlscert: %w", err)
	}
	if err := atomicfile.Replace(keyPath(dataDir), keyPEM, 0o600); err != nil {
		return tls.Certificate{}, fmt.Errorf("tlscert: writing self-signed key: %w", err)
	}
	if err := atomicfile.Replace(CertPath(dataDir), certPEM, 0o644); err != nil {
		return tls.Certificate{}, fmt.Errorf("tlscert: writing self-signed certificate: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlscert: self-signed pair does not load: %w", err)
	}
	if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
		return tls.Certificate{}, fmt.Errorf("tlscert: self-signed certificate does not parse: %w", err)
	}
	return cert, nil
}
