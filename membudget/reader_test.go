package membudget

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// The metering reader reserves each MeterStep of input, times the factor,
// before reading it; input ending where the reservation does reserves
// nothing more.
func TestReaderReservesAsItReads(t *testing.T) {
	b := New(100*MeterStep, 100*MeterStep)
	in := bytes.Repeat([]byte("x"), 3*MeterStep+1)

	res, _ := b.Reserve("a", 0)
	r := NewReader(bytes.NewReader(in), res, 2, nil)
	if got, err := io.ReadAll(r); err != nil || len(got) != len(in) {
		t.Fatalf("read %d, %v", len(got), err)
	}
	if got := res.Bytes(); got != 4*MeterStep*2 {
		t.Fatalf("unknown length: reserved %d, want 4 steps times 2 (%d)", got, 4*MeterStep*2)
	}
	res.Release()

	// Ending on a step: nothing more.
	res, _ = b.Reserve("a", 0)
	r = NewReader(bytes.NewReader(in[:2*MeterStep]), res, 2, nil)
	if _, err := io.ReadAll(r); err != nil {
		t.Fatal(err)
	}
	if got := res.Bytes(); got != 2*MeterStep*2 {
		t.Fatalf("input of two whole steps: reserved %d, want %d", got, 2*MeterStep*2)
	}
	res.Release()

	// An empty input reserves nothing.
	res, _ = b.Reserve("a", 0)
	if _, err := io.ReadAll(NewReader(bytes.NewReader(nil), res, 2, nil)); err != nil || res.Bytes() != 0 {
		t.Fatalf("empty input: %v, reserved %d", err, res.Bytes())
	}
	res.Release()
}

// Past the budget the reading ends with the refusal, or what refused makes
// of it, and Err tells the budget's refusal.
func TestReaderEndsAtTheRefusal(t *testing.T) {
	b := New(2*MeterStep, 2*MeterStep)
	in := bytes.Repeat([]byte("x"), 3*MeterStep)
	res, _ := b.Reserve("a", 0)
	mine := errors.New("answered 452")
	r := NewReader(bytes.NewReader(in), res, 1, func(error) error { return mine })
	got, err := io.ReadAll(r)
	if !errors.Is(err, mine) || !errors.Is(r.Err(), ErrNodeFull) {
		t.Fatalf("past the budget: %v (Err %v), want the refusal", err, r.Err())
	}
	if len(got) > 2*MeterStep {
		t.Fatalf("read %d bytes, more than the %d reserved", len(got), 2*MeterStep)
	}
	if _, err := r.Read(make([]byte, 10)); !errors.Is(err, mine) {
		t.Fatalf("a read after the refusal: %v", err)
	}
	res.Release()
	if b.InUse() != 0 {
		t.Fatalf("in use %d after release", b.InUse())
	}
}
