package membudget

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestBudgetBoundsTheNodeAndEachAccount(t *testing.T) {
	b := New(100, 50)
	a1, err := b.Reserve("a", 30)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Reserve("a", 30); !errors.Is(err, ErrAccountShare) {
		t.Fatalf("a's second 30 past its share of 50: %v, want ErrAccountShare", err)
	}
	b1, err := b.Reserve("b", 50)
	if err != nil {
		t.Fatalf("b within its share: %v", err)
	}
	if _, err := b.Reserve("c", 30); !errors.Is(err, ErrNodeFull) {
		t.Fatalf("c with 80 of 100 taken: %v, want ErrNodeFull", err)
	}
	if got := b.InUse(); got != 80 {
		t.Fatalf("in use %d, want 80", got)
	}
	a1.Release()
	a1.Release() // twice: nothing more
	if got := b.InUse(); got != 50 {
		t.Fatalf("in use after release %d, want 50", got)
	}
	if _, err := b.Reserve("c", 50); err != nil {
		t.Fatalf("c once a released: %v", err)
	}
	b1.Release()
}

func TestOneReservationAloneMayPassTheShare(t *testing.T) {
	b := New(100, 40)
	r, err := b.Reserve("a", 70)
	if err != nil {
		t.Fatalf("a's only reservation, past its share but within the node: %v", err)
	}
	if err := r.Grow(20); err != nil {
		t.Fatalf("growing a's only reservation: %v", err)
	}
	if _, err := b.Reserve("a", 1); !errors.Is(err, ErrAccountShare) {
		t.Fatalf("a second reservation of a: %v, want ErrAccountShare", err)
	}
	if err := r.Grow(20); !errors.Is(err, ErrNodeFull) {
		t.Fatalf("growing past the node: %v, want ErrNodeFull", err)
	}
	if got := r.Bytes(); got != 90 {
		t.Fatalf("the reservation holds %d after a refused growth, want 90", got)
	}
	r.Release()
	if err := r.Grow(1); err == nil {
		t.Fatal("a released reservation grew")
	}
	if got := b.InUse(); got != 0 {
		t.Fatalf("in use %d, want 0", got)
	}
}

func TestNilBudgetGrantsEverything(t *testing.T) {
	var b *Budget
	r, err := b.Reserve("a", 1<<40)
	if err != nil || r.Grow(1<<40) != nil {
		t.Fatal("a nil budget refused")
	}
	r.Release()
}

func TestBudgetUnderConcurrency(t *testing.T) {
	b := New(1000, 1000)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for range 200 {
				if r, err := b.Reserve("a", 7); err == nil {
					if b.InUse() > 1000 {
						t.Error("over the budget")
					}
					r.Release()
				}
			}
		})
	}
	wg.Wait()
	if got := b.InUse(); got != 0 {
		t.Fatalf("in use %d after every release, want 0", got)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"512MiB": 512 << 20, "2GiB": 2 << 30, "1.5GB": 1_500_000_000, "1048576": 1 << 20, "64 KiB": 64 << 10, "10B": 10,
	} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "-1MiB", "1XB", "MiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
	for n, want := range map[int64]string{512 << 20: "512MiB", 3 << 29: "1.5GiB", 100: "100B"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestMachineTakesTheLesserOfTheCgroupLimitAndMemory(t *testing.T) {
	root := t.TempDir() + "/"
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(root+name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(root+name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := machineFrom(root); n != 0 {
		t.Fatalf("nothing to read: %d, want 0", n)
	}
	write("proc/meminfo", "MemFree:  1000 kB\nMemTotal:       8388608 kB\n")
	if n, src := machineFrom(root); n != 8<<30 || src == "" {
		t.Fatalf("meminfo alone: %d (%s), want 8 GiB", n, src)
	}
	write("sys/fs/cgroup/memory.max", "max\n")
	if n, _ := machineFrom(root); n != 8<<30 {
		t.Fatalf("cgroup without a limit: %d, want 8 GiB", n)
	}
	write("sys/fs/cgroup/memory.max", "2147483648\n")
	if n, src := machineFrom(root); n != 2<<30 || src != "the cgroup memory limit (/sys/fs/cgroup/memory.max)" {
		t.Fatalf("cgroup limit of 2 GiB: %d (%s)", n, src)
	}
}

// The second outside probe's finding (issue 27): two large requests of one
// account, each within its share alone, reserved as they arrive, grew
// until neither fitted, and both were refused, on every retry. The one
// further along now goes on past the share while the node has room, the
// other is refused, and one always finishes.
func TestTheLargestOfAnAccountGoesOn(t *testing.T) {
	b := New(1000, 100)
	r1, _ := b.Reserve("a", 0)
	r2, _ := b.Reserve("a", 0)
	var refused []int
	for step := 0; step < 6; step++ {
		for i, r := range []*Reservation{r1, r2} {
			if r.Bytes() < 10*int64(step) {
				continue // refused before: it stopped
			}
			if err := r.Grow(10); err != nil {
				if !errors.Is(err, ErrAccountShare) {
					t.Fatalf("request %d at step %d: %v, want ErrAccountShare", i+1, step, err)
				}
				refused = append(refused, i+1)
			}
		}
	}
	if r1.Bytes() != 60 || len(refused) != 1 || refused[0] != 2 {
		t.Fatalf("two requests of 60 growing side by side under a share of 100: the first holds %d, refused %v; want the first to reach 60 and the second refused once",
			r1.Bytes(), refused)
	}
	if _, err := b.Reserve("a", 1); !errors.Is(err, ErrAccountShare) {
		t.Fatalf("a third request while a is past its share: %v, want ErrAccountShare", err)
	}
	if _, err := b.Reserve("b", 100); err != nil {
		t.Fatalf("another account within its share: %v", err)
	}
	r1.Release()
	r2.Release()
}
