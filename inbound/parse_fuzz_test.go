package inbound

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseReport checks that no input panics the parser or breaks what
// every report holds (checkInvariants). The fixtures are the seeds; a
// plain go test runs only them. To fuzz (not in CI):
//
//	go test ./inbound/ -run '^$' -fuzz FuzzParseReport -fuzztime 60s
func FuzzParseReport(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "reports", "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(crlf(b))
	}
	f.Add(nestedMultiparts(maxDepth+2, "multipart/report"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := ParseReport(bytes.NewReader(in))
		if err != nil {
			if r != nil {
				t.Fatalf("a report with the error %v", err)
			}
			return
		}
		if r == nil {
			t.Fatal("no report and no error")
		}
		checkInvariants(t, r)
	})
}
