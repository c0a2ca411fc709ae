package webhook

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mailroom/mailroom"
)

// The excerpt of a response is stored as text and shown to people: at
// most 1 KiB of valid UTF-8, no NUL, and no rune cut in half at the limit.
func TestReadExcerpt(t *testing.T) {
	for name, tc := range map[string]struct{ body, want string }{
		"short":          {"ok", "ok"},
		"cut at 1 KiB":   {strings.Repeat("a", 2000), strings.Repeat("a", 1024)},
		"rune at limit":  {strings.Repeat("a", 1023) + "é and more", strings.Repeat("a", 1023)},
		"invalid UTF-8":  {"a\xffb", "a\uFFFDb"},
		"NUL":            {"a\x00b", "a\uFFFDb"},
		"NULs past 1KiB": {strings.Repeat("\x00", 1024), strings.Repeat("\uFFFD", 341)},
	} {
		t.Run(name, func(t *testing.T) {
			got := readExcerpt(io.NopCloser(strings.NewReader(tc.body)))
			if got != tc.want || !utf8.ValidString(got) || len(got) > mailroom.MaxWebhookResponseExcerpt {
				t.Fatalf("excerpt %q (%d bytes), want %q", got, len(got), tc.want)
			}
		})
	}
}

// A connection failure is told in words its owner can act on.
func TestConnectionRefusedIsSaid(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	d := &Dispatcher{AllowPrivate: true}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "https://"+addr+"/", nil)
	_, err = d.httpClient().Do(req)
	if outcome, text := describe(err); outcome != OutcomeConnection || text != "connection refused" {
		t.Fatalf("described as %s, %q (from %v)", outcome, text, err)
	}
	if outcome, text := describe(context.DeadlineExceeded); outcome != OutcomeTimeout || text != "timed out after 15s" {
		t.Fatalf("a timeout described as %s, %q", outcome, text)
	}
}
