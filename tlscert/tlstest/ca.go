// Package tlstest is a certificate authority of the tests' own: the
// receivers and MTA-STS policy servers of a test present certificates it
// issues, and the code under test trusts it as it would the system's roots
// (a pool, or SSL_CERT_FILE), so that verification is exercised for real:
// a certificate for another name, an expired one, or one from another CA
// fails as it would on the internet.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA issues certificates. It is safe for concurrent use.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// NewCA makes a new authority, valid from an hour ago for a year.
func NewCA(tb testing.TB) *CA {
	tb.Helper()
	key := mustKey(tb)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(tb),
		Subject:               pkix.Name{CommonName: "Mailroom test CA", Organization: []string{"Mailroom tests"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	return &CA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Pool is a pool holding the authority alone.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// PEM is the authority's certificate, PEM-encoded.
func (ca *CA) PEM() []byte { return ca.pem }

// WriteFile writes the authority's certificate to a file in a temporary
// directory of tb and returns its path: what SSL_CERT_FILE names.
func (ca *CA) WriteFile(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "ca.pem")
	if err := os.WriteFile(path, ca.pem, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// Issue returns a server certificate for names (DNS names, or IP
// addresses), valid from an hour ago for a month.
func (ca *CA) Issue(tb testing.TB, names ...string) tls.Certificate {
	tb.Helper()
	now := time.Now()
	return ca.IssueValid(tb, now.Add(-time.Hour), now.AddDate(0, 1, 0), names...)
}

// IssueValid is Issue with the validity given: an expired certificate
// ends before now.
func (ca *CA) IssueValid(tb testing.TB, notBefore, notAfter time.Time, names ...string) tls.Certificate {
	tb.Helper()
	key := mustKey(tb)
	tmpl := &x509.Certificate{
		SerialNumber: serial(tb),
		Subject:      pkix.Name{CommonName: first(names)},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		tb.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der, ca.cert.Raw}, PrivateKey: key, Leaf: leaf}
}

// ServerConfig is a TLS server configuration presenting cert.
func ServerConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

func first(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

func mustKey(tb testing.TB) *ecdsa.PrivateKey {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	return key
}

func serial(tb testing.TB) *big.Int {
	tb.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		tb.Fatal(err)
	}
	return n.Add(n, big.NewInt(1))
}
