package rss

import (
	"runtime"
	"testing"
)

// The peak holds what a large allocation took, and a reset brings it back
// down to what is resident now.
func TestPeakFollowsAnAllocationAndItsReset(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status (Linux)")
	}
	before, err := Current()
	if err != nil || before == 0 {
		t.Fatalf("Current() = %d, %v", before, err)
	}
	if err := ResetPeak(); err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 64<<20)
	for i := range block {
		block[i] = 1 // touched, so resident
	}
	peak, err := Peak()
	if err != nil {
		t.Fatal(err)
	}
	if peak < before+48<<20 {
		t.Fatalf("peak %d MiB after touching 64 MiB from %d MiB resident", peak>>20, before>>20)
	}
	runtime.KeepAlive(block)
}
