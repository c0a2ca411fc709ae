package tracking

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/oklog/ulid/v2"

	"github.com/mailroom/mailroom"
)

// Tokens seals and opens the tokens of tracked copies' addresses
// (docs/api.md "Engagement tracking"): {public-url}/t/o/{token} for the
// open pixel, {public-url}/t/c/{token} for each link.
//
// A token is self-contained: a click token holds the message, the
// recipient, the link's index and its original address, so that the
// redirect of a mail kept for years still works after the message left
// the log, and answering it reads no storage. It is sealed, so that no one
// without the key can make one: not a redirect to an address of their
// choosing (an open redirect), not a click of another recipient, not
// another link of the same copy (re-pointing).
//
// The sealing is deterministic authenticated encryption, the SIV
// construction (RFC 5297 §2.6's idea, built from HMAC-SHA256 and
// AES-256-CTR): the same inputs make the same token, so that a retry sends
// the very bytes the first attempt sent and a copy's DKIM signature never
// changes. Determinism reveals only that two tokens are equal, which the
// addresses in one copy already show.
//
//	iv     = HMAC-SHA256(macKey, version || plaintext)[:16]
//	token  = base64url(version || iv || AES-256-CTR(encKey, iv, plaintext))
//
// Opening decrypts, then recomputes the iv and compares it in constant
// time: an altered, cut, forged or other-key token fails, and so does one
// of the other kind (an open token at the click route), all alike.
//
// The plaintext, big-endian:
//
//	kind (1: 'o' or 'c') | message ULID (16) | uvarint len | recipient
//	click only: uvarint link index | original URL (the rest)
type Tokens struct {
	encKey cipher.Block
	macKey []byte
}

const (
	tokenV1 = 1
	ivBytes = 16

	kindOpen  = 'o'
	kindClick = 'c'

	// maxRecipient is the longest address a token holds (RFC 5321
	// §4.5.3.1: 64 octets of local part, 255 of domain).
	maxRecipient = 320
	// MaxLinkURL is the longest original address a link may have to be
	// tracked: a longer one is left as it is, since its token would make
	// a request line that reverse proxies refuse (nginx's 8 KiB default).
	MaxLinkURL = 4096
	// maxToken bounds a token's length before it is decoded: the longest
	// click token, base64 of 1+16+(1+16+2+320+2+4096) bytes, is under
	// 6,000 characters.
	maxToken = 6144
)

var tokenEncoding = base64.RawURLEncoding.Strict()

// NewTokens derives the keys of tokens from key (the sealer's
// DeriveKey("mailroom tracking v1"), which every node shares so that any
// of them answers any link): one for the cipher, one for the MAC, each an
// HMAC of key with its own label, so that neither reveals the other.
func NewTokens(key []byte) (*Tokens, error) {
	if len(key) < 16 {
		return nil, fmt.Errorf("tracking tokens: a key of %d bytes is too short", len(key))
	}
	enc, err := aes.NewCipher(derive(key, "mailroom tracking encryption"))
	if err != nil {
		return nil, err
	}
	return &Tokens{encKey: enc, macKey: derive(key, "mailroom tracking mac")}, nil
}

func derive(key []byte, label string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label))
	return m.Sum(nil)
}

// Pixel is what an open token names: one recipient's copy of a message.
type Pixel struct {
	MessageID string
	Recipient string
}

// Link is what a click token names: link Index (among the message's
// tracked links, in document order) of one recipient's copy, and the
// address it pointed to before it was rewritten.
type Link struct {
	MessageID string
	Recipient string
	Index     int
	URL       string
}

// SealPixel returns the token of p's open pixel.
func (t *Tokens) SealPixel(p Pixel) (string, error) {
	b, err := plainHead(kindOpen, p.MessageID, p.Recipient, 0)
	if err != nil {
		return "", err
	}
	return t.seal(b), nil
}

// SealLink returns the token of l's click address.
func (t *Tokens) SealLink(l Link) (string, error) {
	if l.Index < 0 || l.Index >= mailroom.MaxTrackedLinks {
		return "", fmt.Errorf("tracking token: link index %d out of range", l.Index)
	}
	if l.URL == "" || len(l.URL) > MaxLinkURL || !utf8.ValidString(l.URL) {
		return "", fmt.Errorf("tracking token: link address of %d bytes cannot be sealed", len(l.URL))
	}
	b, err := plainHead(kindClick, l.MessageID, l.Recipient, len(l.URL)+binary.MaxVarintLen32)
	if err != nil {
		return "", err
	}
	b = binary.AppendUvarint(b, uint64(l.Index))
	b = append(b, l.URL...)
	return t.seal(b), nil
}

// plainHead starts a plaintext of kind, with room for extra more bytes.
func plainHead(kind byte, messageID, recipient string, extra int) ([]byte, error) {
	msg, err := messageULID(messageID)
	if err != nil {
		return nil, err
	}
	if recipient == "" || len(recipient) > maxRecipient || !utf8.ValidString(recipient) {
		return nil, fmt.Errorf("tracking token: invalid recipient %q", recipient)
	}
	b := make([]byte, 0, 1+16+2+len(recipient)+extra)
	b = append(b, kind)
	b = append(b, msg[:]...)
	b = binary.AppendUvarint(b, uint64(len(recipient)))
	return append(b, recipient...), nil
}

func (t *Tokens) seal(plain []byte) string {
	out := make([]byte, 1+ivBytes+len(plain))
	out[0] = tokenV1
	copy(out[1:], t.iv(plain))
	cipher.NewCTR(t.encKey, out[1:1+ivBytes]).XORKeyStream(out[1+ivBytes:], plain)
	return tokenEncoding.EncodeToString(out)
}

// iv is the synthetic IV, which is also the token's MAC: it covers the
// version and every byte of the plaintext.
func (t *Tokens) iv(plain []byte) []byte {
	m := hmac.New(sha256.New, t.macKey)
	m.Write([]byte{tokenV1})
	m.Write(plain)
	return m.Sum(nil)[:ivBytes]
}

// notValid is the one answer to every token that does not open: to its
// holder, an address that does not verify names nothing.
func notValid() error {
	return mailroom.Errorf(mailroom.ECodeNotFound, "This link is not valid: it may have been cut short or altered.")
}

// OpenPixel checks an open token and returns what it names; any token that
// is not one is ECodeNotFound.
func (t *Tokens) OpenPixel(token string) (Pixel, error) {
	plain, ok := t.open(token, kindOpen)
	if !ok {
		return Pixel{}, notValid()
	}
	msg, rcpt, rest, ok := readHead(plain)
	if !ok || len(rest) != 0 {
		return Pixel{}, notValid()
	}
	return Pixel{MessageID: msg, Recipient: rcpt}, nil
}

// OpenLink checks a click token and returns what it names; any token that
// is not one (an open token too) is ECodeNotFound.
func (t *Tokens) OpenLink(token string) (Link, error) {
	plain, ok := t.open(token, kindClick)
	if !ok {
		return Link{}, notValid()
	}
	msg, rcpt, rest, ok := readHead(plain)
	if !ok {
		return Link{}, notValid()
	}
	index, n := binary.Uvarint(rest)
	if n <= 0 || index >= mailroom.MaxTrackedLinks || len(rest) == n || !utf8.Valid(rest[n:]) {
		return Link{}, notValid()
	}
	return Link{MessageID: msg, Recipient: rcpt, Index: int(index), URL: string(rest[n:])}, nil
}

// open decodes, decrypts and authenticates token, and checks its kind.
// The length is bounded before anything is decoded.
func (t *Tokens) open(token string, kind byte) ([]byte, bool) {
	if len(token) > maxToken {
		return nil, false
	}
	b, err := tokenEncoding.DecodeString(token)
	if err != nil || len(b) < 1+ivBytes+1+16 || b[0] != tokenV1 {
		return nil, false
	}
	iv, plain := b[1:1+ivBytes], b[1+ivBytes:]
	cipher.NewCTR(t.encKey, iv).XORKeyStream(plain, plain)
	if subtle.ConstantTimeCompare(iv, t.iv(plain)) != 1 || plain[0] != kind {
		return nil, false
	}
	return plain, true
}

// readHead reads the message and recipient of an authenticated plaintext.
func readHead(plain []byte) (messageID, recipient string, rest []byte, ok bool) {
	var msg ulid.ULID
	copy(msg[:], plain[1:17])
	n, w := binary.Uvarint(plain[17:])
	if w <= 0 || n == 0 || n > maxRecipient || uint64(len(plain)-17-w) < n {
		return "", "", nil, false
	}
	rcpt := plain[17+w : 17+w+int(n)]
	if !utf8.Valid(rcpt) {
		return "", "", nil, false
	}
	return mailroom.PrefixMessage + strings.ToLower(msg.String()), string(rcpt), plain[17+w+int(n):], true
}

// messageULID returns the ULID of a message id NewID made.
func messageULID(id string) (ulid.ULID, error) {
	if !mailroom.IsID(id, mailroom.PrefixMessage) {
		return ulid.ULID{}, fmt.Errorf("tracking token: %q is not a message id", id)
	}
	u, err := ulid.ParseStrict(strings.ToUpper(id[len(mailroom.PrefixMessage):]))
	if err != nil {
		return ulid.ULID{}, fmt.Errorf("tracking token: %q: %w", id, err)
	}
	return u, nil
}
