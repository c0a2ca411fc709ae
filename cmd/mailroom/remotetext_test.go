package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode"
)

// fakeAPI answers every request with status and body, as a broken or
// hostile server might.
func fakeAPI(t *testing.T, status int, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req_1")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// noControls fails when out holds a control character other than the
// line breaks the CLI writes itself.
func noControls(t *testing.T, what, out string) {
	t.Helper()
	if i := strings.IndexFunc(out, func(r rune) bool { return r != '\n' && unicode.IsControl(r) }); i >= 0 {
		t.Errorf("%s writes a control character to the terminal at %d: %q", what, i, out)
	}
}

// The server's text in an error, its details, the cursor hint and a send's
// answer reach the terminal without the control characters that would
// drive it (docs/api.md "Command line").
func TestRemoteTextCannotDriveTheTerminal(t *testing.T) {
	api := []string{"--key", "k", "--retries", "0"}
	send := []string{"send", "--from", "a@x.example", "--to", "b@y.example", "--subject", "Hi", "--text", "Hi"}

	base := fakeAPI(t, 400, `{"error":"validation_error\u001b[31m","message":"boom \u001b]0;pwned\u0007 \u001b[2J",`+
		`"details":[{"field":"to\u001b[1m","message":"bad\u001b[5m"}]}`)
	code, _, errOut := runCLI(append(append(send, "--url", base), api...)...)
	noControls(t, "a refused send", errOut)
	want := "mailroom send: validation_error [31m: boom  ]0;pwned   [2J (request req_1)\n  to [1m: bad [5m\n"
	if code != 1 || errOut != want {
		t.Errorf("exit %d, stderr %q\nwant %q", code, errOut, want)
	}

	base = fakeAPI(t, 200, `{"data":[],"nextCursor":"\u001b[2Jc"}`)
	code, _, errOut = runCLI(append([]string{"messages", "list", "--url", base}, api...)...)
	noControls(t, "the cursor hint", errOut)
	if code != 0 || !strings.Contains(errOut, "--cursor  [2Jc for") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}

	base = fakeAPI(t, 200, `{"status":"duplicate\u001b[2J","messageId":"msg_1\u001b[2J"}`)
	code, out, errOut := runCLI(append(append(send, "--url", base), api...)...)
	noControls(t, "a send's id", out)
	noControls(t, "a send's status", errOut)
	if code != 0 || out != "msg_1 [2J\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// An error that is not the API's (a network error, an answer that does
// not decode) may quote the server too.
func TestPrintFailureCleansOtherErrors(t *testing.T) {
	var b strings.Builder
	printFailure(&b, "mailroom send", errors.New("cannot reach x: \x1b[2J"))
	if got := b.String(); got != "mailroom send: cannot reach x:  [2J\n" {
		t.Errorf("%q", got)
	}
}
