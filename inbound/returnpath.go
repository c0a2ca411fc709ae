package inbound

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"strings"

	"github.com/mailroom/mailroom"
)

// ReturnPaths makes and checks the envelope senders of deliveries (VERP):
// "b-<message>-<mac>@<bounce subdomain>". The mac is an HMAC under a key of
// the service over the message id and, for a delivery to one recipient
// (the common case), that recipient's address, so that a bounce names its
// message and recipient without its body being trusted, and nobody who
// received a message (a co-recipient, a forwarder) can make the token of
// another message or another recipient to forge a bounce that suppresses
// them. A delivery to several recipients at one domain shares one
// transaction; its mac covers the message alone, and its DSN names the
// recipient in Final-Recipient (RFC 3464 §2.3.2).
type ReturnPaths struct {
	// Key is the service's (sealer's DeriveKey("return-path")): every
	// node shares it, so a bounce can arrive at any of them.
	Key []byte
}

// returnPathMACBytes is how much of the HMAC a token keeps: 80 bits, 16
// base32 characters, beyond guessing while keeping the local part (RFC
// 5321 §4.5.3.1.1: 64 octets) short.
const returnPathMACBytes = 10

var returnPathEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// EnvelopeSender is the MAIL FROM of a delivery of messageID to
// recipients, on the return-path domain returnPath.
func (p ReturnPaths) EnvelopeSender(messageID, returnPath string, recipients []string) string {
	bound := ""
	if len(recipients) == 1 {
		bound = recipients[0]
	}
	return "b-" + strings.TrimPrefix(messageID, mailroom.PrefixMessage) + "-" + p.mac(messageID, bound) + "@" + returnPath
}

func (p ReturnPaths) mac(messageID, recipient string) string {
	m := hmac.New(sha256.New, p.Key)
	m.Write([]byte(messageID))
	m.Write([]byte{0})
	m.Write([]byte(strings.ToLower(recipient)))
	return strings.ToLower(returnPathEncoding.EncodeToString(m.Sum(nil)[:returnPathMACBytes]))
}

// ReturnPathToken is what the local part of an address at a bounce
// subdomain names, once its mac is checked.
type ReturnPathToken struct {
	MessageID string
	// Recipient is the recipient the token is bound to, among the
	// message's recipients; "" for a token of the whole message (a
	// delivery to several recipients).
	Recipient string
}

// Open checks the local part of an address a report was sent to against
// the message's recipients, and returns what it names. ok is false for a
// local part that is not a token, or whose mac matches neither the message
// nor any of recipients (a forged or altered token).
func (p ReturnPaths) Open(localPart string, recipients func(messageID string) ([]string, error)) (ReturnPathToken, bool, error) {
	localPart = strings.ToLower(localPart)
	rest, ok := strings.CutPrefix(localPart, "b-")
	if !ok {
		return ReturnPathToken{}, false, nil
	}
	id, mac, ok := strings.Cut(rest, "-")
	if !ok || !mailroom.IsID(mailroom.PrefixMessage+id, mailroom.PrefixMessage) || len(mac) != 16 {
		return ReturnPathToken{}, false, nil
	}
	messageID := mailroom.PrefixMessage + id
	if hmac.Equal([]byte(mac), []byte(p.mac(messageID, ""))) {
		return ReturnPathToken{MessageID: messageID}, true, nil
	}
	rcpts, err := recipients(messageID)
	if err != nil {
		return ReturnPathToken{}, false, err
	}
	for _, r := range rcpts {
		if hmac.Equal([]byte(mac), []byte(p.mac(messageID, r))) {
			return ReturnPathToken{MessageID: messageID, Recipient: r}, true, nil
		}
	}
	return ReturnPathToken{}, false, nil
}
