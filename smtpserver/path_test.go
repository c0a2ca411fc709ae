package smtpserver_test

import (
	"testing"

	"github.com/mailroom/mailroom/smtpserver"
)

// A path's address gets back the quotes go-smtp's parser takes off its
// local part, and only where they are needed.
func TestPathAddress(t *testing.T) {
	for in, want := range map[string]string{
		"ann@example.net":       "ann@example.net",
		"ann.b+tag@example.net": "ann.b+tag@example.net",
		"ann smith@example.net": `"ann smith"@example.net`,
		"a@b@example.net":       `"a@b"@example.net`,
		`a"b\c@example.net`:     `"a\"b\\c"@example.net`,
		".ann@example.net":      `".ann"@example.net`,
		"ann..b@example.net":    `"ann..b"@example.net`,
		"":                      "",
		"postmaster":            "postmaster",
		"@example.net":          "@example.net",
	} {
		if got := smtpserver.PathAddress(in); got != want {
			t.Errorf("PathAddress(%q) = %q, want %q", in, got, want)
		}
	}
}
