package submission

import (
	"crypto/sha256"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom/smtpserver"
)

// Envelope is a submitted message's SMTP envelope: MAIL FROM with its
// REQUIRETLS parameter, and the RCPT TO addresses.
type Envelope struct {
	MailFrom string
	Rcpts    []string
	// RequireTLS: MAIL FROM carried REQUIRETLS (RFC 8689 §4.1), the
	// message's requireTls: it is delivered only over verified TLS to an
	// MX that advertises REQUIRETLS, or bounced with 5.7.30.
	RequireTLS bool
}

// errRequireTLSInClear answers MAIL FROM … REQUIRETLS on a session that is
// not encrypted. RFC 8689 §4.1 has the server advertise REQUIRETLS only
// over TLS (go-smtp's EnableREQUIRETLS does so) but go-smtp takes the
// parameter in clear all the same; a message whose sender asked that it
// never travel in clear must not have come in clear either, so it is
// refused (530 5.7.10, RFC 3463 "Encryption needed"), and the client
// starts TLS first.
var errRequireTLSInClear = smtpserver.Reply(530, gosmtp.EnhancedCode{5, 7, 10},
	"REQUIRETLS needs an encrypted session: STARTTLS first (RFC 8689)")

// requireTLSDigest is the request digest of a submission with REQUIRETLS:
// another request than the same bytes without it (an Idempotency-Key
// reused across the two is refused), and the digests of submissions
// without it unchanged.
func requireTLSDigest(digest []byte) []byte {
	h := sha256.New()
	h.Write(digest)
	h.Write([]byte("\nREQUIRETLS"))
	return h.Sum(nil)
}
