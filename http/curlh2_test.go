package http_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// A refused body's answer reaches curl over HTTP/2 every time. Go's
// client reads an answer whose stream is reset mid-upload, but curl (7.88,
// Debian's) drops it about one time in four when the server resets the
// stream right after answering, so this asks curl itself, many times.
func TestPayloadTooLargeReachesCurlOverHTTP2(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed: the HTTP/2 answer is checked with Go's client only")
	}
	if v, _ := exec.Command(curl, "-V").Output(); !bytes.Contains(v, []byte("HTTP2")) {
		t.Skip("this curl has no HTTP/2")
	}
	e := newEnv(t, storetest.SQLite)
	body := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(body, bytes.Repeat([]byte(" "), 17<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 16 {
		// -k: the test server's certificate is its own; this is about HTTP/2.
		out, err := exec.Command(curl, "-sS", "-k", "--http2", "-o", "-", "-w", "\n%{http_code} %{http_version}",
			"-H", "Authorization: Bearer "+e.admin, "-H", "Content-Type: application/json",
			"--data-binary", "@"+body, e.Base+"/v1/send").CombinedOutput()
		got := string(out)
		if err != nil || !strings.Contains(got, mailroom.ECodePayloadTooLarge) || !strings.HasSuffix(got, "413 2") {
			t.Fatalf("attempt %d: curl did not get the 413's body over HTTP/2 (%v):\n%s", i+1, err, got)
		}
	}
}
