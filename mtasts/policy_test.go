package mtasts

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func TestParsePolicy(t *testing.T) {
	good := "version: STSv1\r\nmode: enforce\r\nmx: mail.example.com\r\nmx: *.example.net\r\nmx: backupmx.example.com\r\nmax_age: 604800\r\n"
	for _, tc := range []struct {
		name string
		text string
		want *Policy // nil when invalid
	}{
		{"the RFC's example, CRLF", good, &Policy{Mode: mailroom.MTASTSEnforce,
			MX: []string{"mail.example.com", "*.example.net", "backupmx.example.com"}, MaxAge: 604800 * time.Second}},
		{"LF", strings.ReplaceAll(good, "\r\n", "\n"), &Policy{Mode: mailroom.MTASTSEnforce,
			MX: []string{"mail.example.com", "*.example.net", "backupmx.example.com"}, MaxAge: 604800 * time.Second}},
		{"no last terminator", "version: STSv1\nmode: testing\nmx: mx.example.com\nmax_age: 86400",
			&Policy{Mode: mailroom.MTASTSTesting, MX: []string{"mx.example.com"}, MaxAge: 86400 * time.Second}},
		{"no blank after the colon, blanks at the end", "version:STSv1 \nmode:\ttesting\t\nmx:mx.example.com  \nmax_age:0\n",
			&Policy{Mode: mailroom.MTASTSTesting, MX: []string{"mx.example.com"}}},
		{"none without mx", "version: STSv1\nmode: none\nmax_age: 86400\n", &Policy{Mode: mailroom.MTASTSNone, MaxAge: 86400 * time.Second}},
		{"unknown fields ignored", "version: STSv1\nmode: enforce\nfuture_key: some value; with = and ü\nmx: mx.example.com\nMode: none\nmax_age: 31557600\n",
			&Policy{Mode: mailroom.MTASTSEnforce, MX: []string{"mx.example.com"}, MaxAge: 31557600 * time.Second}},
		{"leading zeros", "version: STSv1\nmode: enforce\nmx: mx.example.com\nmax_age: 0000000060\n",
			&Policy{Mode: mailroom.MTASTSEnforce, MX: []string{"mx.example.com"}, MaxAge: time.Minute}},

		{"empty", "", nil},
		{"a lone terminator", "\r\n", nil},
		{"version not first", "mode: enforce\nversion: STSv1\nmx: mx.example.com\nmax_age: 86400\n", nil},
		{"version twice", "version: STSv1\nversion: STSv1\nmode: enforce\nmx: mx.example.com\nmax_age: 86400\n", nil},
		{"another version", "version: STSv2\nmode: enforce\nmx: mx.example.com\nmax_age: 86400\n", nil},
		{"version in capitals", "VERSION: STSv1\nmode: enforce\nmx: mx.example.com\nmax_age: 86400\n", nil},
		{"no mode", "version: STSv1\nmx: mx.example.com\nmax_age: 86400\n", nil},
		{"mode twice", "version: STSv1\nmode: testing\nmode: enforce\nmx: mx.example.com\nmax_age: 86400\n", nil},
		{"an unknown mode", "version: STSv1\nmode: Enforce\nmx: mx.example.com\nmax_age: 86400\n", nil},
		{"no mx", "version: STSv1\nmode: enforce\nmax_age: 86400\n", nil},
		{"no max_age", "version: STSv1\nmode: enforce\nmx: mx.example.com\n", nil},
		{"max_age twice", "version: STSv1\nmode: enforce\nmx: mx.example.com\nmax_age: 1\nmax_age: 2\n", nil},
		{"max_age above a year, capped", "version: STSv1\nmode: enforce\nmx: mx.example.com\nmax_age: 31557601\n",
			&Policy{Mode: mailroom.MTASTSEnforce, MX: []string{"mx.example.com"}, MaxAge: MaxMaxAge}},
		{"max_age of 11 digits", "version: STSv1\nmode: enforce\nmx: mx.example.com\nmax_age: 00000000001\n", nil},
		{"max_age negative", "version: STSv1\nmode: enforce\nmx: mx.example.com\nmax_age: -1\n", nil},
		{"max_age huge, capped", "version: STSv1\nmode: enforce\nmx: mx.example.com\nmax_age: 9999999999\n",
			&Policy{Mode: mailroom.MTASTSEnforce, MX: []string{"mx.example.com"}, MaxAge: MaxMaxAge}},
		{"max_age with a unit", "version: STSv1\nmode: enforce\nmx: mx.example.com\nmax_age: 86400s\n", nil},
		{"a blank line", "version: STSv1\n\nmode: enforce\nmx: mx.example.com\nmax_age: 86400\n", nil},
		{"two terminators at the end", "version: STSv1\nmode: enforce\nmx: mx.example.com\nmax_age: 86400\r\n\r\n", nil},
		{"a line without colon", "version: STSv1\nmode: enforce\nmx mx.example.com\nmax_age: 86400\n", nil},
		{"a blank before the colon", "version: STSv1\nmode : enforce\nmx: mx.example.com\nmax_age: 86400\n", nil},
		{"a bare CR as terminator", "version: STSv1\rmode: enforce\rmx: mx.example.com\rmax_age: 86400\r", nil},
		{"mx with a trailing dot", "version: STSv1\nmode: enforce\nmx: mx.example.com.\nmax_age: 86400\n", nil},
		{"mx with a wildcard inside", "version: STSv1\nmode: enforce\nmx: mx.*.example.com\nmax_age: 86400\n", nil},
		{"mx a bare wildcard", "version: STSv1\nmode: enforce\nmx: *\nmax_age: 86400\n", nil},
		{"mx two wildcards", "version: STSv1\nmode: enforce\nmx: *.*.example.com\nmax_age: 86400\n", nil},
		{"mx a URL", "version: STSv1\nmode: enforce\nmx: https://mx.example.com/\nmax_age: 86400\n", nil},
		{"mx empty", "version: STSv1\nmode: enforce\nmx:\nmax_age: 86400\n", nil},
		{"mx with a space", "version: STSv1\nmode: enforce\nmx: mx.example.com mx2.example.com\nmax_age: 86400\n", nil},
		{"mx a label of 64", "version: STSv1\nmode: enforce\nmx: " + strings.Repeat("a", 64) + ".example.com\nmax_age: 86400\n", nil},
		{"mx with a hyphen at a label's end", "version: STSv1\nmode: enforce\nmx: mx-.example.com\nmax_age: 86400\n", nil},
		{"an extension with a control character", "version: STSv1\nmode: enforce\nx: a\x00b\nmx: mx.example.com\nmax_age: 86400\n", nil},
		{"an extension without value", "version: STSv1\nmode: enforce\nx:\nmx: mx.example.com\nmax_age: 86400\n", nil},
		{"a field name too long", "version: STSv1\nmode: enforce\n" + strings.Repeat("x", 33) + ": 1\nmx: mx.example.com\nmax_age: 86400\n", nil},
		{"not UTF-8", "version: STSv1\nmode: enforce\nx: \xff\nmx: mx.example.com\nmax_age: 86400\n", nil},
		{"HTML", "<html><body>Not found</body></html>\n", nil},
		{"many blank lines", strings.Repeat("\n", 100000), nil},
	} {
		got, err := ParsePolicy(tc.text)
		if tc.want == nil {
			if err == nil {
				t.Errorf("%s: parsed as %+v, want an error", tc.name, got)
			}
			continue
		}
		if err != nil || got.Mode != tc.want.Mode || !slices.Equal(got.MX, tc.want.MX) || got.MaxAge != tc.want.MaxAge {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, *tc.want)
		}
	}
}

// Every prefix of a valid policy, and the policy with any one byte
// changed to a hostile one, parses or fails without panicking.
func TestParsePolicyHostileBytes(t *testing.T) {
	good := "version: STSv1\r\nmode: enforce\r\nmx: mail.example.com\r\nmax_age: 604800\r\n"
	for i := range len(good) {
		_, _ = ParsePolicy(good[:i])
		for _, b := range []byte{0, '\r', '\n', ':', 0xff, ' '} {
			s := []byte(good)
			s[i] = b
			_, _ = ParsePolicy(string(s))
			_, _ = ParseRecord("v=STSv1; id=" + string(s))
		}
	}
}
