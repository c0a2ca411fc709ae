package compose

import (
	"mime"
	"strings"
	"testing"
)

// unfold is RFC 5322 §2.2.3 unfolding: drop each CRLF before WSP.
func unfold(raw string) string {
	return strings.ReplaceAll(strings.TrimSuffix(raw, "\r\n"), "\r\n", "")
}

func TestFoldingKeepsLinesShortAndValuesExact(t *testing.T) {
	long := strings.Repeat("Überweisung für Zoë bestätigt, ", 30)
	for name, value := range map[string]string{
		"short":               "hi",
		"long ASCII":          strings.Repeat("your order has shipped ", 40),
		"encoded-words":       mime.QEncoding.Encode("utf-8", long),
		"address list":        strings.Repeat(`"Bob Smith" <bob@example.net>, `, 30) + "<x@example.org>",
		"runs of whitespace":  "a  \t b" + strings.Repeat(" ", 100) + "c   ",
		"long word midway":    "see " + strings.Repeat("x", 120) + " then more words follow here",
		"empty":               "",
		"UTF-8 local part":    "<" + strings.Repeat("ü", 40) + "@example.com>",
		"leading whitespace":  "   indented",
		"tabs as only breaks": strings.Repeat("word\t", 40),
	} {
		t.Run(name, func(t *testing.T) {
			raw, err := formatField(field{"Subject", value})
			if err != nil {
				t.Fatal(err)
			}
			s := string(raw)
			if got := unfold(s); got != "Subject: "+value {
				t.Fatalf("unfolds to %q", got)
			}
			lines := strings.Split(strings.TrimSuffix(s, "\r\n"), "\r\n")
			for i, l := range lines {
				if strings.TrimLeft(l, " \t") == "" {
					t.Errorf("line %d is only whitespace", i+1)
				}
				// Longer than 78 only when it holds one word (beside the
				// name, on the first line) that does not fit.
				words := len(strings.Fields(l))
				if i == 0 {
					words-- // "Subject:"
				}
				if len(l) > foldAt && words > 1 {
					t.Errorf("line %d is %d characters and could have been folded: %q", i+1, len(l), l)
				}
			}
			if name == "encoded-words" {
				for i, l := range lines[1:] {
					if len(l) > 76 {
						t.Errorf("encoded-word line %d is %d characters, RFC 2047 §2 says 76", i+2, len(l))
					}
				}
			}
		})
	}
}

func TestFoldingBreaksOnlyWhatCannotFit(t *testing.T) {
	raw, err := formatField(field{"X-Token", strings.Repeat("x", 2500)})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSuffix(string(raw), "\r\n"), "\r\n") {
		if len(l) > maxLine {
			t.Errorf("line of %d octets", len(l))
		}
	}
}

func TestFieldRefusesInjection(t *testing.T) {
	for _, f := range []field{
		{"Subject", "hi\r\nBcc: x@example.org"},
		{"Subject", "hi\nBcc: x@example.org"},
		{"Subject", "hi\rthere"},
		{"X Bad", "v"},
		{"", "v"},
	} {
		if raw, err := formatField(f); err == nil {
			t.Errorf("formatted %q", raw)
		}
	}
}
