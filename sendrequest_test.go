package mailroom_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mailroom/mailroom"
)

var sendNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// absent deletes a field of the base request in sendRequest.
type absentField struct{}

var absent = absentField{}

// sendRequest decodes the smallest valid request with fields replaced or
// added, the way the HTTP layer decodes a body.
func sendRequest(t *testing.T, fields map[string]any) *mailroom.SendRequest {
	t.Helper()
	body := map[string]any{
		"from":    "Acme <hello@acme.example>",
		"to":      "user@example.com",
		"subject": "Hello",
		"html":    "<p>Hi</p>",
	}
	for k, v := range fields {
		if v == absent {
			delete(body, k)
			continue
		}
		body[k] = v
	}
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	var r mailroom.SendRequest
	if err := strictUnmarshal(raw, &r); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return &r
}

// strictUnmarshal decodes by the rules of the HTTP layer's decodeJSON.
func strictUnmarshal(raw []byte, dst any) error {
	return jsonv2.Unmarshal(raw, dst, jsonv2.RejectUnknownMembers(true))
}

// validateSend validates the request and returns the message or the
// validation details.
func validateSend(t *testing.T, r *mailroom.SendRequest, header string) (*mailroom.Message, []mailroom.FieldError) {
	t.Helper()
	var values []string
	if header != "" {
		values = []string{header}
	}
	m, err := r.Validate(sendNow, values, nil)
	if err == nil {
		if m == nil {
			t.Fatal("Validate returned neither a message nor an error")
		}
		return m, nil
	}
	var e *mailroom.Error
	if !errors.As(err, &e) || e.Code != mailroom.ECodeValidation {
		t.Fatalf("Validate error %v, want a validation *Error", err)
	}
	if len(e.Details) == 0 {
		t.Fatalf("validation error without details: %v", err)
	}
	if m != nil {
		t.Error("Validate returned a message with an error")
	}
	return nil, e.Details
}

func formatDetails(details []mailroom.FieldError) string {
	var b strings.Builder
	for _, d := range details {
		if d.Index != nil {
			fmt.Fprintf(&b, "\n  %s[%d]: %s", d.Field, *d.Index, d.Message)
		} else {
			fmt.Fprintf(&b, "\n  %s: %s", d.Field, d.Message)
		}
	}
	return b.String()
}

// refusal is one expected detail: field, index (-1: none), and a piece of
// the message.
type refusal struct {
	field string
	index int
	want  string
}

func hasDetail(details []mailroom.FieldError, r refusal) bool {
	for _, d := range details {
		if d.Field != r.field || !strings.Contains(d.Message, r.want) {
			continue
		}
		if (r.index < 0) == (d.Index == nil) && (d.Index == nil || *d.Index == r.index) {
			return true
		}
	}
	return false
}

// checkRefused validates and wants exactly the given details.
// checkRefusedWith checks that r, with its template rendered as tpl, is
// refused for exactly the problems want.
func checkRefusedWith(t *testing.T, r *mailroom.SendRequest, tpl *mailroom.RenderedTemplate, want ...refusal) {
	t.Helper()
	_, err := r.Validate(sendNow, nil, tpl)
	e, ok := err.(*mailroom.Error)
	if !ok || e.Code != mailroom.ECodeValidation {
		t.Fatalf("got %v, want a validation error", err)
	}
	for _, w := range want {
		if !hasDetail(e.Details, w) {
			t.Errorf("no detail %s[%d] mentioning %q in:%s", w.field, w.index, w.want, formatDetails(e.Details))
		}
	}
	if len(e.Details) != len(want) {
		t.Errorf("got %d details, want %d:%s", len(e.Details), len(want), formatDetails(e.Details))
	}
}

func checkRefused(t *testing.T, r *mailroom.SendRequest, header string, want ...refusal) {
	t.Helper()
	m, details := validateSend(t, r, header)
	if m != nil {
		t.Fatalf("accepted, want %d problems", len(want))
	}
	for _, w := range want {
		if !hasDetail(details, w) {
			t.Errorf("no detail %s[%d] mentioning %q in:%s", w.field, w.index, w.want, formatDetails(details))
		}
	}
	if len(details) != len(want) {
		t.Errorf("got %d details, want %d:%s", len(details), len(want), formatDetails(details))
	}
}

func TestSendValidateBuildsMessage(t *testing.T) {
	r := sendRequest(t, map[string]any{
		"from":           `"Acme, Inc." <Hello@Acme.Example>`,
		"to":             []string{"Ann <ann@example.com>", "user@bücher.example"},
		"cc":             "carl@example.org",
		"bcc":            []string{"audit@example.net"},
		"replyTo":        "support@acme.example",
		"html":           `<h1>Welcome</h1><p>Confirm <a href="https://acme.example/c?t=1&amp;u=2">here</a>.</p>`,
		"headers":        map[string]string{"X-Campaign": "c1", "In-Reply-To": "<x@y>", "Auto-Submitted": "auto-generated"},
		"attachments":    []map[string]string{{"filename": "a.pdf", "content": "JVBERi0=", "contentId": "logo"}},
		"tags":           map[string]string{"user": "42"},
		"idempotencyKey": "order-42",
	})
	m, details := validateSend(t, r, "")
	if details != nil {
		t.Fatalf("refused:%s", formatDetails(details))
	}
	if m.ID != "" || m.AccountID != "" {
		t.Errorf("ID %q, AccountID %q: want both empty", m.ID, m.AccountID)
	}
	if m.From != (mailroom.Address{Name: "Acme, Inc.", Address: "Hello@acme.example"}) {
		t.Errorf("From = %+v", m.From)
	}
	if m.Domain != "acme.example" {
		t.Errorf("Domain = %q", m.Domain)
	}
	wantTo := []mailroom.Address{{Name: "Ann", Address: "ann@example.com"}, {Address: "user@xn--bcher-kva.example"}}
	if fmt.Sprint(m.To) != fmt.Sprint(wantTo) {
		t.Errorf("To = %+v, want %+v", m.To, wantTo)
	}
	if len(m.Cc) != 1 || m.Cc[0].Address != "carl@example.org" || len(m.Bcc) != 1 || len(m.ReplyTo) != 1 {
		t.Errorf("Cc %+v, Bcc %+v, ReplyTo %+v", m.Cc, m.Bcc, m.ReplyTo)
	}
	var got []string
	for _, rc := range m.Recipients {
		got = append(got, fmt.Sprintf("%s %s %s", rc.Kind, rc.Address, rc.Status))
	}
	want := []string{
		"to ann@example.com queued",
		"to user@xn--bcher-kva.example queued",
		"cc carl@example.org queued",
		"bcc audit@example.net queued",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Recipients:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if m.Subject != "Hello" || m.Category != mailroom.CategoryTransactional || m.Status != mailroom.MessageQueued {
		t.Errorf("Subject %q, Category %q, Status %q", m.Subject, m.Category, m.Status)
	}
	if !strings.Contains(m.Text, "Welcome") || !strings.Contains(m.Text, "here <https://acme.example/c?t=1&u=2>") || strings.Contains(m.Text, "<p>") {
		t.Errorf("Text generated from html = %q", m.Text)
	}
	if fmt.Sprint(m.Headers) != "[{Auto-Submitted auto-generated} {In-Reply-To <x@y>} {X-Campaign c1}]" {
		t.Errorf("Headers not sorted by name: %v", m.Headers)
	}
	if len(m.Attachments) != 1 || string(m.Attachments[0].Content) != "%PDF-" || m.Attachments[0].ContentType != "application/pdf" || m.Attachments[0].ContentID != "logo" {
		t.Errorf("Attachments = %+v", m.Attachments)
	}
	if m.Tags["user"] != "42" || len(m.Tags) != 1 {
		t.Errorf("Tags = %v", m.Tags)
	}
	if m.IdempotencyKey != "order-42" {
		t.Errorf("IdempotencyKey = %q", m.IdempotencyKey)
	}
	if !bytes.Equal(m.RequestDigest, r.Digest()) || len(m.RequestDigest) != 32 {
		t.Errorf("RequestDigest = %x, want Digest() %x", m.RequestDigest, r.Digest())
	}
	if !m.CreatedAt.Equal(sendNow) || m.ScheduledAt != nil {
		t.Errorf("CreatedAt %v, ScheduledAt %v", m.CreatedAt, m.ScheduledAt)
	}
}

func TestSendValidateAccepts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fields map[string]any
		check  func(*mailroom.Message) string
	}{
		{"to as a string", map[string]any{"to": "a@example.com"}, func(m *mailroom.Message) string {
			return expect(len(m.To) == 1 && m.To[0].Address == "a@example.com", "To %+v", m.To)
		}},
		{"to as an array", map[string]any{"to": []string{"a@example.com", "B <b@example.com>"}}, func(m *mailroom.Message) string {
			return expect(len(m.To) == 2 && m.To[1].Name == "B", "To %+v", m.To)
		}},
		{"50 recipients", map[string]any{"to": addresses("to", 20), "cc": addresses("cc", 20), "bcc": addresses("bcc", 10)}, func(m *mailroom.Message) string {
			return expect(len(m.Recipients) == 50, "%d recipients", len(m.Recipients))
		}},
		{"replyTo not counted as recipient", map[string]any{"to": "user@example.com", "replyTo": "user@example.com"}, func(m *mailroom.Message) string {
			return expect(len(m.Recipients) == 1 && len(m.ReplyTo) == 1, "Recipients %d, ReplyTo %d", len(m.Recipients), len(m.ReplyTo))
		}},
		{"IDN recipient", map[string]any{"to": "user@bücher.example"}, func(m *mailroom.Message) string {
			return expect(m.Recipients[0].Address == "user@xn--bcher-kva.example", "Recipient %q", m.Recipients[0].Address)
		}},
		{"IDN from", map[string]any{"from": "Bücher <info@BÜCHER.example>"}, func(m *mailroom.Message) string {
			return expect(m.Domain == "xn--bcher-kva.example" && m.From.Address == "info@xn--bcher-kva.example", "Domain %q From %q", m.Domain, m.From.Address)
		}},
		{"quoted local part", map[string]any{"to": `"john doe"@example.com`}, func(m *mailroom.Message) string {
			return expect(m.Recipients[0].Address == `"john doe"@example.com`, "Recipient %q", m.Recipients[0].Address)
		}},
		{"category marketing", map[string]any{"category": "marketing"}, func(m *mailroom.Message) string {
			return expect(m.Category == mailroom.CategoryMarketing, "Category %q", m.Category)
		}},
		{"category transactional", map[string]any{"category": "transactional"}, func(m *mailroom.Message) string {
			return expect(m.Category == mailroom.CategoryTransactional, "Category %q", m.Category)
		}},
		{"text only", map[string]any{"html": absent, "text": "Hi"}, func(m *mailroom.Message) string {
			return expect(m.Text == "Hi" && m.HTML == "", "HTML %q Text %q", m.HTML, m.Text)
		}},
		{"html and text kept as given", map[string]any{"html": "<b>Hi</b>", "text": "Hello there"}, func(m *mailroom.Message) string {
			return expect(m.Text == "Hello there" && m.HTML == "<b>Hi</b>", "HTML %q Text %q", m.HTML, m.Text)
		}},
		{"html only generates text", map[string]any{"html": "<p>Line &amp; one</p><ul><li>a</li><li>b</li></ul>"}, func(m *mailroom.Message) string {
			return expect(m.Text == "Line & one\n\n\n - a\n - b", "Text %q", m.Text)
		}},
		{"subject 998 characters", map[string]any{"subject": strings.Repeat("é", 998)}, func(m *mailroom.Message) string {
			return expect(len([]rune(m.Subject)) == 998, "Subject of %d", len([]rune(m.Subject)))
		}},
		{"subject with tab and Unicode", map[string]any{"subject": "Bestätigung\t№ 42 ✓"}, func(m *mailroom.Message) string {
			return expect(m.Subject == "Bestätigung\t№ 42 ✓", "Subject %q", m.Subject)
		}},
		{"null cc", map[string]any{"cc": nil}, func(m *mailroom.Message) string {
			return expect(len(m.Cc) == 0, "Cc %+v", m.Cc)
		}},
		{"empty headers and tags", map[string]any{"headers": map[string]string{}, "tags": map[string]string{}}, func(m *mailroom.Message) string {
			return expect(len(m.Headers) == 0 && len(m.Tags) == 0, "Headers %v Tags %v", m.Headers, m.Tags)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, details := validateSend(t, sendRequest(t, tc.fields), "")
			if details != nil {
				t.Fatalf("refused:%s", formatDetails(details))
			}
			if msg := tc.check(m); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func expect(ok bool, format string, args ...any) string {
	if ok {
		return ""
	}
	return fmt.Sprintf(format, args...)
}

func addresses(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s%d@example.com", prefix, i))
	}
	return out
}

func TestSendValidateRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fields map[string]any
		want   refusal
	}{
		{"from missing", map[string]any{"from": absent}, refusal{"from", -1, "is required"}},
		{"from empty", map[string]any{"from": ""}, refusal{"from", -1, "is required"}},
		{"from invalid", map[string]any{"from": "hello"}, refusal{"from", -1, `has no "@"`}},
		{"from two addresses", map[string]any{"from": "a@acme.example, b@acme.example"}, refusal{"from", -1, "comma"}},
		{"from display name CRLF", map[string]any{"from": "Acme\r\nBcc: victim@example.com <hello@acme.example>"}, refusal{"from", -1, "line break"}},
		{"to missing", map[string]any{"to": absent}, refusal{"to", -1, "is required"}},
		{"to empty array", map[string]any{"to": []string{}}, refusal{"to", -1, "is required"}},
		{"to null", map[string]any{"to": nil}, refusal{"to", -1, "is required"}},
		{"to invalid at index", map[string]any{"to": []string{"a@example.com", "b@example.com", "not-an-address"}}, refusal{"to", 2, `has no "@"`}},
		{"to empty element", map[string]any{"to": []string{"a@example.com", ""}}, refusal{"to", 1, "is empty"}},
		{"to display name CRLF", map[string]any{"to": "Ann\r\nBcc: x@evil.example <ann@example.com>"}, refusal{"to", 0, "line break"}},
		{"to two in one element", map[string]any{"to": []string{"a@example.com, b@example.com"}}, refusal{"to", 0, "comma"}},
		{"to group", map[string]any{"to": "Team: a@example.com, b@example.com;"}, refusal{"to", 0, "group"}},
		{"to comment", map[string]any{"to": "a@example.com (Ann)"}, refusal{"to", 0, "comment"}},
		{"cc invalid", map[string]any{"cc": []string{"ok@example.com", "x@"}}, refusal{"cc", 1, "not a valid address"}},
		{"bcc invalid", map[string]any{"bcc": "bad@@example.com"}, refusal{"bcc", 0, "not a valid address"}},
		{"replyTo invalid", map[string]any{"replyTo": "nobody"}, refusal{"replyTo", 0, `has no "@"`}},
		{"replyTo over 50", map[string]any{"replyTo": addresses("r", 51)}, refusal{"replyTo", -1, "at most 50"}},
		{"51 recipients", map[string]any{"to": addresses("to", 20), "cc": addresses("cc", 20), "bcc": addresses("bcc", 11)}, refusal{"bcc", -1, "at most 50"}},
		{"51 in to", map[string]any{"to": addresses("to", 51)}, refusal{"to", -1, "have 51 addresses"}},
		{"duplicate in to", map[string]any{"to": []string{"a@example.com", "b@example.com", "a@example.com"}}, refusal{"to", 2, "already a recipient (to[0])"}},
		{"duplicate across to and bcc, by case", map[string]any{"to": "Ann@Example.com", "bcc": []string{"x@example.com", "ANN@example.COM"}}, refusal{"bcc", 1, "already a recipient (to[0])"}},
		{"duplicate by IDN spelling", map[string]any{"to": "u@bücher.example", "cc": "Ü <u@xn--bcher-kva.example>"}, refusal{"cc", 0, "already a recipient"}},
		{"duplicate by quoting", map[string]any{"to": "john@example.com", "cc": `"john"@example.com`}, refusal{"cc", 0, "already a recipient"}},
		{"subject missing", map[string]any{"subject": absent}, refusal{"subject", -1, "is required"}},
		{"subject empty", map[string]any{"subject": ""}, refusal{"subject", -1, "is required"}},
		{"subject 999 characters", map[string]any{"subject": strings.Repeat("x", 999)}, refusal{"subject", -1, "at most 998"}},
		{"subject CRLF injection", map[string]any{"subject": "Hi\r\nBcc: victim@example.com"}, refusal{"subject", -1, "line breaks"}},
		{"subject bare LF", map[string]any{"subject": "Hi\nthere"}, refusal{"subject", -1, "line breaks"}},
		{"subject bare CR", map[string]any{"subject": "Hi\rthere"}, refusal{"subject", -1, "line breaks"}},
		{"subject NUL", map[string]any{"subject": "Hi\x00"}, refusal{"subject", -1, "control characters"}},
		{"category unknown", map[string]any{"category": "newsletter"}, refusal{"category", -1, `not "newsletter"`}},
		{"category empty", map[string]any{"category": ""}, refusal{"category", -1, "must be"}},
		{"category wrong case", map[string]any{"category": "Marketing"}, refusal{"category", -1, "must be"}},
		{"no html and no text", map[string]any{"html": absent}, refusal{"html", -1, "html or text is required"}},
		{"empty html and text", map[string]any{"html": "", "text": ""}, refusal{"html", -1, "html or text is required"}},
		{"NUL in text", map[string]any{"text": "a\x00b"}, refusal{"text", -1, "NUL"}},
		{"variables without template", map[string]any{"variables": map[string]any{"name": "Ann"}}, refusal{"variables", -1, "are for a template"}},
		{"scheduledAt 10 minutes ago", map[string]any{"scheduledAt": "2026-11-22T09:50:00Z"}, refusal{"scheduledAt", -1, "in the past"}},
		{"scheduledAt 31 days ahead", map[string]any{"scheduledAt": "2026-12-23T10:00:00Z"}, refusal{"scheduledAt", -1, "more than 30 days ahead"}},
		{"scheduledAt without zone", map[string]any{"scheduledAt": "2026-11-23T10:00:00"}, refusal{"scheduledAt", -1, "RFC 3339"}},
		{"idempotencyKey empty", map[string]any{"idempotencyKey": ""}, refusal{"idempotencyKey", -1, "must not be empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRefused(t, sendRequest(t, tc.fields), "", tc.want)
		})
	}
}

// A template gives the bodies: a request that names one and gives html or
// text as well is refused, however the template rendered.
func TestSendValidateTemplateWithContent(t *testing.T) {
	r := sendRequest(t, map[string]any{"template": "welcome", "text": "Hi"})
	rendered := &mailroom.RenderedTemplate{Ref: &mailroom.TemplateRef{ID: "tpl_1", Name: "welcome", Version: 1}, Subject: "S", Text: "T"}
	_, err := r.Validate(sendNow, nil, rendered)
	e, ok := err.(*mailroom.Error)
	if !ok || len(e.Details) != 1 || e.Details[0].Field != "template" || !strings.Contains(e.Details[0].Message, "cannot be combined with html or text") {
		t.Fatalf("got %v, want one problem on template", err)
	}
}

// The template's subject, sender and bodies fill what the request leaves
// out; the request's own subject and from win.
func TestSendValidateTakesTheTemplatesContent(t *testing.T) {
	rendered := &mailroom.RenderedTemplate{Ref: &mailroom.TemplateRef{ID: "tpl_1", Name: "welcome", Version: 3},
		From: "Acme <hello@acme.example>", Subject: "Hi Ann", HTML: "<p>Hi <b>Ann</b></p>"}
	r := sendRequest(t, map[string]any{"template": "welcome", "html": absent, "from": absent, "subject": absent})
	m, err := r.Validate(sendNow, nil, rendered)
	if err != nil {
		t.Fatal(err)
	}
	if m.From.Address != "hello@acme.example" || m.Subject != "Hi Ann" || m.HTML != rendered.HTML || m.Text != "Hi Ann" || *m.Template != *rendered.Ref {
		t.Fatalf("message %+v does not hold the template's content", m)
	}
	r = sendRequest(t, map[string]any{"template": "welcome", "html": absent, "subject": "Own subject", "from": "billing@acme.example"})
	if m, err = r.Validate(sendNow, nil, rendered); err != nil || m.Subject != "Own subject" || m.From.Address != "billing@acme.example" {
		t.Fatalf("the request's subject and from should win: %v %+v", err, m)
	}
	rendered.Subject = "line\r\nBcc: x@example.com"
	r = sendRequest(t, map[string]any{"template": "welcome", "html": absent, "subject": absent})
	checkRefusedWith(t, r, rendered, refusal{"subject", -1, "as rendered from the template"})
}

func TestSendValidateReportsEveryProblem(t *testing.T) {
	r := sendRequest(t, map[string]any{
		"from":           "no-at-sign",
		"to":             []string{"ok@example.com", "bad", "ok@example.com"},
		"cc":             "x\r\n@example.com",
		"subject":        "a\nb",
		"category":       "spam",
		"html":           absent,
		"headers":        map[string]string{"Bcc": "x@example.com", "X-Ok": "v\r\nX-Evil: 1"},
		"attachments":    []map[string]string{{"filename": "", "content": "!!"}},
		"tags":           map[string]string{"bad key": "v"},
		"scheduledAt":    "tomorrow",
		"idempotencyKey": "ключ",
	})
	checkRefused(t, r, "",
		refusal{"from", -1, `has no "@"`},
		refusal{"to", 1, `has no "@"`},
		refusal{"to", 2, "already a recipient (to[0])"},
		refusal{"cc", 0, "line break"},
		refusal{"subject", -1, "line breaks"},
		refusal{"category", -1, "must be"},
		refusal{"html", -1, "html or text is required"},
		refusal{"headers", -1, `"Bcc": cannot be given here: use the bcc field`},
		refusal{"headers", -1, `"X-Ok": the value must not contain line breaks`},
		refusal{"attachments", 0, "filename is required"},
		refusal{"attachments", 0, "content is not valid base64"},
		refusal{"tags", -1, `"bad key": the key may contain only`},
		refusal{"scheduledAt", -1, "RFC 3339"},
		refusal{"idempotencyKey", -1, "printable ASCII"},
	)
	_, err := r.Validate(sendNow, nil, nil)
	if msg := err.(*mailroom.Error).Message; !strings.HasPrefix(msg, "from: ") || !strings.Contains(msg, "(and 13 more)") {
		t.Errorf("Message = %q", msg)
	}
}

func TestSendAddressListJSON(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`"a@example.com"`, []string{"a@example.com"}},
		{`["a@example.com"]`, []string{"a@example.com"}},
		{` [ "a@example.com" , "B <b@example.com>" ] `, []string{"a@example.com", "B <b@example.com>"}},
		{`[]`, []string{}},
		{`null`, nil},
		{`""`, []string{""}},
	} {
		var l mailroom.AddressList
		if err := strictUnmarshal([]byte(tc.in), &l); err != nil {
			t.Errorf("Unmarshal(%s): %v", tc.in, err)
			continue
		}
		if fmt.Sprintf("%q", []string(l)) != fmt.Sprintf("%q", tc.want) || (l == nil) != (tc.want == nil) {
			t.Errorf("Unmarshal(%s) = %#v, want %#v", tc.in, l, tc.want)
		}
	}
}

// A value of the wrong JSON type is a *json.SemanticError pointing at it,
// with the kind that was found: the HTTP layer names both.
func TestSendAddressListWrongType(t *testing.T) {
	for _, tc := range []struct {
		body    string
		pointer jsontext.Pointer
		kind    jsontext.Kind
	}{
		{`{"to": 42}`, "/to", '0'},
		{`{"to": true}`, "/to", 't'},
		{`{"to": {"address": "a@example.com"}}`, "/to", '{'},
		{`{"to": ["a@example.com", 7]}`, "/to/1", '0'},
		{`{"to": [["a@example.com"]]}`, "/to/0", '['},
		{`{"cc": [null, {}]}`, "/cc/0", 'n'},
		{`{"replyTo": false}`, "/replyTo", 'f'},
	} {
		var r mailroom.SendRequest
		err := strictUnmarshal([]byte(tc.body), &r)
		var typeErr *jsonv2.SemanticError
		if !errors.As(err, &typeErr) {
			t.Errorf("Unmarshal(%s) error %v (%T), want *json.SemanticError", tc.body, err, err)
			continue
		}
		if typeErr.JSONPointer != tc.pointer || typeErr.JSONKind != tc.kind {
			t.Errorf("Unmarshal(%s): error at %q of kind %v, want %q and %v", tc.body, typeErr.JSONPointer, typeErr.JSONKind, tc.pointer, tc.kind)
		}
	}
}

func TestSendRequestUnknownField(t *testing.T) {
	var r mailroom.SendRequest
	err := strictUnmarshal([]byte(`{"from": "a@acme.example", "attachments": [{"filename": "a", "content": "QQ==", "contnetType": "x"}]}`), &r)
	var unknown *jsonv2.SemanticError
	if !errors.As(err, &unknown) || !errors.Is(err, jsonv2.ErrUnknownName) || unknown.JSONPointer != "/attachments/0/contnetType" {
		t.Errorf("Decode with a misspelt attachment field: %v, want an unknown-name error at /attachments/0/contnetType", err)
	}
}

// html and text are 5 MiB each at most (docs/api.md "Limits").
func TestSendBodyPartLimit(t *testing.T) {
	limit := mailroom.MaxBodyPartBytes
	r := sendRequest(t, map[string]any{"html": "<p>" + strings.Repeat("a", limit-3), "text": strings.Repeat("a", limit)})
	if _, details := validateSend(t, r, ""); details != nil {
		t.Fatalf("5 MiB each refused:%s", formatDetails(details))
	}
	r = sendRequest(t, map[string]any{"html": strings.Repeat("a", limit+1), "text": strings.Repeat("a", limit+1)})
	checkRefused(t, r, "",
		refusal{"html", -1, "has 5242881 octets; at most 5242880 (5 MiB)"},
		refusal{"text", -1, "has 5242881 octets; at most 5242880 (5 MiB)"})
}

// Numbers in variables keep every digit: they are kept as the JSON text
// they were sent as, not as float64, and a change in a digit past float64
// precision is another request for the idempotency digest.
func TestSendVariablesKeepNumbers(t *testing.T) {
	const vars = `{"big": 12345678901234567890, "tenth": 0.1, "exp": 1e400, "nested": {"n": -0.000000000000000000001}}`
	var r mailroom.SendRequest
	if err := strictUnmarshal([]byte(`{"variables": `+vars+`}`), &r); err != nil {
		t.Fatal(err)
	}
	const want = `{"big":12345678901234567890,"tenth":0.1,"exp":1e400,"nested":{"n":-0.000000000000000000001}}`
	v2, err := jsonv2.Marshal(r.Variables)
	if err != nil || string(v2) != want {
		t.Errorf("json/v2 encodes %s (%v), want %s", v2, err, want)
	}
	v1, err := json.Marshal(r.Variables)
	if err != nil || string(v1) != want {
		t.Errorf("encoding/json encodes %s (%v), want %s", v1, err, want)
	}
	other := decodeSend(t, `{"variables": {"big": 12345678901234567891, "tenth": 0.1, "exp": 1e400, "nested": {"n": -0.000000000000000000001}}}`)
	if bytes.Equal(r.Digest(), other.Digest()) {
		t.Error("variables differing in the 20th digit have one digest")
	}
	for _, body := range []string{`{"variables": []}`, `{"variables": "x"}`, `{"variables": 1}`} {
		var r mailroom.SendRequest
		if err := strictUnmarshal([]byte(body), &r); err == nil {
			t.Errorf("%s accepted; variables must be an object", body)
		}
	}
}

// An address problem is the service's own text: it is shown whole, with
// its advice, and only the client's value in it is cut.
func TestAddressProblemKeepsItsAdvice(t *testing.T) {
	r := sendRequest(t, map[string]any{"to": []string{"bob@", strings.Repeat("x", 5000)}})
	_, err := r.Validate(sendNow, nil, nil)
	e, ok := err.(*mailroom.Error)
	if !ok || len(e.Details) != 2 {
		t.Fatalf("got %v, want two problems", err)
	}
	if msg := e.Details[0].Message; !strings.HasSuffix(msg, `("Doe, John" <john@example.com>)`) {
		t.Errorf("the advice is cut: %q", msg)
	}
	if msg := e.Details[1].Message; !strings.HasSuffix(msg, `an address looks like "name@example.com"`) || len(msg) > 200 {
		t.Errorf("a 5,000-character address: %d bytes, %q", len(msg), mailroom.Excerpt(msg, 300))
	}
}
