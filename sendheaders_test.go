package mailroom_test

import (
	"fmt"
	"strings"
	"testing"
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
		{"Sender", "a@example.com", "set by Mailroom"},
		{"content-type", "text/plain", "Content-*"},
		{"Content-Transfer-Encoding", "8bit", "Content-*"},
		{"CONTENT-DISPOSITION", "inline", "Content-*"},
	}
	for _, name := range []string{"From", "To", "Cc", "Bcc", "Subject", "Date", "Message-ID", "MIME-Version", "DKIM-Signature", "Return-Path", "Received"} {
		cases = append(cases, c{name, "x", "set by Mailroom"}, c{strings.ToLower(name), "x", "set by Mailroom"}, c{strings.ToUpper(name), "x", "set by Mailroom"})
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
