package mailroom_test

import (
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
)

func TestNormalizeDomainNameAccepts(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"example.com", "example.com"},
		{"EXAMPLE.com.", "example.com"},
		{"  Mail.Example.COM  ", "mail.example.com"},
		{"bücher.example", "xn--bcher-kva.example"},
		{"BÜCHER.example", "xn--bcher-kva.example"},
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"例え.テスト", "xn--r8jz45g.xn--zckzah"},
		{"example.co.uk", "example.co.uk"},
		{"mailroom.test", "mailroom.test"},
		{"a-b.example.com", "a-b.example.com"},
		{"123.example.com", "123.example.com"},
		{strings.Repeat("a", 63) + ".com", strings.Repeat("a", 63) + ".com"},
		// 4 labels of 61 + ".com" = 4*62 + 3 = 251 octets.
		{strings.Repeat(strings.Repeat("b", 61)+".", 4) + "com", strings.Repeat(strings.Repeat("b", 61)+".", 4) + "com"},
	} {
		got, err := mailroom.NormalizeDomainName(tc.in)
		if err != nil {
			t.Errorf("NormalizeDomainName(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("NormalizeDomainName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNormalizeDomainNameRefuses(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	for _, tc := range []struct {
		name, in string
		// wantMsg is a fragment of the message the customer reads.
		wantMsg string
	}{
		{"empty", "", "is required"},
		{"blank", "   ", "is required"},
		{"only a dot", ".", "is required"},
		{"single label", "localhost", "at least two labels"},
		{"bare TLD", "com", "at least two labels"},
		{"public suffix", "co.uk", `add a domain you own, such as "yourcompany.co.uk"`},
		{"public suffix with dot", "CO.UK.", "public suffix"},
		{"wildcard public suffix", "anything.ck", "public suffix"},
		{"leading hyphen", "-bad.com", "starts or ends with a hyphen"},
		{"trailing hyphen", "bad-.com", "starts or ends with a hyphen"},
		{"64-octet label", strings.Repeat("a", 64) + ".com", "at most 63"},
		{"long IDN label", strings.Repeat("ü", 60) + ".com", "at most 63"},
		{"254 octets", strings.Repeat(label63+".", 3) + strings.Repeat("c", 58) + ".com", "at most 253"},
		{"empty label", "a..b", "empty label"},
		{"leading dot", ".example.com", "empty label"},
		{"two trailing dots", "example.com..", "empty label"},
		{"inner space", "exa mple.com", "spaces"},
		{"underscore", "my_domain.com", "letters, digits, hyphens"},
		{"address", "user@example.com", "letters, digits, hyphens"},
		{"URL", "https://example.com", "letters, digits, hyphens"},
		{"IPv4", "192.0.2.1", "IP address"},
		{"disallowed symbol", "☃☃☃\u0000.com", "letters, digits, hyphens"},
		{"invalid IDN", "xn--a.com", "not a valid internationalised domain name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mailroom.NormalizeDomainName(tc.in)
			if err == nil {
				t.Fatalf("NormalizeDomainName(%q) = %q, want an error", tc.in, got)
			}
			if code := mailroom.ErrorCode(err); code != mailroom.ECodeValidation {
				t.Fatalf("code = %q, want %q (%v)", code, mailroom.ECodeValidation, err)
			}
			e := err.(*mailroom.Error)
			if len(e.Details) != 1 || e.Details[0].Field != "name" {
				t.Fatalf("details = %+v, want one entry for field name", e.Details)
			}
			if !strings.Contains(e.Details[0].Message, tc.wantMsg) {
				t.Errorf("message %q does not say %q", e.Details[0].Message, tc.wantMsg)
			}
		})
	}
}
