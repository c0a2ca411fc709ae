package compose

import (
	"bufio"
	"bytes"
	"net/textproto"
	"strings"
	"testing"

	"github.com/emersion/go-message/mail"

	"github.com/mailroom/mailroom"
)

// headerNames lists the top-level field names in order, as spelled.
func headerNames(t *testing.T, raw []byte) []string {
	t.Helper()
	head, _, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		t.Fatal("no blank line ends the header")
	}
	var names []string
	for _, line := range strings.Split(string(head), "\r\n") {
		if line == "" || line[0] == ' ' || line[0] == '\t' {
			continue
		}
		name, _, _ := strings.Cut(line, ":")
		names = append(names, name)
	}
	return names
}

func TestHeadersDecodeToWhatTheClientSent(t *testing.T) {
	m := testMessage()
	m.ReplyTo = []mailroom.Address{{Name: "Support – 客服", Address: "help@example.com"}}
	raw := mustCompose(t, m)

	r, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header
	if got, err := h.Subject(); err != nil || got != m.Subject {
		t.Errorf("Subject = %q, %v; want %q", got, err, m.Subject)
	}
	for _, c := range []struct {
		name string
		want []mailroom.Address
	}{{"From", []mailroom.Address{m.From}}, {"To", m.To}, {"Cc", m.Cc}, {"Reply-To", m.ReplyTo}} {
		got, err := h.AddressList(c.name)
		if err != nil {
			t.Errorf("%s: %v (raw %q)", c.name, err, h.Get(c.name))
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: %d addresses, want %d", c.name, len(got), len(c.want))
			continue
		}
		for i, a := range got {
			if a.Name != c.want[i].Name || a.Address != c.want[i].Address {
				t.Errorf("%s[%d] = %q <%s>, want %q <%s>", c.name, i, a.Name, a.Address, c.want[i].Name, c.want[i].Address)
			}
		}
	}
	if id, err := h.MessageID(); err != nil || id != m.MessageIDHeader {
		t.Errorf("Message-ID = %q, %v; want %q", id, err, m.MessageIDHeader)
	}
	if d, err := h.Date(); err != nil || !d.Equal(testNow) {
		t.Errorf("Date = %v, %v; want %v", d, err, testNow)
	}
	if v := h.Get("MIME-Version"); v != "1.0" {
		t.Errorf("MIME-Version = %q", v)
	}
	// Non-ASCII never travels raw in these headers: RFC 2047 words instead.
	head, _, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	for _, b := range head {
		if b >= 0x80 {
			t.Fatalf("header has a raw non-ASCII byte:\n%s", head)
		}
	}
}

func TestHeaderOrderAndSpelling(t *testing.T) {
	m := testMessage()
	m.ReplyTo = []mailroom.Address{{Address: "help@example.com"}}
	m.Headers = []mailroom.Header{{Name: "X-Entity-Ref-ID", Value: "b"}, {Name: "X-A", Value: "a"}}
	got := strings.Join(headerNames(t, mustCompose(t, m)), " ")
	want := "DKIM-Signature From To Cc Reply-To Subject Date Message-ID MIME-Version Content-Type X-Entity-Ref-ID X-A"
	if got != want {
		t.Errorf("header fields:\n got %s\nwant %s", got, want)
	}
}

func TestBccIsNeverDisclosed(t *testing.T) {
	m := testMessage()
	raw := mustCompose(t, m)
	if bytes.Contains(bytes.ToLower(raw), []byte("hidden-auditor")) {
		t.Error("a Bcc address appears in the message")
	}
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(raw)))
	h, err := tp.ReadMIMEHeader()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := h["Bcc"]; ok {
		t.Error("message has a Bcc header")
	}
}

func TestExtraHeadersKeepOrderAndEncodeNonASCII(t *testing.T) {
	m := testMessage()
	m.Headers = []mailroom.Header{
		{Name: "X-Campaign", Value: "Frühling 2026"},
		{Name: "X-Entity-Ref-ID", Value: "ref-123"},
	}
	raw := mustCompose(t, m)
	r, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := r.Header.Text("X-Campaign"); err != nil || v != "Frühling 2026" {
		t.Errorf("X-Campaign = %q, %v", v, err)
	}
	if v := r.Header.Get("X-Entity-Ref-ID"); v != "ref-123" {
		t.Errorf("X-Entity-Ref-ID = %q", v)
	}
}

func TestRefusesHeaderInjection(t *testing.T) {
	key, _ := testDomainKey()
	for name, mutate := range map[string]func(m *mailroom.Message){
		"CRLF in subject":    func(m *mailroom.Message) { m.Subject = "hi\r\nBcc: victim@example.org" },
		"LF in display name": func(m *mailroom.Message) { m.To[0].Name = "Bob\nBcc: victim@example.org" },
		"CRLF in header value": func(m *mailroom.Message) {
			m.Headers = []mailroom.Header{{Name: "X-A", Value: "a\r\nBcc: x@example.org"}}
		},
		"colon in header name":   func(m *mailroom.Message) { m.Headers = []mailroom.Header{{Name: "X-A: b", Value: "c"}} },
		"Bcc as an extra header": func(m *mailroom.Message) { m.Headers = []mailroom.Header{{Name: "bcc", Value: "x@example.org"}} },
		"second From":            func(m *mailroom.Message) { m.Headers = []mailroom.Header{{Name: "From", Value: "ceo@example.com"}} },
		"Content-Type override":  func(m *mailroom.Message) { m.Headers = []mailroom.Header{{Name: "Content-Type", Value: "text/html"}} },
		"CRLF in content id": func(m *mailroom.Message) {
			m.Attachments = []mailroom.Attachment{{Filename: "a.png", ContentID: "a\r\nX: y", Content: []byte("x")}}
		},
		"encoded-word in content id": func(m *mailroom.Message) {
			m.Attachments = []mailroom.Attachment{{Filename: "a.png", ContentID: "=?utf-8?q?a=0D=0AX:_y?=", Content: []byte("x")}}
		},
		"no Message-ID": func(m *mailroom.Message) { m.MessageIDHeader = "" },
	} {
		t.Run(name, func(t *testing.T) {
			m := testMessage()
			mutate(m)
			raw, err := testComposer().Compose(m, key)
			if err == nil {
				t.Fatalf("composed:\n%s", raw)
			}
		})
	}
}

func TestMarketingMailCarriesOneClickUnsubscribe(t *testing.T) {
	m := testMessage()
	m.Category = mailroom.CategoryMarketing
	raw := mustComposeCopy(t, m, "bob@example.net")
	r, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	want := copyFields(t, m, "bob@example.net")[0].Value
	if v := r.Header.Get("List-Unsubscribe"); v != want || !strings.HasPrefix(v, "<https://mail.example.com/v1/unsubscribe/") ||
		!strings.Contains(v, ">, <mailto:unsubscribe-") || !strings.HasSuffix(v, "@bounces.example.com>") {
		t.Errorf("List-Unsubscribe = %q, want %q", v, want)
	}
	if v := r.Header.Get("List-Unsubscribe-Post"); v != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe-Post = %q", v)
	}
	// RFC 8058 §4: receivers honour them only when the signature covers them.
	v := verifyOne(t, raw)
	for _, k := range []string{"List-Unsubscribe", "List-Unsubscribe-Post"} {
		if !containsFold(v.HeaderKeys, k) {
			t.Errorf("%s is not signed (h=%v)", k, v.HeaderKeys)
		}
	}
}

func TestTransactionalMailHasNoUnsubscribe(t *testing.T) {
	raw := mustCompose(t, testMessage())
	if bytes.Contains(raw, []byte("List-Unsubscribe")) {
		t.Error("transactional mail carries List-Unsubscribe")
	}
}

func TestClientUnsubscribeReplacesOurs(t *testing.T) {
	m := testMessage()
	m.Category = mailroom.CategoryMarketing
	m.Headers = []mailroom.Header{{Name: "List-Unsubscribe", Value: "<mailto:leave@example.com>"}}
	raw := mustCompose(t, m)
	var n int
	for _, name := range headerNames(t, raw) {
		switch name {
		case "List-Unsubscribe":
			n++
		case "List-Unsubscribe-Post":
			t.Error("one-click Post claimed for a URL the service does not serve")
		}
	}
	if n != 1 {
		t.Errorf("%d List-Unsubscribe fields, want 1", n)
	}
	if !bytes.Contains(raw, []byte("<mailto:leave@example.com>")) {
		t.Error("the client's List-Unsubscribe is missing")
	}
	verifyOne(t, raw)
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

func TestUTF8LocalPartAndAwkwardNamesSurvive(t *testing.T) {
	m := testMessage()
	m.To = []mailroom.Address{{Name: "Jürgen", Address: "jürgen@example.de"}}
	m.Cc = []mailroom.Address{{Name: "Müller, Hans (Ops)", Address: "hans@example.de"}, {Name: `O'Brien "Bo"`, Address: "bo@example.ie"}}
	raw := mustCompose(t, m)
	r, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	to, err := r.Header.AddressList("To")
	if err != nil || len(to) != 1 || to[0].Address != "jürgen@example.de" || to[0].Name != "Jürgen" {
		t.Errorf("To = %v, %v", to, err)
	}
	cc, err := r.Header.AddressList("Cc")
	if err != nil || len(cc) != 2 || cc[0].Name != m.Cc[0].Name || cc[1].Name != m.Cc[1].Name {
		t.Errorf("Cc = %v, %v", cc, err)
	}
	verifyOne(t, raw)
}

// A quoted local part is written as stored, not quoted a second time: the
// header must name the same mailbox the envelope does.
func TestQuotedLocalPartIsNotQuotedAgain(t *testing.T) {
	m := testMessage()
	m.To = []mailroom.Address{{Name: "John", Address: `"john doe"@example.com`}}
	raw := string(mustCompose(t, m))
	if !strings.Contains(raw, `To: "John" <"john doe"@example.com>`) || strings.Contains(raw, `\"john`) {
		t.Fatalf("To header: %s", raw[strings.Index(raw, "To:"):][:60])
	}
}
