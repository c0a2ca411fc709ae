package http_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/storetest"
)

// protoClients are real TLS clients trusting what base trusts: one that
// negotiates HTTP/2 by ALPN, one that offers only HTTP/1.1.
func protoClients(t *testing.T, base *http.Client) map[string]*http.Client {
	h2 := base.Transport.(*http.Transport).Clone()
	h2.ForceAttemptHTTP2 = true
	h1 := base.Transport.(*http.Transport).Clone()
	h1.TLSClientConfig.NextProtos = []string{"http/1.1"}
	h1.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	h1.ForceAttemptHTTP2 = false
	t.Cleanup(h2.CloseIdleConnections)
	t.Cleanup(h1.CloseIdleConnections)
	return map[string]*http.Client{
		"HTTP/2.0": {Transport: h2, Timeout: 30 * time.Second},
		"HTTP/1.1": {Transport: h1, Timeout: 30 * time.Second},
	}
}

// wantJSONError checks that a whole JSON error body arrived with resp.
func wantJSONError(t *testing.T, proto string, resp *http.Response, err error, status int, code string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", proto, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: the %d's body did not arrive: %v", proto, resp.StatusCode, err)
	}
	if resp.Proto != proto {
		t.Fatalf("negotiated %s, want %s", resp.Proto, proto)
	}
	var e struct{ Error, Message string }
	if resp.StatusCode != status || json.Unmarshal(body, &e) != nil || e.Error != code || e.Message == "" {
		t.Fatalf("%s: got %d %q, want %d %s", proto, resp.StatusCode, body, status, code)
	}
}

// A 413 ends an HTTP/1.1 connection (the rest of the body is not read),
// but its JSON body must reach the client over HTTP/1.1 and HTTP/2 alike.
func TestPayloadTooLargeBodyArrives(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	big := bytes.Repeat([]byte(" "), 17<<20)
	for proto, c := range protoClients(t, e.HTTP) {
		t.Run(proto, func(t *testing.T) {
			for _, path := range []string{"/v1/api-keys", "/v1/send"} {
				req, _ := http.NewRequest("POST", e.Base+path, bytes.NewReader(big))
				req.Header.Set("Authorization", "Bearer "+e.admin)
				req.Header.Set("Content-Type", "application/json")
				resp, err := c.Do(req)
				wantJSONError(t, proto, resp, err, 413, mailroom.ECodePayloadTooLarge)
			}
		})
	}
}

// A 429 does not read the body either; its JSON body arrives all the same.
func TestRateLimitedBodyArrives(t *testing.T) {
	store := storetest.SQLite.Open(t)
	_, key := newAccountKey(t, store, "acme", mailroom.Scopes(mailroom.AllScopes))
	if _, err := store.UpdateAccountLimits(context.Background(), "acme", 1, 1); err != nil {
		t.Fatal(err)
	}
	api := newLimitedAPI(t, store)
	if r := api.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: key}); r.Status != 200 {
		t.Fatalf("first request: %d %s", r.Status, r.Body)
	}
	body := bytes.Repeat([]byte(" "), 1<<20)
	for proto, c := range protoClients(t, api.HTTP) {
		t.Run(proto, func(t *testing.T) {
			req, _ := http.NewRequest("POST", api.ts.URL+"/v1/send", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.Do(req)
			wantJSONError(t, proto, resp, err, 429, mailroom.ECodeRateLimited)
		})
	}
}

// Over HTTP/2 a 413 resets its stream only: its body arrives and the
// connection goes on serving. Before, the 413 carried "Connection: close",
// which Go's server turns into a GOAWAY for the whole connection, and
// clients such as curl gave up before the body arrived (curl: (18)).
func TestPayloadTooLargeKeepsHTTP2Connection(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	u, _ := url.Parse(e.Base)
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A bound on a broken server, not a measure: the answers are immediate.
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	request := func(stream uint32, method, path string, fields ...string) {
		hb.Reset()
		fields = append([]string{":method", method, ":scheme", "https", ":authority", u.Host, ":path", path}, fields...)
		for i := 0; i < len(fields); i += 2 {
			_ = enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
		}
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: hb.Bytes(), EndHeaders: true, EndStream: method == "GET"}); err != nil {
			t.Fatal(err)
		}
	}
	// answer reads frames until stream's answer is whole.
	answer := func(stream uint32) (status string, body []byte) {
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				t.Fatalf("stream %d: no whole answer: %v", stream, err)
			}
			switch f := f.(type) {
			case *http2.GoAwayFrame:
				t.Fatalf("the server closes the connection (GOAWAY, last stream %d)", f.LastStreamID)
			case *http2.MetaHeadersFrame:
				if f.StreamID == stream {
					status = f.PseudoValue("status")
				}
			case *http2.DataFrame:
				if f.StreamID == stream {
					body = append(body, f.Data()...)
					if f.StreamEnded() {
						return status, body
					}
				}
			case *http2.RSTStreamFrame:
				if f.StreamID == stream && status == "" {
					t.Fatalf("stream %d reset before its answer", stream)
				}
			}
		}
	}
	request(1, "POST", "/v1/api-keys", "authorization", "Bearer "+e.admin, "content-type", "application/json", "content-length", strconv.Itoa(17<<20))
	if err := fr.WriteData(1, false, bytes.Repeat([]byte(" "), 16<<10)); err != nil {
		t.Fatal(err)
	}
	if status, body := answer(1); status != "413" || !strings.Contains(string(body), mailroom.ECodePayloadTooLarge) {
		t.Fatalf("got %s %s", status, body)
	}
	request(3, "GET", "/v1/api-keys", "authorization", "Bearer "+e.admin)
	if status, body := answer(3); status != "200" {
		t.Fatalf("the next request on the connection: %s %s", status, body)
	}
}

// A path that is not in canonical form answers the JSON 404, whatever the
// method: never ServeMux's 307 to the cleaned path, never HTML.
func TestNonCanonicalPathIsJSON404(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	noRedirect := *e.HTTP
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, path := range []string{"//v1/api-keys", "/v1//api-keys", "/v1/messages/../api-keys", "/v1/./api-keys",
		"/v1/api-keys/.", "/v1/api-keys/..", "/v1/%2e%2e/v1/api-keys", "//", "/v1/api-keys//"} {
		for _, method := range []string{"GET", "POST", "DELETE", "PUT"} {
			req, _ := http.NewRequest(method, e.Base+path, nil)
			req.URL.Opaque = "//" + req.URL.Host + path // send the path as it is, uncleaned
			req.Header.Set("Authorization", "Bearer "+e.admin)
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var got struct{ Error string }
			if resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &got) != nil || got.Error != mailroom.ECodeNotFound {
				t.Errorf("%s %s: %d %s %s (Location %q)", method, path, resp.StatusCode, resp.Header.Get("Content-Type"), body, resp.Header.Get("Location"))
			}
		}
	}
	// The canonical routes, with a key, and the JSON 405, are untouched.
	if r := e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: e.admin}); r.Status != 200 {
		t.Fatalf("GET /v1/api-keys: %d %s", r.Status, r.Body)
	}
	if r := e.Do(apitest.Request{Method: "GET", Path: "/v1/suppressions/a.b@x.example", Key: e.admin}); r.Status != 404 || r.Code() != mailroom.ECodeNotFound {
		t.Fatalf("a dotted segment is not a dot segment: %d %s", r.Status, r.Body)
	}
	wantError(t, e.Do(apitest.Request{Method: "PUT", Path: "/v1/api-keys", Key: e.admin}), 405, mailroom.ECodeMethodNotAllowed)

	// A slash escaped inside a segment is part of it: an address with two
	// slashes, which a bounce may suppress, can be read and deleted.
	const odd = "a//b@x.example"
	if r := e.Do(apitest.Request{Method: "POST", Path: "/v1/suppressions", Key: e.admin, Body: map[string]any{"address": odd}}); r.Status != 201 {
		t.Fatalf("suppress %s: %d %s", odd, r.Status, r.Body)
	}
	escaped := "/v1/suppressions/" + url.PathEscape(odd)
	if r := e.Do(apitest.Request{Method: "GET", Path: escaped, Key: e.admin}); r.Status != 200 || r.Str("address") != odd {
		t.Fatalf("GET %s: %d %s", escaped, r.Status, r.Body)
	}
	if r := e.Do(apitest.Request{Method: "DELETE", Path: escaped, Key: e.admin}); r.Status != 204 {
		t.Fatalf("DELETE %s: %d %s", escaped, r.Status, r.Body)
	}
}

// Two Authorization headers answer 401 invalid_api_key, whichever comes
// first: the field is not a list (RFC 9110 §5.3), so neither is chosen.
func TestTwoAuthorizationHeaders(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	for proto, c := range protoClients(t, e.HTTP) {
		for _, pair := range [][2]string{{e.admin, "not-a-key"}, {"not-a-key", e.admin}, {e.admin, e.admin}, {e.admin, ""}} {
			req, _ := http.NewRequest("GET", e.Base+"/v1/api-keys", nil)
			req.Header.Add("Authorization", "Bearer "+pair[0])
			req.Header.Add("Authorization", "Bearer "+pair[1])
			resp, err := c.Do(req)
			wantJSONError(t, proto, resp, err, 401, mailroom.ECodeInvalidAPIKey)
			if resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: 401 without WWW-Authenticate", proto)
			}
		}
	}
}

// Key names refuse control characters and invisible format characters
// (bidi overrides and isolates, marks, zero-width characters).
func TestKeyNameRefusesInvisibleCharacters(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	for _, name := range []string{"invoice\u202egpj.exe", "\u2066admin\u2069", "mark\u200f", "zero\u200bwidth", "c1\u0085", "tab\tname"} {
		r := e.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Key: e.admin, Body: map[string]any{"name": name, "scopes": []string{"send"}}})
		wantError(t, r, 400, mailroom.ECodeValidation)
		if !strings.Contains(string(r.Body), `"field":"name"`) {
			t.Errorf("%q: field not named: %s", name, r.Body)
		}
	}
	if r := e.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Key: e.admin, Body: map[string]any{"name": "Clé ✉ مفتاح", "scopes": []string{"send"}}}); r.Status != 201 {
		t.Fatalf("a plain name in any script: %d %s", r.Status, r.Body)
	}
}

// logMessages stores n messages of e's account straight in the store, one
// second apart, from Orders@Shop.example, tagged kind:receipt and order:<i>.
func logMessages(t *testing.T, e *env, n int) {
	t.Helper()
	at := time.Now().UTC().Add(-time.Hour)
	for i := range n {
		m := storetest.NewMessage(e.acct, at.Add(time.Duration(i)*time.Second), "r@x.example")
		m.From.Address = "Orders@Shop.example"
		m.Tags = map[string]string{"kind": "receipt", "order": strconv.Itoa(i % 2)}
		if _, err := e.store.AcceptMessage(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
}

func listCount(t *testing.T, e *env, path string) (int, string) {
	t.Helper()
	r := e.Do(apitest.Request{Method: "GET", Path: path, Key: e.admin})
	if r.Status != 200 {
		t.Fatalf("%s: %d %s", path, r.Status, r.Body)
	}
	next, _ := r.Map()["nextCursor"].(string)
	return len(r.Map()["data"].([]any)), next
}

func wantCursorRefused(t *testing.T, e *env, path string) {
	t.Helper()
	r := e.Do(apitest.Request{Method: "GET", Path: path, Key: e.admin})
	wantError(t, r, 400, mailroom.ECodeValidation)
	if !strings.Contains(string(r.Body), `"field":"cursor"`) {
		t.Fatalf("%s: the cursor is not named: %s", path, r.Body)
	}
}

// A cursor pages the list, and the filters, it came from: anywhere else it
// is 400 validation_error on cursor.
func TestCursorsAreBoundToTheirList(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		logMessages(t, e, 4)
		e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeSend})
		for _, a := range []string{"a@x.example", "b@x.example"} {
			if r := e.Do(apitest.Request{Method: "POST", Path: "/v1/suppressions", Key: e.admin, Body: map[string]any{"address": a}}); r.Status/100 != 2 {
				t.Fatalf("suppress: %d %s", r.Status, r.Body)
			}
		}

		_, keys := listCount(t, e, "/v1/api-keys?limit=1")
		_, msgs := listCount(t, e, "/v1/messages?limit=1")
		_, tagged := listCount(t, e, "/v1/messages?limit=1&tag=kind:receipt&from=orders@shop.example")
		if keys == "" || msgs == "" || tagged == "" {
			t.Fatal("a first page without a next cursor")
		}
		for _, path := range []string{
			"/v1/suppressions?cursor=" + keys, "/v1/domains?cursor=" + keys, "/v1/messages?cursor=" + keys,
			"/v1/api-keys?cursor=" + msgs, "/v1/suppressions?cursor=" + msgs,
			// The log's cursor under other filters, or none.
			"/v1/messages?cursor=" + tagged, "/v1/messages?tag=kind:receipt&cursor=" + tagged,
			"/v1/messages?tag=kind:receipt&tag=order:1&from=orders@shop.example&cursor=" + tagged,
			"/v1/messages?status=queued&cursor=" + msgs,
		} {
			wantCursorRefused(t, e, path)
		}
		// Where it came from, it pages on: another limit is not another
		// list, and the filters may be written in another case or order.
		if n, _ := listCount(t, e, "/v1/api-keys?limit=5&cursor="+keys); n != 1 {
			t.Fatalf("api-keys, second page: %d keys, want 1", n)
		}
		if n, _ := listCount(t, e, "/v1/messages?limit=10&cursor="+msgs); n != 3 {
			t.Fatalf("messages, second page: %d, want 3", n)
		}
		if n, _ := listCount(t, e, "/v1/messages?limit=10&from=ORDERS@shop.example&tag=kind:receipt&cursor="+tagged); n != 3 {
			t.Fatalf("filtered messages, second page: %d, want 3", n)
		}
		_, sup := listCount(t, e, "/v1/suppressions?limit=1")
		if n, _ := listCount(t, e, "/v1/suppressions?cursor="+sup); n != 1 {
			t.Fatalf("suppressions, second page: %d, want 1", n)
		}
		wantCursorRefused(t, e, "/v1/api-keys?cursor="+sup)
		// A cursor stays good while new items arrive, and shows none of them.
		logMessages(t, e, 1)
		if n, _ := listCount(t, e, "/v1/messages?limit=10&cursor="+msgs); n != 4 {
			t.Fatalf("messages, second page after a new one: %d, want 4 (older ones only)", n)
		}
	})
}

// ?from= and ?to= ignore case alike; repeated tag= filters must all match,
// up to 10 of them.
func TestLogFilters(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		logMessages(t, e, 4)
		for path, want := range map[string]int{
			"/v1/messages?from=orders@shop.example":                            4,
			"/v1/messages?from=ORDERS@SHOP.EXAMPLE":                            4,
			"/v1/messages?from=Orders@Shop.example":                            4,
			"/v1/messages?to=R@X.EXAMPLE":                                      4,
			"/v1/messages?tag=kind:receipt":                                    4,
			"/v1/messages?tag=kind:receipt&tag=order:1":                        2,
			"/v1/messages?tag=order:1&tag=order:0":                             0,
			"/v1/messages?tag=kind:receipt&tag=order:1&tag=order:1":            2,
			"/v1/messages?tag=kind:alert&tag=order:1":                          0,
			"/v1/messages?from=orders@shop.example&to=r@x.example&tag=order:0": 2,
		} {
			if n, _ := listCount(t, e, path); n != want {
				t.Errorf("%s: %d messages, want %d", path, n, want)
			}
		}
		tags := strings.Repeat("tag=k:v&", mailroom.MaxTagFilters)
		if n, _ := listCount(t, e, "/v1/messages?"+tags); n != 0 {
			t.Fatalf("%d tag filters: %d messages", mailroom.MaxTagFilters, n)
		}
		r := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages?" + tags + "tag=kind:receipt", Key: e.admin})
		wantError(t, r, 400, mailroom.ECodeValidation)
		if !strings.Contains(string(r.Body), `"field":"tag"`) {
			t.Fatalf("the tag field is not named: %s", r.Body)
		}
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/messages?tag=kind:receipt&tag=nocolon", Key: e.admin}), 400, mailroom.ECodeValidation)
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/messages?tag=a%20b:1", Key: e.admin}), 400, mailroom.ECodeValidation)

		// Any other parameter has one meaning only: given twice, it is refused,
		// never "the first one wins".
		for _, q := range []string{"status=delivered&status=deferred", "from=a@x.example&from=b@x.example",
			"limit=5&limit=50", "cursor=&cursor=x", "since=2026-01-01T00:00:00Z&since=2027-01-01T00:00:00Z"} {
			r := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages?" + q, Key: e.admin})
			wantError(t, r, 400, mailroom.ECodeValidation)
			if name, _, _ := strings.Cut(q, "="); !hasField(r, name) {
				t.Fatalf("%s: the parameter is not named: %s", q, r.Body)
			}
		}
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys?limit=1&limit=2", Key: e.admin}), 400, mailroom.ECodeValidation)
	})
}
