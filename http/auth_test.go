package http_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/storetest"
)

func TestAuthentication(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		list := func(h map[string]string, path string) *apitest.Response {
			return e.Do(apitest.Request{Method: "GET", Path: path, Header: h})
		}

		t.Run("no key, or a key anywhere but the bearer header, is missing_api_key", func(t *testing.T) {
			for name, h := range map[string]map[string]string{
				"none":   nil,
				"basic":  {"Authorization": "Basic " + e.admin},
				"empty":  {"Authorization": "Bearer "},
				"cookie": {"Cookie": "api_key=" + e.admin},
			} {
				r := list(h, "/v1/api-keys")
				wantError(t, r, 401, mailroom.ECodeMissingAPIKey)
				if r.Header.Get("WWW-Authenticate") == "" {
					t.Errorf("%s: 401 without WWW-Authenticate", name)
				}
			}
			wantError(t, list(nil, "/v1/api-keys?api_key="+e.admin), 401, mailroom.ECodeMissingAPIKey)
		})

		t.Run("malformed, unknown and wrong keys answer one identical body", func(t *testing.T) {
			keyID, secret, _ := mailroom.ParseAPIKey(e.admin)
			// A well-formed key (valid checksum) for an id that does not exist.
			unknown, _ := mailroom.NewAPIKey(e.acct.ID, "never stored", mailroom.Scopes{mailroom.ScopeKeys}, time.Now())
			// The right id with another well-formed secret.
			other, _ := mailroom.NewAPIKey(e.acct.ID, "x", mailroom.Scopes{mailroom.ScopeKeys}, time.Now())
			_, otherSecret, _ := mailroom.ParseAPIKey(other)
			wrong := "mailroom_" + keyID + "_" + otherSecret
			badChecksum := "mailroom_" + keyID + "_" + secret[:42] + flip(secret[42])

			var bodies [][]byte
			for _, k := range []string{unknown, wrong, badChecksum, "mailroom_short", "not-a-key"} {
				r := e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: k})
				wantError(t, r, 401, mailroom.ECodeInvalidAPIKey)
				bodies = append(bodies, r.Body)
			}
			for i := 1; i < len(bodies); i++ {
				if !bytes.Equal(bodies[0], bodies[i]) {
					t.Fatalf("bodies differ:\n%s\n%s", bodies[0], bodies[i])
				}
			}
		})

		t.Run("scope is checked after the key", func(t *testing.T) {
			sendOnly := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeSend})
			r := e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: sendOnly})
			wantError(t, r, 403, mailroom.ECodeInsufficientScope)
		})

		t.Run("revocation takes effect on the next request of a kept-alive connection", func(t *testing.T) {
			k := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeKeys})
			keyID, _, _ := mailroom.ParseAPIKey(k)
			if r := e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: k}); r.Status != 200 {
				t.Fatalf("before revocation: %d %s", r.Status, r.Body)
			}
			if _, err := e.store.RevokeAPIKey(context.Background(), e.acct.ID, keyID, time.Now()); err != nil {
				t.Fatal(err)
			}
			wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: k}), 401, mailroom.ECodeAPIKeyRevoked)
			// Revoked is only said to a holder of the real secret.
			_, otherSecret, _ := mailroom.ParseAPIKey(e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeKeys}))
			wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: "mailroom_" + keyID + "_" + otherSecret}),
				401, mailroom.ECodeInvalidAPIKey)
		})

		t.Run("fifty clients at once with good, revoked and wrong keys", func(t *testing.T) {
			good := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeKeys})
			revoked := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeKeys})
			rid, _, _ := mailroom.ParseAPIKey(revoked)
			if _, err := e.store.RevokeAPIKey(context.Background(), e.acct.ID, rid, time.Now()); err != nil {
				t.Fatal(err)
			}
			noScope := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeSend})
			wrong, _ := mailroom.NewAPIKey(e.acct.ID, "x", mailroom.Scopes{mailroom.ScopeKeys}, time.Now())
			cases := []struct {
				key    string
				status int
				code   string
			}{{good, 200, ""}, {revoked, 401, mailroom.ECodeAPIKeyRevoked}, {noScope, 403, mailroom.ECodeInsufficientScope},
				{wrong, 401, mailroom.ECodeInvalidAPIKey}, {"", 401, mailroom.ECodeMissingAPIKey}}
			var wg sync.WaitGroup
			errs := make(chan string, 50*4)
			for i := range 50 {
				wg.Go(func() {
					for j := range 4 {
						c := cases[(i+j)%len(cases)]
						r := e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: c.key})
						if r.Status != c.status || r.Code() != c.code {
							errs <- strings.Join([]string{c.code, "got", r.Code(), string(r.Body)}, " ")
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for msg := range errs {
				t.Error(msg)
			}
		})

		t.Run("lastUsedAt is recorded without a write per request", func(t *testing.T) {
			k := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeKeys})
			keyID, _, _ := mailroom.ParseAPIKey(k)
			for range 3 {
				e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: k})
			}
			stored, _ := e.store.APIKey(context.Background(), keyID)
			if stored.LastUsedAt != nil {
				t.Fatalf("lastUsedAt written on the request path: %v", stored.LastUsedAt)
			}
			if err := e.usage.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			r := e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys/" + keyID, Key: e.admin})
			if r.Map()["lastUsedAt"] == nil {
				t.Fatalf("lastUsedAt still null after a flush: %s", r.Body)
			}
		})
	})
}

func flip(c byte) string {
	if c == 'a' {
		return "b"
	}
	return "a"
}
