package inbound

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"strings"

	"github.com/mailroom/mailroom"
)

// ReturnPaths makes and checks the envelope senders of deliveries (VERP),
// so that a report names its message and the recipients it may speak for
// without its body being trusted.
//
// A token is "b2-<message>-<mac>@<bounce subdomain>". The mac is an HMAC
// under a key of the service over the message id, the return-path domain
// it is minted for, and the recipients of the one SMTP transaction that
// carries it: the recipient's address for a delivery to one recipient (the
// common case, and every marketing copy), else the recipients' domain
// (delivery sends one transaction per recipient domain, and every
// recipient of a transaction is shown the same MAIL FROM). So:
//
//   - a recipient, who reads the token in the Return-Path of its copy (RFC
//     5321 §4.4), can speak only for the recipients of its own transaction:
//     itself, or those at its own domain, never a Cc or Bcc at another
//     domain, nor any recipient of another message;
//   - the token is honoured only at the bounce subdomain it was minted for:
//     at another domain's bounce subdomain its mac does not verify.
//
// A domain is the grain because the transaction's recipients are not
// written in the token (the local part holds 64 octets, RFC 5321
// §4.5.3.1.1) and the mac cannot be checked against every subset of a
// message's recipients; recipients at one domain share their receiving
// server, which could bounce any of them anyway.
//
// Mail sent before this form carries "b-<message>-<mac>" (the mac over the
// message id and the one recipient, or the message alone): see Open for
// what those still prove.
type ReturnPaths struct {
	// Key is the service's (sealer's DeriveKey("return-path")): every
	// node shares it, so a bounce can arrive at any of them.
	Key []byte
	// BounceSubdomain is the bounce subdomain of a sending domain (the
	// domain service's ReturnPathDomain): where tokens of the older form,
	// which do not say, are honoured. Nil means the default label
	// ("bounces.<domain>").
	BounceSubdomain func(sendingDomain string) string
}

const (
	// returnPathMACBytes is how much of the HMAC a token keeps: 80 bits,
	// 16 base32 characters, beyond guessing while keeping the local part
	// short: "b2-" + 26 + "-" + 16 is 46 octets of the 64 RFC 5321
	// §4.5.3.1.1 allows.
	returnPathMACBytes = 10
	// tokenPrefix starts the current form; legacyTokenPrefix the older
	// one, which no delivery makes any more.
	tokenPrefix       = "b2-"
	legacyTokenPrefix = "b-"
	// The scopes a current token's mac covers: one recipient's address,
	// or the domain of a transaction's recipients.
	scopeRecipient = "rcpt"
	scopeDomain    = "domain"
)

var returnPathEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// EnvelopeSender is the MAIL FROM of one SMTP transaction of messageID to
// recipients, on the return-path domain returnPath. Delivery gives it the
// recipients of one domain (one transaction per domain); should they span
// domains, the token covers the first recipient alone, so that it never
// speaks for a recipient at a domain it was not sent to.
func (p ReturnPaths) EnvelopeSender(messageID, returnPath string, recipients []string) string {
	kind, scope := scopeRecipient, ""
	if len(recipients) > 0 {
		scope = recipients[0]
	}
	if len(recipients) > 1 && oneDomain(recipients) {
		kind, scope = scopeDomain, domainOf(recipients[0])
	}
	return tokenPrefix + strings.TrimPrefix(messageID, mailroom.PrefixMessage) + "-" +
		p.mac(messageID, returnPath, kind, scope) + "@" + returnPath
}

func oneDomain(recipients []string) bool {
	for _, r := range recipients[1:] {
		if domainOf(r) != domainOf(recipients[0]) {
			return false
		}
	}
	return true
}

func domainOf(address string) string { return mailroom.Address{Address: address}.Domain() }

// mac is the current form's: each part length-prefixed, after a label
// that no older mac's input can start with (theirs start with the message
// id), so no token of one form or scope is a token of another.
func (p ReturnPaths) mac(messageID, returnPath, kind, scope string) string {
	m := hmac.New(sha256.New, p.Key)
	var buf []byte
	for _, part := range []string{"mailroom return-path v2", strings.ToLower(messageID),
		strings.ToLower(strings.TrimSuffix(returnPath, ".")), kind, strings.ToLower(scope)} {
		buf = binary.AppendUvarint(buf, uint64(len(part)))
		buf = append(buf, part...)
	}
	m.Write(buf)
	return encodeMAC(m.Sum(nil))
}

// legacyMAC is the older form's: over the message id and the one
// recipient, or "" for the whole message.
func (p ReturnPaths) legacyMAC(messageID, recipient string) string {
	m := hmac.New(sha256.New, p.Key)
	m.Write([]byte(messageID))
	m.Write([]byte{0})
	m.Write([]byte(strings.ToLower(recipient)))
	return encodeMAC(m.Sum(nil))
}

func encodeMAC(sum []byte) string {
	return strings.ToLower(returnPathEncoding.EncodeToString(sum[:returnPathMACBytes]))
}

// ReturnPathToken is what the local part of an address at a bounce
// subdomain names, once its mac is checked: a message and the recipients
// a report to it may change.
type ReturnPathToken struct {
	MessageID string
	// Recipient is the one recipient the token covers (as the message
	// writes it), or "".
	Recipient string
	// Domain is the recipient domain whose recipients the token covers,
	// when Recipient is "".
	Domain string
	// Legacy says the token is of the older form.
	Legacy bool
}

// Covers says whether a report to the token may change the recipient at
// address.
func (t ReturnPathToken) Covers(address string) bool {
	if t.Recipient != "" {
		return strings.EqualFold(t.Recipient, address)
	}
	return t.Domain != "" && domainOf(address) == t.Domain
}

// Open checks the local part of an address a report was sent to, at the
// domain returnPath, against the message it names, which message returns
// (nil when there is none, or no longer), and returns what it covers. ok
// is false for a local part that is not a token, a message that is gone,
// and a mac that matches none of the message's recipients or domains at
// returnPath (forged, altered, or minted for another bounce subdomain).
//
// A token of the older form ("b-…", on mail sent before this one) is
// honoured only at the bounce subdomain of the message's sending domain
// (BounceSubdomain), until the message leaves the log:
//   - one bound to a recipient covers that recipient, as it always did;
//   - one of the whole message was made only for a transaction of two or
//     more recipients at one domain, but does not say which domain, and
//     every such transaction of the message carried the same token. It
//     covers the recipients at the one domain of the message that has two
//     or more recipients; when several domains do, it covers nobody, since
//     a recipient at one of them could otherwise bounce those at another.
func (p ReturnPaths) Open(localPart, returnPath string, message func(messageID string) (*mailroom.Message, error)) (ReturnPathToken, bool, error) {
	localPart = strings.ToLower(localPart)
	returnPath = strings.ToLower(strings.TrimSuffix(returnPath, "."))
	rest, ok := strings.CutPrefix(localPart, tokenPrefix)
	legacy := false
	if !ok {
		if rest, ok = strings.CutPrefix(localPart, legacyTokenPrefix); !ok {
			return ReturnPathToken{}, false, nil
		}
		legacy = true
	}
	id, mac, ok := strings.Cut(rest, "-")
	if !ok || !mailroom.IsID(mailroom.PrefixMessage+id, mailroom.PrefixMessage) || len(mac) != 16 {
		return ReturnPathToken{}, false, nil
	}
	messageID := mailroom.PrefixMessage + id
	m, err := message(messageID)
	if err != nil || m == nil {
		return ReturnPathToken{}, false, err
	}
	var tok ReturnPathToken
	if legacy {
		tok, ok = p.openLegacy(mac, returnPath, messageID, m)
	} else {
		tok, ok = p.open(mac, returnPath, messageID, m)
	}
	tok.MessageID = messageID
	return tok, ok, nil
}

func (p ReturnPaths) open(mac, returnPath, messageID string, m *mailroom.Message) (ReturnPathToken, bool) {
	tried := map[string]bool{}
	for _, r := range m.Recipients {
		if hmac.Equal([]byte(mac), []byte(p.mac(messageID, returnPath, scopeRecipient, r.Address))) {
			return ReturnPathToken{Recipient: r.Address}, true
		}
		if d := r.Domain(); !tried[d] {
			tried[d] = true
			if hmac.Equal([]byte(mac), []byte(p.mac(messageID, returnPath, scopeDomain, d))) {
				return ReturnPathToken{Domain: d}, true
			}
		}
	}
	return ReturnPathToken{}, false
}

func (p ReturnPaths) openLegacy(mac, returnPath, messageID string, m *mailroom.Message) (ReturnPathToken, bool) {
	bounces := mailroom.RecordSettings{}.ReturnPathDomain
	if p.BounceSubdomain != nil {
		bounces = p.BounceSubdomain
	}
	if returnPath == "" || !strings.EqualFold(returnPath, bounces(m.Domain)) {
		return ReturnPathToken{}, false
	}
	if hmac.Equal([]byte(mac), []byte(p.legacyMAC(messageID, ""))) {
		d := onlySharedDomain(m)
		return ReturnPathToken{Domain: d, Legacy: true}, d != ""
	}
	for _, r := range m.Recipients {
		if hmac.Equal([]byte(mac), []byte(p.legacyMAC(messageID, r.Address))) {
			return ReturnPathToken{Recipient: r.Address, Legacy: true}, true
		}
	}
	return ReturnPathToken{}, false
}

// onlySharedDomain is the one domain at which m has two or more
// recipients, or "" when none or several have.
func onlySharedDomain(m *mailroom.Message) string {
	count := map[string]int{}
	for _, r := range m.Recipients {
		count[r.Domain()]++
	}
	shared := ""
	for d, n := range count {
		if n < 2 {
			continue
		}
		if shared != "" {
			return ""
		}
		shared = d
	}
	return shared
}
