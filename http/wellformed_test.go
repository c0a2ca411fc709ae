package http_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/storetest"
)

// NUL or invalid UTF-8 in a path or a query, a query net/url would drop in
// part, and a cursor changed by hand answer the contract's 4xx on both
// engines: PostgreSQL refuses such text in a query, which answered 500.
func TestRequestLineIsWellFormed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		for range 3 {
			e.sendOne(t, "ann@example.net")
		}
		get := func(path string) (int, string, string) {
			t.Helper()
			req, err := http.NewRequest("GET", e.Base+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+e.admin)
			resp, err := e.HTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var got struct{ Error string }
			_ = json.Unmarshal(body, &got)
			return resp.StatusCode, got.Error, string(body)
		}
		for path, want := range map[string]int{
			"/v1/messages?tag=a%00:1":                        400,
			"/v1/messages?tag=a%ff:1":                        400,
			"/v1/messages?tag=a:%ff":                         400,
			"/v1/messages?tag=a:1;":                          400,
			"/v1/messages?status=bogus;":                     400,
			"/v1/messages?to=a%zz":                           400,
			"/v1/domains/a%00.com":                           404,
			"/v1/domains/%ff.com":                            404,
			"/v1/messages/msg_%ff":                           404,
			"/v1/messages/msg_%00/raw":                       404,
			"/v1/suppressions/a%00@x.example":                404,
			"/v1/api-keys?cursor=" + strings.Repeat("A", 12): 400,
		} {
			status, code, body := get(path)
			if status != want || code == "" || code == mailroom.ECodeInternal {
				t.Errorf("GET %s: %d %s, want %d", path, status, body, want)
			}
		}
		// A cursor edited after its digest is refused, not read as another
		// position or as the end of the list.
		r := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages?limit=1", Key: e.admin})
		cursor := r.Map()["nextCursor"].(string)
		last := byte('A')
		if cursor[len(cursor)-1] == 'A' {
			last = 'B'
		}
		edited := cursor[:len(cursor)-1] + string(last)
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/messages?limit=1&cursor=" + edited, Key: e.admin}), 400, mailroom.ECodeValidation)
	})
}

// A NUL written as \u0000 in a JSON string is valid JSON; wherever it may
// stand, it is refused with a 400 or stored, never a 500 on either engine.
func TestNULInBodiesIsNever500(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		for _, tc := range []struct{ path, body string }{
			{"/v1/send", sendBase + `, "to": "a@example.net", "html": "<p>a\u0000b</p>"}`},
			{"/v1/send", sendBase + `, "to": "a@example.net", "tags": {"k": "a\u0000b"}}`},
			{"/v1/send", sendBase + `, "to": "a@example.net", "headers": {"X-A": "a\u0000b"}}`},
			{"/v1/send", sendBase + `, "to": "a@example.net", "idempotencyKey": "a\u0000b"}`},
			{"/v1/send", sendBase + `, "to": "a@example.net", "attachments": [{"filename": "a\u0000b", "content": "QQ=="}]}`},
			{"/v1/suppressions", `{"address": "a\u0000@example.net"}`},
			{"/v1/domains", `{"name": "a\u0000.example"}`},
			{"/v1/api-keys", `{"name": "a\u0000", "scopes": ["send"]}`},
		} {
			r := e.Do(apitest.Request{Method: "POST", Path: tc.path, Key: e.admin, Body: tc.body})
			if r.Status >= 500 {
				t.Errorf("POST %s %s: %d %s", tc.path, tc.body, r.Status, r.Body)
			}
		}
	})
}
