package compose

import (
	"bytes"
	"io"
	"mime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-message"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/unsubscribe"
)

// testNow is the composer's clock in tests: the Date header is then known.
var testNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// testDomainKey is a real domain key, made the way the service makes one,
// with the TXT record it publishes. RSA-2048 generation is slow, so once.
var testDomainKey = sync.OnceValues(func() (mailroom.DKIMKey, string) {
	sel, priv, pub, err := mailroom.NewDKIMKey(testNow)
	if err != nil {
		panic(err)
	}
	return mailroom.DKIMKey{Domain: "example.com", Selector: sel, PrivateKeyPKCS8: priv},
		mailroom.DKIMRecordValue(pub)
})

// lookupTXT answers DNS for the test key's record only, the way a
// receiver's resolver would.
func lookupTXT(name string) ([]string, error) {
	key, record := testDomainKey()
	if name == key.Selector+"._domainkey."+key.Domain {
		return []string{record}, nil
	}
	return nil, &notFound{name}
}

type notFound struct{ name string }

func (e *notFound) Error() string { return "no TXT record at " + e.name }

func testMessage() *mailroom.Message {
	return &mailroom.Message{
		ID:       "msg_01KAXYZ0000000000000000000",
		From:     mailroom.Address{Name: "Zoë Ärger", Address: "zoe@example.com"},
		To:       []mailroom.Address{{Name: `Bob "The Builder" Smith`, Address: "bob@example.net"}, {Address: "carol@example.org"}},
		Cc:       []mailroom.Address{{Name: "Dana, Ops", Address: "dana@example.org"}},
		Bcc:      []mailroom.Address{{Name: "Secret Auditor", Address: "hidden-auditor@example.org"}},
		Subject:  "Grüße aus Köln — 東京 order #42",
		Category: mailroom.CategoryTransactional,
		Text:     "Hello Bob,\nyour order has shipped.\n",
		HTML:     "<p>Hello Bob,</p><p>your order has <b>shipped</b>.</p>",
		Domain:   "example.com",

		MessageIDHeader: "01KAXYZ0000000000000000000@example.com",
	}
}

func testComposer() Composer {
	return Composer{Now: func() time.Time { return testNow }}
}

// testLinks makes unsubscribe fields as the service does, under a test key.
var testLinks = unsubscribe.Links{
	Tokens:    unsubscribe.Tokens{Key: []byte("test unsubscribe key")},
	PublicURL: "https://mail.example.com",
}

// testAccount is the account the test messages' unsubscribe links name.
const testAccount = "acct_01kaxyz0000000000000000000"

// copyFields are the List-Unsubscribe pair of rcpt's copy of m, as the
// delivery worker makes them.
func copyFields(t *testing.T, m *mailroom.Message, rcpt string) []mailroom.Header {
	t.Helper()
	fs, err := testLinks.Fields(mailroom.Unsubscribe{AccountID: testAccount, MessageID: strings.ToLower(m.ID), Address: rcpt},
		"bounces."+m.Domain)
	if err != nil {
		t.Fatalf("unsubscribe fields: %v", err)
	}
	return fs
}

// mustComposeCopy composes marketing mail m and returns rcpt's copy, as the
// delivery worker sends it.
func mustComposeCopy(t *testing.T, m *mailroom.Message, rcpt string) []byte {
	t.Helper()
	key, _ := testDomainKey()
	base := mustCompose(t, m)
	copies, err := testComposer().Copies(base, key)
	if err != nil {
		t.Fatalf("Copies: %v", err)
	}
	raw, err := copies.Copy(copyFields(t, m, rcpt), "")
	if err != nil {
		t.Fatalf("copy for %s: %v", rcpt, err)
	}
	return raw
}

func mustCompose(t *testing.T, m *mailroom.Message) []byte {
	t.Helper()
	key, _ := testDomainKey()
	raw, err := testComposer().Compose(m, key)
	if err != nil {
		t.Fatalf("Compose: %v", err)
	}
	return raw
}

// node is a parsed MIME entity, as a receiving client sees it.
type node struct {
	header message.Header
	body   []byte // decoded; leaves only
	parts  []*node
}

func parse(t *testing.T, raw []byte) *node {
	t.Helper()
	e, err := message.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return readNode(t, e)
}

func readNode(t *testing.T, e *message.Entity) *node {
	t.Helper()
	n := &node{header: e.Header}
	mr := e.MultipartReader()
	if mr == nil {
		b, err := io.ReadAll(e.Body)
		if err != nil {
			t.Fatalf("read part: %v", err)
		}
		n.body = b
		return n
	}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatalf("next part: %v", err)
		}
		n.parts = append(n.parts, readNode(t, p))
	}
}

func (n *node) mediaType() string {
	mt, _, _ := n.header.ContentType()
	return mt
}

// shape is the structure as one line: "multipart/alternative[text/plain text/html]".
func (n *node) shape() string {
	if n.parts == nil {
		return n.mediaType()
	}
	var s []string
	for _, p := range n.parts {
		s = append(s, p.shape())
	}
	return n.mediaType() + "[" + strings.Join(s, " ") + "]"
}

// leaves are the non-multipart parts in order.
func (n *node) leaves() []*node {
	if n.parts == nil {
		return []*node{n}
	}
	var out []*node
	for _, p := range n.parts {
		out = append(out, p.leaves()...)
	}
	return out
}

func (n *node) find(mediaType string) *node {
	for _, l := range n.leaves() {
		if l.mediaType() == mediaType {
			return l
		}
	}
	return nil
}

func (n *node) disposition() (string, map[string]string) {
	d, params, _ := mime.ParseMediaType(n.header.Get("Content-Disposition"))
	return d, params
}
