package http_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/storetest"
)

// env is one API server over real TLS on a real store, with an account
// "acme" whose admin key holds every scope.
type env struct {
	*apitest.Client
	store mailroom.Store
	usage *mailroom.KeyUsage
	acct  *mailroom.Account
	admin string // full key with every scope
}

func newEnv(t *testing.T, e storetest.Engine) *env {
	return newEnvWithStore(t, e.Open(t))
}

func newEnvWithStore(t *testing.T, store mailroom.Store) *env {
	t.Helper()
	usage := mailroom.NewKeyUsage(store, slog.Default())
	srv := &mhttp.Server{
		Store: store,
		Auth:  &mailroom.Authenticator{Keys: store, Usage: usage, Now: time.Now},
		Log:   slog.New(slog.DiscardHandler),
	}
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)
	c := apitest.New(t, ts.URL, nil)
	c.HTTP = ts.Client()
	c.HTTP.Timeout = 30 * time.Second

	acct := storetest.NewAccount(t, store, "acme")
	ev := &env{Client: c, store: store, usage: usage, acct: acct}
	ev.admin = ev.newKey(t, acct, mailroom.Scopes(mailroom.AllScopes))
	return ev
}

// newKey stores a key for acct and returns the full key.
func (e *env) newKey(t *testing.T, acct *mailroom.Account, scopes mailroom.Scopes) string {
	t.Helper()
	full, k := mailroom.NewAPIKey(acct.ID, "test", scopes, time.Now())
	if err := e.store.CreateAPIKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	return full
}

func wantError(t *testing.T, r *apitest.Response, status int, code string) {
	t.Helper()
	if r.Status != status || r.Code() != code {
		t.Fatalf("got %d %s, want %d %s; body %s", r.Status, r.Code(), status, code, r.Body)
	}
	if r.Str("message") == "" {
		t.Fatalf("error without a message: %s", r.Body)
	}
}
