package compose

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/emersion/go-message"

	"github.com/mailroom/mailroom"
)

// ErrNoBody is returned for a message with neither text nor HTML: there is
// nothing to send, and composing again will not change that.
var ErrNoBody = errors.New("compose: message has neither text nor html")

// Composer implements mailroom.Composer. It holds no state of its own, so
// one value serves every worker at once. Every error it returns is
// permanent for that message and key: composing again gives the same error.
type Composer struct {
	// Now gives the Date header; nil means time.Now. Injected so that tests
	// get stable bytes.
	Now func() time.Time
}

var _ mailroom.Composer = Composer{}

// Compose returns m as signed RFC 5322 bytes with CRLF line endings: the
// DKIM-Signature field first, then the header (header.go), then the MIME
// body (body.go). m is not modified.
//
// Marketing mail is the exception: each recipient's copy carries its own
// RFC 8058 unsubscribe link, so it is composed without them and left
// unsigned, the part common to every copy, which Copies completes per
// recipient (copies.go). Tracked mail is composed the same way: its
// common part holds the client's HTML, and each copy an HTML part of its
// own (docs/api.md "Engagement tracking"). The key is checked all the
// same.
func (c Composer) Compose(m *mailroom.Message, key mailroom.DKIMKey) ([]byte, error) {
	// The key first: a domain whose key cannot be opened cannot send
	// anything, and saying so beats saying what else is wrong.
	signers, err := signersFor(key)
	if err != nil {
		return nil, err
	}
	root, err := bodyTree(m)
	if err != nil {
		return nil, err
	}
	fields, err := c.headerFields(m, root.header)
	if err != nil {
		return nil, err
	}

	h, err := fields.header()
	if err != nil {
		return nil, fmt.Errorf("compose: %w", err)
	}
	// The message is written after room for its DKIM-Signature field, and
	// into a buffer sized for it up front: a 5 MiB attachment would
	// otherwise cost a copy per doubling of the buffer and a last one to
	// put the signature in front.
	buf := bytes.NewBuffer(make([]byte, sigRoom, sigRoom+estimatedSize(m)))
	w, err := message.CreateWriter(buf, h)
	if err != nil {
		return nil, err
	}
	if err := root.writeBody(w); err != nil {
		return nil, fmt.Errorf("compose: %w", err)
	}
	// Every line ends in CRLF, the last one too (RFC 5322 §2.1, RFC 5321
	// §4.1.1.4): SMTP would add the missing one on the wire, and the
	// stored bytes must be exactly those the receiver gets.
	if !bytes.HasSuffix(buf.Bytes(), []byte("\r\n")) {
		buf.WriteString("\r\n")
	}

	msg := buf.Bytes()[sigRoom:]
	if perRecipient(m) {
		return msg, nil
	}
	// One signature per key (RSA, and Ed25519 beside it, RFC 8463 §3),
	// each over the message without the others: a verifier checks each
	// on its own (RFC 6376 §4.2), and h= does not name DKIM-Signature.
	sig := ""
	for _, ks := range signers {
		one, err := sign(msg, ks.key, ks.signer, fields.signedNames())
		if err != nil {
			return nil, err
		}
		sig += one
	}
	if len(sig) <= sigRoom {
		out := buf.Bytes()[sigRoom-len(sig):]
		copy(out, sig)
		return out, nil
	}
	out := make([]byte, 0, len(sig)+len(msg))
	out = append(out, sig...)
	return append(out, msg...), nil
}

// sigRoom is the room kept in front of a message for its DKIM-Signature
// field: an RSA-2048 signature with its tags and a long h= list is about
// 700 bytes.
const sigRoom = 2048

// estimatedSize is about the size of m once composed: base64 grows
// attachments by 4/3 and a CRLF every 76 characters, quoted-printable
// grows typical text by a few percent, and the header fields take a few
// KiB.
func estimatedSize(m *mailroom.Message) int {
	n := 8 << 10
	n += (len(m.HTML) + len(m.Text)) * 11 / 10
	for _, a := range m.Attachments {
		n += len(a.Content)*4/3*78/76 + 512
	}
	return n
}

func (c Composer) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
