package mailroom_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
)

func TestIdempotencyKeyResolution(t *testing.T) {
	for _, tc := range []struct {
		name   string
		body   any // string or absent
		header string
		want   string
	}{
		{"none", absent, "", ""},
		{"body only", "order-1", "", "order-1"},
		{"header only", absent, "order-2", "order-2"},
		{"both equal", "order-3", "order-3", "order-3"},
		{"256 printable ASCII", strings.Repeat("~", 256), "", strings.Repeat("~", 256)},
		{"spaces and punctuation", " a b/c:d ", "", " a b/c:d "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, details := validateSend(t, sendRequest(t, map[string]any{"idempotencyKey": tc.body}), tc.header)
			if details != nil {
				t.Fatalf("refused:%s", formatDetails(details))
			}
			if m.IdempotencyKey != tc.want {
				t.Errorf("IdempotencyKey = %q, want %q", m.IdempotencyKey, tc.want)
			}
		})
	}
}

func TestIdempotencyKeyRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		body   any
		header string
		want   string
	}{
		{"both different", "order-1", "order-2", "differs from the Idempotency-Key header"},
		{"body empty", "", "", "must not be empty"},
		{"body too long", strings.Repeat("k", 257), "", "at most 256"},
		{"body non-ASCII", "ordre-é", "", "printable ASCII"},
		{"body control character", "a\tb", "", "printable ASCII"},
		{"body line break", "a\r\nb", "", "printable ASCII"},
		{"header too long", absent, strings.Repeat("k", 257), "the Idempotency-Key header has 257 characters"},
		{"header non-ASCII", absent, "ключ", "the Idempotency-Key header may contain only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRefused(t, sendRequest(t, map[string]any{"idempotencyKey": tc.body}), tc.header, refusal{"idempotencyKey", -1, tc.want})
		})
	}
}

func decodeSend(t *testing.T, body string) *mailroom.SendRequest {
	t.Helper()
	var r mailroom.SendRequest
	if err := strictUnmarshal([]byte(body), &r); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return &r
}

const idempotencyBase = `{"from": "Acme <hello@acme.example>", "to": ["a@example.com", "b@example.com"], "cc": "c@example.com",
	"subject": "Hi", "html": "<p>Hi</p>", "text": "Hi", "category": "transactional",
	"headers": {"X-A": "1", "X-B": "2"}, "tags": {"t1": "v1", "t2": "v2"},
	"attachments": [{"filename": "a.txt", "content": "QQ==", "contentType": "text/plain", "contentId": "a"}],
	"idempotencyKey": "key-1"}`

func TestIdempotencyDigestSameRequest(t *testing.T) {
	base := decodeSend(t, idempotencyBase).Digest()
	if len(base) != 32 {
		t.Fatalf("Digest has %d bytes, want 32 (SHA-256)", len(base))
	}
	for name, body := range map[string]string{
		"again": idempotencyBase,
		"map keys reordered": `{"idempotencyKey": "key-1", "tags": {"t2": "v2", "t1": "v1"}, "headers": {"X-B": "2", "X-A": "1"},
			"attachments": [{"contentId": "a", "contentType": "text/plain", "content": "QQ==", "filename": "a.txt"}],
			"category": "transactional", "text": "Hi", "html": "<p>Hi</p>", "subject": "Hi",
			"cc": ["c@example.com"], "to": ["a@example.com", "b@example.com"], "from": "Acme <hello@acme.example>"}`,
		"another idempotency key":  strings.Replace(idempotencyBase, `"key-1"`, `"key-2"`, 1),
		"idempotency key left out": strings.Replace(idempotencyBase, `, "idempotencyKey": "key-1"`, "", 1),
		"whitespace":               strings.Join(strings.Fields(idempotencyBase), " "),
		// A tracking that sets nothing follows the domain, as none does.
		"tracking null":        strings.Replace(idempotencyBase, `"subject"`, `"tracking": null, "subject"`, 1),
		"tracking empty":       strings.Replace(idempotencyBase, `"subject"`, `"tracking": {}, "subject"`, 1),
		"tracking fields null": strings.Replace(idempotencyBase, `"subject"`, `"tracking": {"opens": null, "clicks": null}, "subject"`, 1),
	} {
		if got := decodeSend(t, body).Digest(); !bytes.Equal(got, base) {
			t.Errorf("%s: digest %x, want %x", name, got, base)
		}
	}
}

func TestIdempotencyDigestChangedRequest(t *testing.T) {
	base := decodeSend(t, idempotencyBase).Digest()
	seen := map[string]string{}
	for _, tc := range []struct{ name, old, new string }{
		{"from", `Acme <hello@acme.example>`, `Acme <hi@acme.example>`},
		{"from name", `Acme <hello@acme.example>`, `ACME <hello@acme.example>`},
		{"to order", `["a@example.com", "b@example.com"]`, `["b@example.com", "a@example.com"]`},
		{"to dropped", `["a@example.com", "b@example.com"]`, `["a@example.com"]`},
		{"cc to bcc", `"cc":`, `"bcc":`},
		{"cc to replyTo", `"cc":`, `"replyTo":`},
		{"subject", `"subject": "Hi"`, `"subject": "Hi!"`},
		{"html", `<p>Hi</p>`, `<p>Hi!</p>`},
		{"text", `"text": "Hi"`, `"text": "Hi "`},
		{"category", `"transactional"`, `"marketing"`},
		{"category absent", `"category": "transactional",`, ``},
		{"header value", `"X-A": "1"`, `"X-A": "2"`},
		{"header name", `"X-A": "1"`, `"X-C": "1"`},
		{"tag", `"t1": "v1"`, `"t1": "v9"`},
		{"attachment content", `"QQ=="`, `"Qg=="`},
		{"attachment filename", `"a.txt"`, `"b.txt"`},
		{"attachment type", `"text/plain"`, `"text/csv"`},
		{"attachment cid", `"contentId": "a"`, `"contentId": "b"`},
		{"scheduledAt", `"subject"`, `"scheduledAt": "2026-11-23T00:00:00Z", "subject"`},
		{"template", `"subject"`, `"template": "x", "subject"`},
		{"variables", `"subject"`, `"variables": {"n": 1}, "subject"`},
		{"tracking opens off", `"subject"`, `"tracking": {"opens": false}, "subject"`},
		{"tracking opens on", `"subject"`, `"tracking": {"opens": true}, "subject"`},
		{"tracking clicks off", `"subject"`, `"tracking": {"clicks": false}, "subject"`},
	} {
		body := strings.Replace(idempotencyBase, tc.old, tc.new, 1)
		if body == idempotencyBase {
			t.Fatalf("%s: replacement did not apply", tc.name)
		}
		got := decodeSend(t, body).Digest()
		if bytes.Equal(got, base) {
			t.Errorf("%s: digest unchanged", tc.name)
		}
		if other, dup := seen[string(got)]; dup {
			t.Errorf("%s: same digest as %s", tc.name, other)
		}
		seen[string(got)] = tc.name
	}
}

func TestIdempotencyDigestStringOrArray(t *testing.T) {
	a := decodeSend(t, `{"to": "a@example.com", "subject": "x"}`).Digest()
	b := decodeSend(t, `{"to": ["a@example.com"], "subject": "x"}`).Digest()
	if !bytes.Equal(a, b) {
		t.Error(`"to": "a" and "to": ["a"] differ; they are one request`)
	}
	c := decodeSend(t, `{"variables": {"a": {"y": 1, "x": [1, 2]}}}`).Digest()
	d := decodeSend(t, `{"variables": {"a": {"x": [1, 2], "y": 1}}}`).Digest()
	if !bytes.Equal(c, d) {
		t.Error("nested variables with reordered keys differ")
	}
}

// The Idempotency-Key header present but empty is refused as an empty
// idempotencyKey field is, and the header given twice must say one key.
func TestIdempotencyKeyHeaderLines(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header []string
		want   string // refusal, or "" for accepted
		key    string
	}{
		{"empty", []string{""}, "the Idempotency-Key header must not be empty", ""},
		{"twice, different", []string{"a", "b"}, "given 2 times with different values", ""},
		{"twice, one empty", []string{"a", ""}, "given 2 times with different values", ""},
		{"twice, the same", []string{"a", "a"}, "", "a"},
		{"absent", nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := sendRequest(t, nil).Validate(sendNow, tc.header, nil)
			if tc.want == "" {
				if err != nil || m.IdempotencyKey != tc.key {
					t.Fatalf("got %v, key %q; want key %q", err, m.IdempotencyKey, tc.key)
				}
				return
			}
			e, ok := err.(*mailroom.Error)
			if !ok || !hasDetail(e.Details, refusal{"idempotencyKey", -1, tc.want}) {
				t.Fatalf("got %v, want a refusal on idempotencyKey saying %q", err, tc.want)
			}
		})
	}
}

// A request translated by another surface is the same request as its
// retry when the client sent the same text, whatever the translation
// made of it (a relative scheduledAt read at another moment).
func TestIdempotencyDigestFromSource(t *testing.T) {
	first := decodeSend(t, `{"to": "a@example.com", "subject": "x", "scheduledAt": "2030-01-01T00:00:00Z"}`)
	retry := decodeSend(t, `{"to": "a@example.com", "subject": "x", "scheduledAt": "2030-01-01T00:01:00Z"}`)
	first.SourceDigest, retry.SourceDigest = []byte("same as sent"), []byte("same as sent")
	if !bytes.Equal(first.Digest(), retry.Digest()) {
		t.Error("requests with one SourceDigest digest differently")
	}
	other := decodeSend(t, `{"to": "a@example.com", "subject": "x", "scheduledAt": "2030-01-01T00:00:00Z"}`)
	other.SourceDigest = []byte("another text")
	if bytes.Equal(first.Digest(), other.Digest()) {
		t.Error("requests with different SourceDigests digest alike")
	}
	plain := decodeSend(t, `{"to": "a@example.com", "subject": "x", "scheduledAt": "2030-01-01T00:00:00Z"}`)
	if bytes.Equal(first.Digest(), plain.Digest()) {
		t.Error("a SourceDigest is ignored")
	}
}
