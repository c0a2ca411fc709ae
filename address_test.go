package mailroom_test

import (
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
)

func TestParseAddressAccepts(t *testing.T) {
	for _, tc := range []struct {
		in       string
		wantName string
		wantAddr string
	}{
		{"a@example.com", "", "a@example.com"},
		{"  a@example.com  ", "", "a@example.com"},
		{"<a@example.com>", "", "a@example.com"},
		{"John <john@example.com>", "John", "john@example.com"},
		{`"Doe, John" <john@example.com>`, "Doe, John", "john@example.com"},
		{`"John \"JD\" Doe" <john@example.com>`, `John "JD" Doe`, "john@example.com"},
		{"Jöhn Dœ <john@example.com>", "Jöhn Dœ", "john@example.com"},
		{`"Zoë" <zoe@example.com>`, "Zoë", "zoe@example.com"},
		{"=?utf-8?q?Zo=C3=AB?= <zoe@example.com>", "Zoë", "zoe@example.com"},
		{`"john doe"@example.com`, "", `"john doe"@example.com`},
		{`"a@b"@example.com`, "", `"a@b"@example.com`},
		{`"a\"b"@example.com`, "", `"a\"b"@example.com`},
		{`"john"@example.com`, "", "john@example.com"}, // quoted only when it must be
		{"first.last+tag@example.com", "", "first.last+tag@example.com"},
		{"Bob@EXAMPLE.Com", "", "Bob@example.com"}, // local part keeps its case
		{"user@bücher.example", "", "user@xn--bcher-kva.example"},
		{"Bücherei <user@BÜCHER.example>", "Bücherei", "user@xn--bcher-kva.example"},
		{"user@例え.テスト", "", "user@xn--r8jz45g.xn--zckzah"},
		{"user@com.co.uk", "", "user@com.co.uk"},
		{"user@co.uk", "", "user@co.uk"}, // no public-suffix rule for mailboxes
		{"user@123.example.com", "", "user@123.example.com"},
		{strings.Repeat("l", 64) + "@example.com", "", strings.Repeat("l", 64) + "@example.com"},
	} {
		a, err := mailroom.ParseAddress(tc.in)
		if err != nil {
			t.Errorf("ParseAddress(%q): %v", tc.in, err)
			continue
		}
		if a.Name != tc.wantName || a.Address != tc.wantAddr {
			t.Errorf("ParseAddress(%q) = {%q, %q}, want {%q, %q}", tc.in, a.Name, a.Address, tc.wantName, tc.wantAddr)
		}
	}
}

func TestParseAddressRefuses(t *testing.T) {
	long := strings.Repeat("a", 63)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "is empty"},
		{"blank", "   ", "is empty"},
		{"missing @", "john.example.com", `has no "@"`},
		{"empty local part", "@example.com", "not a valid address"},
		{"empty quoted local part", `""@example.com`, "not a valid address"},
		{"local part over 64", strings.Repeat("l", 65) + "@example.com", "at most 64"},
		{"quoted local part over 64", `"` + strings.Repeat("l", 62) + ` x"@example.com`, "at most 64"},
		{"address over 254", strings.Repeat("l", 60) + "@" + long + "." + long + "." + long + ".com", "at most 254"},
		{"CRLF in address", "a\r\n@example.com", "line break"},
		{"LF in display name", "John\nBcc: x@evil.example <john@example.com>", "line break"},
		{"CRLF in quoted display name", "\"John\r\nBcc: x@evil.example\" <john@example.com>", "line break"},
		{"invalid bytes in encoded display name", "Dear =?utf-8?q?a=FFb?= <b@example.com>", "does not decode"},
		{"CRLF in encoded display name", "=?utf-8?q?John=0D=0ABcc=3A_x=40evil.example?= <john@example.com>", "line break"},
		{"NUL", "a\x00b@example.com", "control character"},
		{"tab", "John\t<john@example.com>", "control character"},
		{"DEL", "a\x7f@example.com", "control character"},
		{"group syntax", "Team: a@example.com;", "group"},
		{"empty group", "undisclosed-recipients:;", "group"},
		{"source route", "<@relay.example:a@example.com>", "route"},
		{"two addresses", "a@example.com, b@example.com", "comma"},
		{"unquoted comma in name", "Doe, John <john@example.com>", "comma"},
		{"trailing comment", "john@example.com (John)", "comment"},
		{"leading comment", "(John) john@example.com", "comment"},
		{"comment in address", "john(x)@example.com", "comment"},
		{"non-ASCII local part", "jöhn@example.com", "SMTPUTF8"},
		{"single-label domain", "a@localhost", "at least two labels"},
		{"IP literal", "a@[192.0.2.1]", "address literal"},
		{"numeric TLD", "a@192.0.2.1", "not an IP address"},
		{"underscore in domain", "a@x_y.example", "only letters"},
		{"hyphen at label start", "a@-x.example", "hyphen"},
		{"label over 63", "a@" + long + "a.example", "at most 63"},
		{"bad punycode", "a@xn--zz-.example", "hyphen"},
		{"invalid IDN", "a@xn--a.example", "internationalised"},
		{"trailing dot", "a@example.com.", "not a valid address"},
		{"dot at end of local part", "a.@example.com", "not a valid address"},
		{"two at signs", "a@b@example.com", "not a valid address"},
		{"unbalanced quote in name", `Na"me <a@example.com>`, "not a valid address"},
		{"junk after address", "<a@example.com> x", "not a valid address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := mailroom.ParseAddress(tc.in)
			if err == nil {
				t.Fatalf("ParseAddress(%q) = %+v, want an error", tc.in, a)
			}
			if !mailroom.IsCode(err, mailroom.ECodeValidation) {
				t.Errorf("error %v is not a validation error", err)
			}
			if msg := err.(*mailroom.Error).Message; !strings.Contains(msg, tc.want) {
				t.Errorf("ParseAddress(%q) error %q, want it to mention %q", tc.in, msg, tc.want)
			}
		})
	}
}

func TestAddressKey(t *testing.T) {
	if mailroom.AddressKey("Bob@Example.com") != mailroom.AddressKey("bob@example.COM") {
		t.Error("AddressKey differs by case")
	}
}

func TestAddressRefusesAngleBracketsInQuotedLocalPart(t *testing.T) {
	for _, s := range []string{`"a<b>"@example.com`, `"x>"@example.com`} {
		if _, err := mailroom.ParseAddress(s); err == nil {
			t.Errorf("%s was accepted; SMTP servers refuse it and it would be suppressed", s)
		}
	}
}
