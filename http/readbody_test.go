package http

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// A body that declares 16 MiB and stalls after its first KiB holds a
// buffer for what arrived, not for what it declared: the memory budget
// reserves a body as it arrives, and the buffer must not hold more than
// was reserved (issue 27's outside probe). A whole body still reads
// whole, at any size.
func TestReadBodyGrowsAsTheBodyArrives(t *testing.T) {
	stalled := errors.New("the client stalled")
	got, err := readBody(io.MultiReader(bytes.NewReader(make([]byte, 1024)), errReader{stalled}), MaxBodyBytes)
	if !errors.Is(err, stalled) || len(got) != 1024 {
		t.Fatalf("readBody = %d bytes, %v; want 1024 and the stall", len(got), err)
	}
	if cap(got) > firstBodyBuffer {
		t.Fatalf("a body that sent 1 KiB of a declared 16 MiB holds a %d KiB buffer, want at most %d KiB", cap(got)>>10, firstBodyBuffer>>10)
	}
	for _, size := range []int{0, 1, firstBodyBuffer - 1, firstBodyBuffer, firstBodyBuffer + 1, 3<<20 + 7, MaxBodyBytes} {
		body := bytes.Repeat([]byte{'x'}, size)
		for _, declared := range []int64{int64(size), -1} {
			got, err := readBody(bytes.NewReader(body), declared)
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("readBody of %d bytes (declared %d) = %d bytes, %v", size, declared, len(got), err)
			}
		}
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
