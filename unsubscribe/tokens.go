package unsubscribe

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/oklog/ulid/v2"

	"github.com/mailroom/mailroom"
)

// One-click unsubscribe (RFC 8058, RFC 2369) for marketing mail
// (docs/api.md "Mail coming back"): every recipient's copy carries a link
// of its own, whose token names the account, the message and the address
// and is authenticated with an HMAC under a key of the service, so that
// nobody can make the link of another address, and the POST to it needs
// no API key.

// Tokens makes and opens the tokens of unsubscribe links and
// addresses.
//
// The link's token holds what it names, so that it works as long as the
// account exists, long after the message has left the log (people
// unsubscribe from mail they kept for months): base64url, unpadded, of
//
//	version (1) | account ULID (16) | message ULID (16) | mac (12) | address
//
// where mac is the HMAC-SHA256 of the rest, cut to 96 bits. A typical
// token is 80 to 100 characters.
//
// The mailto address's local part cannot hold that: RFC 5321 §4.5.3.1.1
// allows 64 octets. It is "unsubscribe-<message>-<mac>" (55 octets), whose
// mac covers the account and the address too, found among the message's
// recipients when it arrives, as a return path's is (ReturnPaths.Open):
// it works while the message is in the log.
type Tokens struct {
	// Key is the service's (sealer's DeriveKey("mailroom unsubscribe
	// v1")): every node shares it, so that any of them answers a link.
	Key []byte
}

const (
	unsubscribeV1 = 1
	// unsubscribeMACBytes is how much of the HMAC a link's token keeps: 96
	// bits, beyond guessing, where a URL leaves room for it.
	unsubscribeMACBytes = 12
	unsubscribeHead     = 1 + 16 + 16
	// maxUnsubscribeToken bounds a token's length before it is decoded:
	// the longest address (254 octets, RFC 5321 §4.5.3.1.3) makes about
	// 400 characters.
	maxUnsubscribeToken = 512

	// unsubscribeLocalPrefix starts the local part of a mailto unsubscribe
	// address.
	unsubscribeLocalPrefix = "unsubscribe-"
	// unsubscribeLocalMACBytes is the local part's mac: 80 bits, 16
	// base32 characters, as a return path's.
	unsubscribeLocalMACBytes = 10
	// unsubscribeLocalDomain separates the local part's macs from the
	// link's, whose first byte is a version.
	unsubscribeLocalDomain = 0xff
)

var (
	unsubscribeEncoding      = base64.RawURLEncoding.Strict()
	unsubscribeLocalEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)
)

// Token returns the token of u's unsubscribe link. The ids must be ids
// NewID made (a ULID after the prefix).
func (t Tokens) Token(u mailroom.Unsubscribe) (string, error) {
	acct, err := idBytes(u.AccountID, mailroom.PrefixAccount)
	if err != nil {
		return "", err
	}
	msg, err := idBytes(u.MessageID, mailroom.PrefixMessage)
	if err != nil {
		return "", err
	}
	if u.Address == "" || !utf8.ValidString(u.Address) || len(u.Address) > 320 {
		return "", fmt.Errorf("unsubscribe token: invalid address %q", u.Address)
	}
	b := make([]byte, 0, unsubscribeHead+unsubscribeMACBytes+len(u.Address))
	b = append(b, unsubscribeV1)
	b = append(b, acct[:]...)
	b = append(b, msg[:]...)
	b = append(b, t.mac(b, u.Address)...)
	b = append(b, u.Address...)
	return unsubscribeEncoding.EncodeToString(b), nil
}

func (t Tokens) mac(head []byte, address string) []byte {
	m := hmac.New(sha256.New, t.Key)
	m.Write(head)
	m.Write([]byte(address))
	return m.Sum(nil)[:unsubscribeMACBytes]
}

// Open checks a link's token and returns what it names. A token that is
// malformed, altered, or made under another key is ECodeNotFound: to its
// holder, a link that does not verify names nothing.
func (t Tokens) Open(token string) (mailroom.Unsubscribe, error) {
	notFound := mailroom.Errorf(mailroom.ECodeNotFound, "This unsubscribe link is not valid: it may have been cut short or altered.")
	if len(token) > maxUnsubscribeToken {
		return mailroom.Unsubscribe{}, notFound
	}
	b, err := unsubscribeEncoding.DecodeString(token)
	if err != nil || len(b) <= unsubscribeHead+unsubscribeMACBytes || b[0] != unsubscribeV1 {
		return mailroom.Unsubscribe{}, notFound
	}
	head, mac, address := b[:unsubscribeHead], b[unsubscribeHead:unsubscribeHead+unsubscribeMACBytes], b[unsubscribeHead+unsubscribeMACBytes:]
	if !hmac.Equal(mac, t.mac(head, string(address))) || !utf8.Valid(address) {
		return mailroom.Unsubscribe{}, notFound
	}
	var acct, msg ulid.ULID
	copy(acct[:], head[1:17])
	copy(msg[:], head[17:33])
	return mailroom.Unsubscribe{
		AccountID: mailroom.PrefixAccount + strings.ToLower(acct.String()),
		MessageID: mailroom.PrefixMessage + strings.ToLower(msg.String()),
		Address:   string(address),
	}, nil
}

// idBytes returns the ULID of an id NewID made with prefix.
func idBytes(id, prefix string) (ulid.ULID, error) {
	if !mailroom.IsID(id, prefix) {
		return ulid.ULID{}, fmt.Errorf("unsubscribe token: %q is not an id with prefix %s", id, prefix)
	}
	u, err := ulid.ParseStrict(strings.ToUpper(id[len(prefix):]))
	if err != nil {
		return ulid.ULID{}, fmt.Errorf("unsubscribe token: %q: %w", id, err)
	}
	return u, nil
}

// LocalPart returns the local part of u's mailto unsubscribe address, at
// the sending domain's bounce subdomain, where the return-path MX receives
// it: "unsubscribe-<message ULID>-<mac>", lower case, 55 octets.
func (t Tokens) LocalPart(u mailroom.Unsubscribe) (string, error) {
	if !mailroom.IsID(u.MessageID, mailroom.PrefixMessage) || !mailroom.IsID(u.AccountID, mailroom.PrefixAccount) {
		return "", fmt.Errorf("unsubscribe address: invalid ids %q, %q", u.AccountID, u.MessageID)
	}
	return unsubscribeLocalPrefix + strings.TrimPrefix(u.MessageID, mailroom.PrefixMessage) + "-" + t.localMAC(u), nil
}

func (t Tokens) localMAC(u mailroom.Unsubscribe) string {
	m := hmac.New(sha256.New, t.Key)
	m.Write([]byte{unsubscribeLocalDomain})
	m.Write([]byte(u.MessageID))
	m.Write([]byte{0})
	m.Write([]byte(u.AccountID))
	m.Write([]byte{0})
	m.Write([]byte(mailroom.AddressKey(u.Address)))
	return strings.ToLower(unsubscribeLocalEncoding.EncodeToString(m.Sum(nil)[:unsubscribeLocalMACBytes]))
}

// IsUnsubscribeLocalPart says whether a local part at a bounce subdomain
// has the form of a mailto unsubscribe address (which OpenLocalPart then
// checks): mail to it is an unsubscribe request, not a report.
func IsUnsubscribeLocalPart(localPart string) bool {
	return strings.HasPrefix(strings.ToLower(localPart), unsubscribeLocalPrefix)
}

// OpenLocalPart checks the local part of a mailto unsubscribe address
// against the message it names, which message returns (nil when there is
// none, or no longer), and returns the recipient it was made for. ok is
// false for a local part that is not such an address, for a message that
// is gone, and for a mac that matches none of its recipients (forged or
// altered).
func (t Tokens) OpenLocalPart(localPart string, message func(id string) (*mailroom.Message, error)) (u mailroom.Unsubscribe, ok bool, err error) {
	rest, found := strings.CutPrefix(strings.ToLower(localPart), unsubscribeLocalPrefix)
	if !found {
		return mailroom.Unsubscribe{}, false, nil
	}
	id, mac, found := strings.Cut(rest, "-")
	if !found || !mailroom.IsID(mailroom.PrefixMessage+id, mailroom.PrefixMessage) || len(mac) != 16 {
		return mailroom.Unsubscribe{}, false, nil
	}
	m, err := message(mailroom.PrefixMessage + id)
	if err != nil || m == nil {
		return mailroom.Unsubscribe{}, false, err
	}
	for _, r := range m.Recipients {
		c := mailroom.Unsubscribe{AccountID: m.AccountID, MessageID: m.ID, Address: r.Address}
		if hmac.Equal([]byte(mac), []byte(t.localMAC(c))) {
			return c, true, nil
		}
	}
	return mailroom.Unsubscribe{}, false, nil
}

// Links makes the List-Unsubscribe fields of one recipient's
// copy of marketing mail.
type Links struct {
	Tokens Tokens
	// PublicURL is the service's public HTTPS base (--public-url), as
	// CheckPublicURL returns it: links are PublicURL/v1/unsubscribe/TOKEN.
	PublicURL string
}

// OneClick is the List-Unsubscribe-Post value of RFC 8058 §3.1.
const OneClick = "List-Unsubscribe=One-Click"

// Fields returns the List-Unsubscribe and List-Unsubscribe-Post fields of
// u's copy, whose envelope sender is at returnPath (the sending domain's
// bounce subdomain). RFC 8058 §3.1: the https URI first, and the one a
// one-click POST goes to; RFC 2369 §2: a mailto after it, for readers
// that only mail, which the return-path MX receives.
func (l Links) Fields(u mailroom.Unsubscribe, returnPath string) ([]mailroom.Header, error) {
	if l.PublicURL == "" {
		return nil, fmt.Errorf("unsubscribe links: no public URL is set (--public-url)")
	}
	token, err := l.Tokens.Token(u)
	if err != nil {
		return nil, err
	}
	value := "<" + l.PublicURL + "/v1/unsubscribe/" + token + ">"
	if returnPath != "" {
		local, err := l.Tokens.LocalPart(u)
		if err != nil {
			return nil, err
		}
		value += ", <mailto:" + local + "@" + returnPath + ">"
	}
	return []mailroom.Header{{Name: "List-Unsubscribe", Value: value}, {Name: "List-Unsubscribe-Post", Value: OneClick}}, nil
}

// CheckPublicURL checks the service's public base URL and returns it in
// the form links are made from: https (RFC 8058 §3.1 accepts no other
// scheme), a host, an optional path prefix (a reverse proxy's), and no
// query, fragment, user or trailing slash. Characters that would end the
// URI inside List-Unsubscribe's angle brackets are refused.
func CheckPublicURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("not a URL: %v", err)
	}
	switch {
	case u.Scheme != "https":
		return "", fmt.Errorf("%q is not an https URL (RFC 8058 one-click unsubscribe links must be https)", s)
	case u.Host == "" || u.Opaque != "":
		return "", fmt.Errorf("%q names no host", s)
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "", fmt.Errorf("%q has a user, a query or a fragment; give the scheme, host and at most a path", s)
	case strings.ContainsAny(s, "<>\", \t\r\n\\"):
		return "", fmt.Errorf("%q holds a character a URL in a mail header cannot", s)
	}
	return strings.TrimRight(u.Scheme+"://"+u.Host+u.EscapedPath(), "/"), nil
}
