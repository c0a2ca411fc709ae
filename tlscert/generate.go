package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"slices"
	"strings"
	"time"
)

// validityYears is how long a self-signed certificate lasts. It is long
// because every renewal makes clients that pinned the old one trust it anew.
const validityYears = 5

// generateSelfSigned returns a new ECDSA P-256 certificate and its PKCS#8
// key, both PEM, valid from an hour before now (to tolerate clients whose
// clocks lag) for five years.
//
// The certificate is marked as its own CA (IsCA with BasicConstraintsValid)
// so that, besides being served, it can be the trust anchor clients are
// given: `curl --cacert cert.pem`, or an x509.CertPool built from the file.
func generateSelfSigned(hostname string, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, nil, err
	}
	dnsNames, ips := subjectAltNames(hostname)
	commonName := "localhost"
	if hostname != "" {
		commonName = hostname
	}
	template := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName, Organization: []string{"Mailroom self-signed"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(validityYears, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
		DNSNames:              dnsNames,
		IPAddresses:           ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
	return certPEM, keyPEM, nil
}

// randomSerial returns a random serial in [1, 2^128). RFC 5280 §4.1.2.2
// requires it positive; randomness keeps two certificates made in the same
// data directory from ever sharing issuer and serial.
func randomSerial() (*big.Int, error) {
	limit := new(big.Int).Lsh(big.NewInt(1), 128)
	limit.Sub(limit, big.NewInt(1))
	n, err := rand.Int(rand.Reader, limit)
	if err != nil {
		return nil, err
	}
	return n.Add(n, big.NewInt(1)), nil
}

// subjectAltNames returns the names a self-signed certificate covers:
// localhost, both loopback addresses, and hostname, as an IP address if it
// is one (RFC 6125 §6.2.1: clients match IPs against iPAddress entries
// only) and as a DNS name otherwise.
func subjectAltNames(hostname string) (dnsNames []string, ips []net.IP) {
	dnsNames = []string{"localhost"}
	ips = []net.IP{net.IPv4(127, 0, 0, 1).To4(), net.IPv6loopback}
	if hostname == "" {
		return dnsNames, ips
	}
	if ip := net.ParseIP(hostname); ip != nil {
		if v4 := ip.To4(); v4 != nil {
			ip = v4
		}
		if !slices.ContainsFunc(ips, ip.Equal) {
			ips = append(ips, ip)
		}
		return dnsNames, ips
	}
	if !slices.Contains(dnsNames, hostname) {
		dnsNames = append(dnsNames, hostname)
	}
	return dnsNames, ips
}

// normalizeHostname puts hostname in the form certificates hold: no
// surrounding space, no brackets around an IPv6 literal, no trailing root
// dot, lower case (DNS names compare case-insensitively, RFC 4343).
func normalizeHostname(hostname string) string {
	h := strings.TrimSpace(hostname)
	if len(h) > 2 && h[0] == '[' && h[len(h)-1] == ']' {
		h = h[1 : len(h)-1]
	}
	h = strings.TrimSuffix(h, ".")
	return strings.ToLower(h)
}
