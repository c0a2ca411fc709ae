package mailroom_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
)

func TestSendHeadersAccepted(t *testing.T) {
	r := sendRequest(t, map[string]any{"headers": map[string]string{
		"X-Entity-Ref-ID":              "123",
		"in-reply-to":                  "<a@b.example>",
		"References":                   "<a@b.example> <c@d.example>",
		"X-Unicode":                    "Grüße\tand tabs",
		"X-Empty":                      "",
		"X-Long":                       strings.Repeat("v", 990), // "X-Long: " + 990 = 998 octets
		"X-" + strings.Repeat("n", 74): "76-character name",
		"Precedence":                   "bulk",
	}})
	m, details := validateSend(t, r, "")
	if details != nil {
		t.Fatalf("refused:%s", formatDetails(details))
	}
	var names []string
	for _, h := range m.Headers {
		names = append(names, h.Name)
	}
	want := "in-reply-to Precedence References X-Empty X-Entity-Ref-ID X-Long X-" + strings.Repeat("n", 74) + " X-Unicode"
	if strings.Join(names, " ") != want {
		t.Errorf("header order %q, want %q", strings.Join(names, " "), want)
	}
}

func TestSendHeadersRefused(t *testing.T) {
	type c struct{ name, value, want string }
	cases := []c{
		{"X-Inject\r\nBcc: victim@example.com", "v", "line breaks"},
		{"X-Inject\nBcc", "v", "line breaks"},
		{"X-Value", "v\r\nBcc: victim@example.com", "the value must not contain line breaks"},
		{"X-Value-LF", "v\nBcc: x", "the value must not contain line breaks"},
		{"X-Value-CR", "v\rx", "the value must not contain line breaks"},
		{"X-Nul", "a\x00b", "control characters"},
		{"X-Long", strings.Repeat("v", 991), "at most 990"},
		{"X-" + strings.Repeat("n", 75), "v", "at most 76"},
		{"X Space", "v", "printable ASCII"},
		{"X-Ümlaut", "v", "printable ASCII"},
		{"X-Colon:", "v", `must not contain ":"`},
		{"", "v", "must not be empty"},
		{"Reply-To", "a@example.com", "use the replyTo field"},
		{"list-unsubscribe", "<https://x>", "marketing"},
		{"List-Unsubscribe-Post", "List-Unsubscribe=One-Click", "marketing"},
		{"Sender", "a@example.com", "cannot be given here"},
		{"content-type", "text/plain", "Content-*"},
		{"Content-Transfer-Encoding", "8bit", "Content-*"},
		{"CONTENT-DISPOSITION", "inline", "Content-*"},
	}
	for _, name := range []string{"From", "To", "Cc", "Bcc", "Subject", "Date", "Message-ID", "MIME-Version", "DKIM-Signature", "Return-Path", "Received"} {
		cases = append(cases, c{name, "x", "cannot be given here"}, c{strings.ToLower(name), "x", "cannot be given here"}, c{strings.ToUpper(name), "x", "cannot be given here"})
	}
	// Headers receivers trust as their own servers' (docs/api.md "Sending").
	for _, tc := range []struct{ name, want string }{
		{"Authentication-Results", "RFC 8601"},
		{"Received-SPF", "RFC 7208"},
		{"Delivered-To", "receiving server"},
		{"ARC-Seal", "ARC-*"},
		{"ARC-Message-Signature", "ARC-*"},
		{"ARC-Authentication-Results", "ARC-*"},
		{"Resent-From", "Resent-*"},
		{"Resent-Message-ID", "Resent-*"},
	} {
		cases = append(cases, c{tc.name, "x", tc.want}, c{strings.ToLower(tc.name), "x", tc.want}, c{strings.ToUpper(tc.name), "x", tc.want})
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%q", tc.name), func(t *testing.T) {
			r := sendRequest(t, map[string]any{"headers": map[string]string{tc.name: tc.value, "X-Fine": "ok"}})
			checkRefused(t, r, "", refusal{"headers", -1, fmt.Sprintf("%q: ", tc.name)})
			checkRefused(t, r, "", refusal{"headers", -1, tc.want})
		})
	}
}

func TestSendHeadersDuplicateByCase(t *testing.T) {
	r := sendRequest(t, map[string]any{"headers": map[string]string{"X-Tag": "a", "x-tag": "b"}})
	checkRefused(t, r, "", refusal{"headers", -1, "given twice"})
}

// The limits of docs/api.md "Limits" hold for a request built in Go too, not only
// for one decoded from JSON, whose decoder refuses them earlier.
func TestSendHeadersLimits(t *testing.T) {
	many := mailroom.HeaderFields{}
	for i := range mailroom.MaxHeaders + 1 {
		many[fmt.Sprintf("X-H%d", i)] = "v"
	}
	r := sendRequest(t, nil)
	r.Headers = many
	checkRefused(t, r, "", refusal{"headers", -1, "has 101 headers; at most 100"})

	big := mailroom.HeaderFields{}
	for i := range 20 {
		big[fmt.Sprintf("X-H%d", i)] = strings.Repeat("v", 900)
	}
	r.Headers = big
	checkRefused(t, r, "", refusal{"headers", -1, "at most 16384 (16 KiB)"})

	exactly := mailroom.HeaderFields{}
	for i := range mailroom.MaxHeaders {
		exactly[fmt.Sprintf("X-H%03d", i)] = strings.Repeat("v", 160-6) // 100 × 160 = 16000 octets
	}
	r.Headers = exactly
	if _, details := validateSend(t, r, ""); details != nil {
		t.Fatalf("100 headers of 16000 octets refused:%s", formatDetails(details))
	}
}

// The JSON decoder stops at the first header past a limit: the rest of a
// huge headers object is never turned into a map.
func TestSendHeadersDecodeStopsAtLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"headers": {`)
	for i := range 100_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"X-H%d": "v"`, i)
	}
	b.WriteString(`}}`)
	var r mailroom.SendRequest
	err := strictUnmarshal([]byte(b.String()), &r)
	var e *mailroom.Error
	if !errors.As(err, &e) || e.Code != mailroom.ECodeValidation || len(e.Details) != 1 || e.Details[0].Field != "headers" ||
		!strings.Contains(e.Details[0].Message, "more than 100 headers") {
		t.Fatalf("100,000 headers: %v, want one validation detail on headers naming the limit of 100", err)
	}
	if len(r.Headers) != 0 {
		t.Fatalf("the decoder kept %d headers", len(r.Headers))
	}

	b.Reset()
	b.WriteString(`{"headers": {`)
	for i := range 20 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"X-H%d": "%s"`, i, strings.Repeat("v", 900))
	}
	b.WriteString(`}}`)
	if err := strictUnmarshal([]byte(b.String()), &r); !errors.As(err, &e) || !strings.Contains(e.Message, "16384") {
		t.Fatalf("18 KB of headers: %v, want a validation error naming the 16 KiB limit", err)
	}
}
