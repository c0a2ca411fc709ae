package compose

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"fmt"

	"github.com/emersion/go-msgauth/dkim"

	"github.com/mailroom/mailroom"
)

// signedHeaders are the fields the signature covers when present: those a
// reader sees or that decide how the body is shown (RFC 6376 §5.4.1), and
// RFC 8058 §4's unsubscribe pair, which receivers honour only when signed.
var signedHeaders = []string{
	"From", "To", "Cc", "Subject", "Date", "Message-ID", "Reply-To",
	"MIME-Version", "Content-Type", "List-Unsubscribe", "List-Unsubscribe-Post",
}

// signedNames is the h= list for a header: the signedHeaders it has, and
// From once more. RFC 6376 §5.4.2 and §8.15: a name listed more often than
// it occurs signs its absence, so a second From added on the way (to show
// a reader another sender than the one that was verified) breaks the
// signature.
func (fs fields) signedNames() []string {
	var names []string
	for _, n := range signedHeaders {
		if fs.has(n) {
			names = append(names, n)
		}
	}
	return append(names, "From")
}

// parseKey opens the domain's PKCS #8 private key (RFC 5208): RSA, whose
// record says k=rsa (mailroom.DKIMRecordValue) and which RFC 8301 makes
// the algorithm every verifier has, or Ed25519 (RFC 8463), which signs
// only beside an RSA key (mailroom.DKIMKey.Also).
func parseKey(key mailroom.DKIMKey) (crypto.Signer, error) {
	if key.Domain == "" || key.Selector == "" {
		return nil, fmt.Errorf("compose: DKIM key needs a domain and a selector, have d=%q s=%q", key.Domain, key.Selector)
	}
	k, err := x509.ParsePKCS8PrivateKey(key.PrivateKeyPKCS8)
	if err != nil {
		return nil, fmt.Errorf("compose: DKIM key of %s (selector %s): %w", key.Domain, key.Selector, err)
	}
	switch k := k.(type) {
	case *rsa.PrivateKey:
		return k, nil
	case ed25519.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("compose: DKIM key of %s (selector %s) is %T, not RSA or Ed25519", key.Domain, key.Selector, k)
}

// sign returns the DKIM-Signature field (RFC 6376 §3.5), CRLF-terminated,
// for msg, to be put in front of it. rsa-sha256 (or ed25519-sha256 for an
// Ed25519 signer, RFC 8463 §3: go-msgauth picks it by the key) with relaxed/relaxed
// canonicalization (§3.4.2, §3.4.4), which survives the re-folding and
// whitespace changes that relays make.
func sign(msg []byte, key mailroom.DKIMKey, signer crypto.Signer, names []string) (string, error) {
	s, err := dkim.NewSigner(&dkim.SignOptions{
		Domain:                 key.Domain,
		Selector:               key.Selector,
		Signer:                 signer,
		Hash:                   crypto.SHA256,
		HeaderCanonicalization: dkim.CanonicalizationRelaxed,
		BodyCanonicalization:   dkim.CanonicalizationRelaxed,
		HeaderKeys:             names,
	})
	if err != nil {
		return "", fmt.Errorf("compose: DKIM: %w", err)
	}
	if _, err := s.Write(msg); err != nil {
		s.Close()
		return "", fmt.Errorf("compose: DKIM: %w", err)
	}
	if err := s.Close(); err != nil {
		return "", fmt.Errorf("compose: DKIM: %w", err)
	}
	return s.Signature(), nil
}
