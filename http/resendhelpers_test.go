package http_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/apitest"
)

// resendDo calls one of Resend's routes with key, checking the answer
// against the OpenAPI document (its operations tagged Resend-compatible).
func (e *env) resendDo(method, path, key string, body any) *apitest.Response {
	e.T.Helper()
	return e.Do(apitest.Request{Method: method, Path: path, Key: key, Body: body})
}

// decodeExactly decodes r's body into a T, refusing members T lacks, so
// that a test pins the shape an SDK reads.
func decodeExactly[T any](t testing.TB, r *apitest.Response) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%d %s: %v", r.Status, r.Body, err)
	}
	return v
}

// wantResendError fails unless r is Resend's error body with status and
// name, and a message that holds each of says.
func wantResendError(t *testing.T, r *apitest.Response, status int, name string, says ...string) {
	t.Helper()
	var body struct {
		StatusCode int    `json:"statusCode"`
		Name       string `json:"name"`
		Message    string `json:"message"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil || r.Status != status || body.StatusCode != status || body.Name != name || body.Message == "" {
		t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, status, name)
	}
	for _, s := range says {
		if !strings.Contains(body.Message, s) {
			t.Errorf("message %q does not say %q", body.Message, s)
		}
	}
}
