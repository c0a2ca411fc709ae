package mailroom

import (
	"math/big"
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

// Ids made for one instant are strictly increasing even when ids for other
// instants are made between them (a batch accepted at one instant while
// other requests make ids for the next), and sort after the earlier
// instant's.
func TestNewIDIncreasesPerInstant(t *testing.T) {
	a := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	b := a.Add(time.Millisecond)
	var lastA, lastB string
	for i := range 1000 {
		x, y := NewID(PrefixMessage, a), NewID(PrefixMessage, b)
		if x <= lastA || y <= lastB {
			t.Fatalf("id %d: %s after %s, %s after %s: not increasing", i, x, lastA, y, lastB)
		}
		if x >= y {
			t.Fatalf("id %d: %s of the earlier instant sorts after %s", i, x, y)
		}
		lastA, lastB = x, y
	}
}

// increment steps the 80-bit entropy up by 1 to 2^32, carrying across
// bytes, and says when it would overflow.
func TestIncrement(t *testing.T) {
	for _, start := range [][10]byte{
		{},
		{0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff},
		{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe},
	} {
		for range 100 {
			e := start
			if !increment(&e) {
				t.Fatalf("%x: overflow", start)
			}
			step := new(big.Int).Sub(new(big.Int).SetBytes(e[:]), new(big.Int).SetBytes(start[:]))
			if step.Sign() <= 0 || step.Cmp(new(big.Int).Lsh(big.NewInt(1), 32)) > 0 {
				t.Fatalf("%x + a step of %v = %x: not 1 to 2^32", start, step, e)
			}
		}
	}
	full := [10]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if increment(&full) {
		t.Error("the largest entropy incremented without overflow")
	}
}
