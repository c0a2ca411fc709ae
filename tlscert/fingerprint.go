package tlscert

import (
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"strings"
)

// Fingerprint returns the SHA-256 digest of cert's leaf (its first DER
// certificate) as upper-case hex bytes joined by colons, the form
// `openssl x509 -noout -fingerprint -sha256` prints, so an operator can
// compare what the service printed with what a client sees. It returns ""
// for a certificate with no DER bytes.
func Fingerprint(cert tls.Certificate) string {
	if len(cert.Certificate) == 0 {
		return ""
	}
	sum := sha256.Sum256(cert.Certificate[0])
	hexBytes := make([]string, len(sum))
	for i, b := range sum {
		hexBytes[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(hexBytes, ":")
}
