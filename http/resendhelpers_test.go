package http_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mailroom/mailroom/apitest"
)

// resendDo calls one of Resend's routes with key: not checked against the
// OpenAPI document, which describes /v1.
func (e *env) resendDo(method, path, key string, body any) *apitest.Response {
	e.T.Helper()
	return e.Do(apitest.Request{Method: method, Path: path, Key: key, Body: body, NoCheck: true})
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

// wantResendError requires Resend's error body: status, statusCode and
// name, and a message.
func wantResendError(t *testing.T, r *apitest.Response, status int, name string) {
	t.Helper()
	body := r.Map()
	if r.Status != status || body["statusCode"] != float64(status) || body["name"] != name || body["message"] == "" {
		t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, status, name)
	}
}
