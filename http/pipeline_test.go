package http_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/storetest"
)

func TestRequestPipeline(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	create := func(body any, h map[string]string) *apitest.Response {
		return e.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Key: e.admin, Body: body, Header: h})
	}

	t.Run("service routes", func(t *testing.T) {
		for _, p := range []string{"/healthz", "/readyz", "/v1/openapi.json"} {
			if r := e.Do(apitest.Request{Method: "GET", Path: p}); r.Status != 200 {
				t.Errorf("%s: %d %s", p, r.Status, r.Body)
			}
			// A wrong method is the JSON 405 the document declares.
			wantError(t, e.Do(apitest.Request{Method: "DELETE", Path: p}), 405, mailroom.ECodeMethodNotAllowed)
		}
	})

	t.Run("unknown route is a JSON 404", func(t *testing.T) {
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/nothing-here", Key: e.admin}), 404, mailroom.ECodeNotFound)
		// NoCheck: the document's router reads the trailing slash as an empty {keyId}.
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys/", Key: e.admin, NoCheck: true}), 404, mailroom.ECodeNotFound)
	})

	t.Run("known route, wrong method is 405 with Allow", func(t *testing.T) {
		r := e.Do(apitest.Request{Method: "PUT", Path: "/v1/api-keys", Key: e.admin})
		wantError(t, r, 405, mailroom.ECodeMethodNotAllowed)
		if got := r.Header.Get("Allow"); got != "GET, HEAD, POST" {
			t.Fatalf("Allow = %q", got)
		}
	})

	t.Run("415 for a body that is not JSON", func(t *testing.T) {
		wantError(t, create(`{"name":"x","scopes":["send"]}`, map[string]string{"Content-Type": "text/plain"}), 415, mailroom.ECodeUnsupportedMediaType)
		wantError(t, create(`{"name":"x","scopes":["send"]}`, map[string]string{"Content-Type": ""}), 415, mailroom.ECodeUnsupportedMediaType)
		wantError(t, create(`{"name":"x","scopes":["send"]}`, map[string]string{"Content-Type": "application/json; charset=latin1"}), 415, mailroom.ECodeUnsupportedMediaType)
		if r := create(`{"name":"x","scopes":["send"]}`, map[string]string{"Content-Type": "application/json; charset=UTF-8"}); r.Status != 201 {
			t.Fatalf("charset=UTF-8 refused: %d %s", r.Status, r.Body)
		}
	})

	t.Run("400 invalid_json", func(t *testing.T) {
		for _, body := range []string{`{"name":`, `not json`, `{"name":"x","scopes":["send"]} {}`, ``, `[]`, `{"name":5,"scopes":["send"]}`, `{"name":"x","scopes":"send"}`} {
			wantError(t, create(body, map[string]string{"Content-Type": "application/json"}), 400, mailroom.ECodeInvalidJSON)
		}
	})

	t.Run("400 validation_error names each field, unknown fields too", func(t *testing.T) {
		r := create(map[string]any{"name": "x", "scopes": []string{"send"}, "nmae": "typo"}, nil)
		wantError(t, r, 400, mailroom.ECodeValidation)
		if !strings.Contains(string(r.Body), `"field":"nmae"`) {
			t.Fatalf("unknown field not named: %s", r.Body)
		}
		r = create(map[string]any{"name": "", "scopes": []string{"send", "fly", "send"}}, nil)
		wantError(t, r, 400, mailroom.ECodeValidation)
		details, _ := r.Map()["details"].([]any)
		if len(details) != 3 {
			t.Fatalf("want 3 details (name, unknown scope, repeated scope), got %s", r.Body)
		}
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys?limit=0", Key: e.admin}), 400, mailroom.ECodeValidation)
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys?cursor=zzz", Key: e.admin}), 400, mailroom.ECodeValidation)
	})

	t.Run("413 over 16 MiB, declared: answered before the body is sent", func(t *testing.T) {
		u, _ := url.Parse(e.Base)
		conn, err := tls.Dial("tcp", u.Host, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// Declare 17 MiB, send only the headers: a server that waited for
		// the body would never answer.
		fmt.Fprintf(conn, "POST /v1/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", e.admin, 17<<20)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 413 || !strings.Contains(string(body), mailroom.ECodePayloadTooLarge) {
			t.Fatalf("got %d %s", resp.StatusCode, body)
		}
	})

	t.Run("413 over 16 MiB, streamed without a length", func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			chunk := strings.Repeat(" ", 1<<20)
			for range 17 {
				if _, err := io.WriteString(pw, chunk); err != nil {
					return
				}
			}
			pw.Close()
		}()
		req, _ := http.NewRequest("POST", e.Base+"/v1/api-keys", pr)
		req.Header.Set("Authorization", "Bearer "+e.admin)
		req.Header.Set("Content-Type", "application/json")
		resp, err := e.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		pr.CloseWithError(errors.New("done"))
		if resp.StatusCode != 413 || !strings.Contains(string(body), mailroom.ECodePayloadTooLarge) {
			t.Fatalf("got %d %s", resp.StatusCode, body)
		}
	})

	t.Run("X-Request-Id is echoed, or made", func(t *testing.T) {
		r := e.Do(apitest.Request{Method: "GET", Path: "/healthz", Header: map[string]string{"X-Request-Id": "client-abc-123"}})
		if got := r.Header.Get("X-Request-Id"); got != "client-abc-123" {
			t.Fatalf("echo: %q", got)
		}
		for _, bad := range []string{"has space", strings.Repeat("x", 129)} {
			r = e.Do(apitest.Request{Method: "GET", Path: "/healthz", Header: map[string]string{"X-Request-Id": bad}})
			if got := r.Header.Get("X-Request-Id"); !strings.HasPrefix(got, "req_") {
				t.Fatalf("a malformed id should be replaced: %q", got)
			}
		}
	})
}

// failingStore answers like a store with a bug: an error that is not a
// domain error, carrying text that must never reach a client.
type failingStore struct{ mailroom.Store }

func (failingStore) ListAPIKeys(context.Context, string, mailroom.Page) ([]*mailroom.APIKey, string, error) {
	return nil, "", errors.New(`pq: syntax error at or near "secret_digest"`)
}

func TestInternalErrorRevealsNothing(t *testing.T) {
	e := newEnvWithStore(t, failingStore{storetest.SQLite.Open(t)})
	r := e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: e.admin, NoCheck: true})
	wantError(t, r, 500, mailroom.ECodeInternal)
	if strings.Contains(string(r.Body), "secret_digest") || strings.Contains(string(r.Body), "pq:") {
		t.Fatalf("internals leaked: %s", r.Body)
	}
	if !strings.Contains(r.Str("message"), r.Header.Get("X-Request-Id")) {
		t.Fatalf("the message should carry the request id: %s", r.Body)
	}
}

func TestReadyzFollowsStorage(t *testing.T) {
	store := storetest.SQLite.Open(t)
	e := newEnvWithStore(t, store)
	store.Close()
	r := e.Do(apitest.Request{Method: "GET", Path: "/readyz"})
	wantError(t, r, 503, mailroom.ECodeUnavailable)
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("503 without Retry-After")
	}
}
