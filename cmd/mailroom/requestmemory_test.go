package main

import (
	"log/slog"
	"os"
	"runtime/debug"
	"testing"

	"github.com/mailroom/mailroom/membudget"
)

// The budget is --request-memory or a quarter of the machine's memory, one
// account holding at most half, and Go's soft memory limit follows it
// unless GOMEMLIMIT is set.
func TestRequestMemoryBudgetAndGoMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT")
	log := slog.New(slog.DiscardHandler)

	var f requestMemoryFlags
	if err := f.requestMemory.Set("512MiB"); err != nil {
		t.Fatal(err)
	}
	b := f.budget(log)
	if b.Total() != 512<<20 || b.Share() != 256<<20 {
		t.Fatalf("--request-memory 512MiB: budget %d, share %d", b.Total(), b.Share())
	}
	machine, _ := membudget.Machine()
	want := int64(1 << 30)
	if machine > 0 {
		want = max(min(want, machine/4*3), 512<<20)
	}
	if got := debug.SetMemoryLimit(-1); got != want {
		t.Fatalf("Go's memory limit %d, want %d", got, want)
	}

	var unset requestMemoryFlags
	b = unset.budget(log)
	switch {
	case machine > 0 && b.Total() != max(machine/4, minRequestMemory):
		t.Fatalf("default budget %d on a machine of %d", b.Total(), machine)
	case machine == 0 && b.Total() != fallbackRequestMemory:
		t.Fatalf("default budget %d where the machine's memory is unknown", b.Total())
	}

	// An operator's GOMEMLIMIT is left as it is.
	debug.SetMemoryLimit(before)
	t.Setenv("GOMEMLIMIT", "3GiB")
	f.budget(log)
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Fatalf("with GOMEMLIMIT set, the limit became %d", got)
	}
}
