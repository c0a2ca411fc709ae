package sealer_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/sealer"
)

// urlSafeKey has bytes whose base64 uses '+' and '/' in the standard
// alphabet and '-' and '_' in the URL one, so both alphabets are exercised.
var urlSafeKey = bytes.Repeat([]byte{0xfb, 0xef, 0xbe}, 11)[:32]

func TestParseKeyAcceptsEncodings(t *testing.T) {
	for _, tc := range []struct {
		name    string
		encoded string
	}{
		{"standard padded", base64.StdEncoding.EncodeToString(urlSafeKey)},
		{"standard unpadded", base64.RawStdEncoding.EncodeToString(urlSafeKey)},
		{"URL padded", base64.URLEncoding.EncodeToString(urlSafeKey)},
		{"URL unpadded", base64.RawURLEncoding.EncodeToString(urlSafeKey)},
		{"trailing newline", base64.StdEncoding.EncodeToString(urlSafeKey) + "\n"},
		{"surrounding space", "  " + base64.StdEncoding.EncodeToString(urlSafeKey) + "\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.ContainsAny(strings.TrimSpace(tc.encoded), "+/-_") {
				t.Fatalf("fixture %q does not exercise the alphabet", tc.encoded)
			}
			got, err := sealer.ParseKey(tc.encoded)
			if err != nil {
				t.Fatalf("ParseKey(%q): %v", tc.encoded, err)
			}
			if !bytes.Equal(got, urlSafeKey) {
				t.Fatalf("ParseKey(%q) = %x, want %x", tc.encoded, got, urlSafeKey)
			}
		})
	}
}

func TestParseKeyRejects(t *testing.T) {
	std := base64.StdEncoding.EncodeToString(urlSafeKey)
	for _, tc := range []struct {
		name    string
		encoded string
		want    string
	}{
		{"empty", "", "empty"},
		{"blank", " \n", "empty"},
		{"16 bytes", base64.StdEncoding.EncodeToString(make([]byte, 16)), "16 bytes"},
		{"33 bytes", base64.StdEncoding.EncodeToString(make([]byte, 33)), "33 bytes"},
		{"not base64", "correct horse battery staple!!!!correct horse battery", "not valid base64"},
		{"hex", strings.Repeat("ab", 32), "48 bytes"},
		{"mixed alphabets", strings.Replace(std, "+", "-", 1), "not valid base64"},
		{"cut short", std[:40], "30 bytes"},
		{"cut mid-byte", std[:41], "not valid base64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sealer.ParseKey(tc.encoded)
			if err == nil {
				t.Fatalf("ParseKey(%q) succeeded", tc.encoded)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if secret := strings.TrimSpace(tc.encoded); len(secret) >= 8 && strings.Contains(err.Error(), secret[:8]) {
				t.Errorf("error %q echoes the key", err)
			}
		})
	}
}
