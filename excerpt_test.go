package mailroom

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExcerptCutsAtACharacter(t *testing.T) {
	if got := Excerpt("short", 10); got != "short" {
		t.Fatalf("a short text changed: %q", got)
	}
	long := strings.Repeat("é", 100) // 2 bytes each
	got := Excerpt(long, 51)
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "…") || len(got) > 51+len("…") {
		t.Fatalf("Excerpt = %q", got)
	}
}

// A validation message quotes at most an excerpt of the client's value.
func TestValidatorQuotesExcerpts(t *testing.T) {
	var v Validator
	v.Add(strings.Repeat("f", 10_000), "unknown scope %q", strings.Repeat("s", 1<<20))
	err := v.Err().(*Error)
	if d := err.Details[0]; len(d.Field) > MaxFieldName+len("…") || len(d.Message) > 2*MaxQuoted {
		t.Fatalf("detail of %d+%d bytes", len(d.Field), len(d.Message))
	}
}
