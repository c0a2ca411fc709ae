package client

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode"
)

// A server's control characters stay in the fields, as received, but not
// in Error(), which ends up in logs and on terminals.
func TestErrorTextHasNoControlCharacters(t *testing.T) {
	_, srv := newScript(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(400)
		_, _ = w.Write([]byte("\x1b[31mnot json at all\r\nforged: line"))
	})
	c, _ := testClient(srv.URL)
	_, err := c.GetMessage(context.Background(), "msg_1")
	var e *Error
	if !errors.As(err, &e) || e.Message != "\x1b[31mnot json at all\r\nforged: line" {
		t.Fatalf("err %#v, want the body as the message, as received", err)
	}
	if got, want := err.Error(), "mailroom: 400:  [31mnot json at all  forged: line"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}

	body := []byte(`{"error":"validation_error\u001b[31m","message":"boom \u001b]0;pwned\u0007","details":[{"field":"to\u001b[1m","message":"bad\u0085","index":0}]}`)
	e = newError(400, http.Header{"X-Request-Id": {"req_\x1b[2J"}}, body, time.Now())
	if e.Code != "validation_error\x1b[31m" || e.Details[0].Field != "to\x1b[1m" || e.RequestID != "req_\x1b[2J" {
		t.Errorf("fields %+v, want them as received", e)
	}
	got := e.Error()
	if strings.IndexFunc(got, unicode.IsControl) >= 0 {
		t.Errorf("Error() = %q holds control characters", got)
	}
	if want := "mailroom: 400 validation_error [31m: boom  ]0;pwned  — to [1m[0]: bad  (request req_ [2J)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
