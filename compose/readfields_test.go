package compose

import (
	"strings"
	"testing"
)

// TestReadFieldsKeepsBytes: the fields textproto reads are the bytes as
// written, folds, tabs, odd spacing and the name's case included, since
// DKIM signs them so (relaxed canonicalization happens on the copy that is
// hashed, never on what is sent).
func TestReadFieldsKeepsBytes(t *testing.T) {
	fields := []string{
		"From: App <app@example.com>",
		"subject:no space after the colon",
		"X-Folded: first line\r\n\tsecond line after a tab\r\n   third after spaces",
		"Message-ID:   <id@example.com>   ",
		"DATE: Mon, 2 Jan 2006 15:04:05 +0000",
		"X-Empty:",
	}
	block := strings.Join(fields, "\r\n") + "\r\n\r\n"
	got, err := readFields([]byte(block))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(fields) {
		t.Fatalf("%d fields, want %d: %q", len(got), len(fields), got)
	}
	for i, f := range got {
		if f.raw != fields[i] {
			t.Errorf("field %d: raw %q, want %q", i, f.raw, fields[i])
		}
	}
	if v := got[2].value; v != "first line second line after a tab third after spaces" {
		t.Errorf("unfolded value %q", v)
	}
	if v := got[4].value; v != "Mon, 2 Jan 2006 15:04:05 +0000" {
		t.Errorf("Date value %q", v)
	}

	if _, err := readFields([]byte("From: a@example.com\r\nnot a field\r\n\r\n")); err == nil {
		t.Error("a line that is not a field was taken")
	}
}
