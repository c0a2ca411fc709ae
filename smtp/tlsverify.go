package smtp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/mailroom/mailroom"
)

// verifyPeer checks the certificate a server presented as RFC 8461 §4.2
// asks of an MX host's: it chains to one of roots (nil: the system's,
// which on Linux honour SSL_CERT_FILE and SSL_CERT_DIR) through the
// intermediates the server sent, is within its validity, and names host
// (RFC 6125 §6.4, a wildcard only as the left-most label, as crypto/x509
// checks it). Direct's handshakes themselves verify nothing
// (InsecureSkipVerify), so that a session whose certificate fails here
// is still encrypted where no policy requires more (RFC 7435 §1); this
// check says whether it is verified.
func verifyPeer(cs tls.ConnectionState, host string, roots *x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("the server presented no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
		Roots:         roots,
		Intermediates: inter,
		DNSName:       host,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	return err
}

// certFailure names a failed verification as TLS-RPT does (RFC 8460
// §4.3.1) and says what failed, for the log and the report.
func certFailure(host string, err error) (mailroom.TLSFailure, string) {
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var unknown x509.UnknownAuthorityError
	switch {
	case errors.As(err, &hostErr):
		return mailroom.TLSFailCertificateHostMismatch, "certificate not valid for " + host
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return mailroom.TLSFailCertificateExpired, "certificate expired or not yet valid"
	case errors.As(err, &unknown):
		return mailroom.TLSFailCertificateNotTrusted, "certificate not trusted: issued by an unknown authority"
	}
	return mailroom.TLSFailValidation, fmt.Sprintf("certificate not valid: %v", err)
}
