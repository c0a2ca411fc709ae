package mailroom

import (
	"testing"
	"time"
)

// TestIsID: an id is its prefix and a ULID's 26 characters as NewID writes
// them; anything else names nothing (a 400 or 404 without a lookup), not a
// key that compares with stored ones.
func TestIsID(t *testing.T) {
	made := NewID(PrefixMessage, time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC))
	if !IsID(made, PrefixMessage) {
		t.Fatalf("IsID(%q) = false for an id NewID made", made)
	}
	for _, s := range []string{
		"msg_7zzzzzzzzzzzzzzzzzzzzzzzzz", // the largest ULID
		"msg_00000000000000000000000000",
	} {
		if !IsID(s, PrefixMessage) {
			t.Errorf("IsID(%q) = false", s)
		}
	}
	rest := made[len(PrefixMessage):]
	for _, s := range []string{
		"",
		"msg_",
		"evt_" + rest,                        // another kind's prefix
		"msg_" + rest[:25],                   // 25 characters
		"msg_" + rest + "0",                  // 27
		"msg_8" + rest[1:],                   // above 128 bits
		"msg_" + rest[:10] + "i" + rest[11:], // not Crockford's: i, l, o, u
		"msg_" + rest[:10] + "l" + rest[11:],
		"msg_" + rest[:10] + "o" + rest[11:],
		"msg_" + rest[:10] + "u" + rest[11:],
		"msg_" + rest[:10] + "A" + rest[11:], // upper case
		"msg_" + rest[:10] + "\x00" + rest[11:],
	} {
		if IsID(s, PrefixMessage) {
			t.Errorf("IsID(%q) = true", s)
		}
	}
}
