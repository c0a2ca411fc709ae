package submission_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apikey"
	"github.com/mailroom/mailroom/compose"
	"github.com/mailroom/mailroom/domain"
	"github.com/mailroom/mailroom/membudget"
	"github.com/mailroom/mailroom/sealer"
	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
	"github.com/mailroom/mailroom/sqlstore"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/submission"
)

// memoryWorld is SMTP submission as `mailroom serve` wires it, with the
// node's memory budget: the real Service over a real store, the real
// signer, two accounts with a verified domain and a send key each, and
// the submission server taking from budget (nil: no budget).
type memoryWorld struct {
	store    *sqlstore.Store
	ts       *testServer
	budget   *membudget.Budget
	registry *prometheus.Registry
	// acme sends from shop.example, other from other.example.
	acme, other         *mailroom.Account
	acmeKey, otherKey   string
	acmeFrom, otherFrom string
}

func newMemoryWorld(t testing.TB, e storetest.Engine, budget *membudget.Budget) *memoryWorld {
	t.Helper()
	ctx := context.Background()
	w := &memoryWorld{store: e.Open(t), budget: budget, registry: prometheus.NewRegistry(),
		acmeFrom: "orders@shop.example", otherFrom: "news@other.example"}
	seal, err := sealer.New([]byte(rand.Text() + rand.Text())[:sealer.KeySize])
	if err != nil {
		t.Fatal(err)
	}
	domains := &domain.Service{Store: w.store, Sealer: seal, Settings: mailroom.DefaultRecordSettings("mail.mailroom.test"),
		Now: time.Now, Log: slog.New(slog.DiscardHandler)}
	account := func(name, domainName string) (*mailroom.Account, string) {
		a := storetest.NewAccount(t, w.store, name)
		// Verified from the start, as the sandbox domain is.
		if _, err := domains.AddSandbox(ctx, a.ID, domainName); err != nil {
			t.Fatal(err)
		}
		password, key := mailroom.NewAPIKey(a.ID, "smtp", mailroom.Scopes{mailroom.ScopeSend}, time.Now())
		if err := w.store.CreateAPIKey(ctx, key); err != nil {
			t.Fatal(err)
		}
		return a, password
	}
	w.acme, w.acmeKey = account("acme", "shop.example")
	w.other, w.otherKey = account("other", "other.example")
	svc := &submission.Service{
		Auth:  &apikey.Authenticator{Keys: w.store, Now: time.Now},
		Store: w.store, Domains: domains, Signer: compose.Composer{}, Now: time.Now,
	}
	w.ts = startServer(t, func(s *submission.Server) {
		s.Handler = svc
		s.Memory = budget
		s.MemoryRefusals = membudget.Metrics(w.registry, budget)
	})
	return w
}

// largeMessage is a message from from of about size bytes: a short text
// part and, filling the rest, an attachment in base64 lines of 76
// characters, as mail clients write it.
func largeMessage(from string, size int) []byte {
	raw := make([]byte, (size-1024)/78*57)
	_, _ = rand.Read(raw)
	enc := base64.StdEncoding.EncodeToString(raw)
	var b strings.Builder
	b.Grow(size)
	b.WriteString("From: Shop <" + from + ">\r\nTo: ann@x.example\r\nSubject: Your report\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n" +
		"--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nYour report is attached.\r\n" +
		"--b1\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n" +
		"Content-Disposition: attachment; filename=\"report.bin\"\r\n\r\n")
	for len(enc) > 0 {
		n := min(76, len(enc))
		b.WriteString(enc[:n] + "\r\n")
		enc = enc[n:]
	}
	b.WriteString("--b1--\r\n")
	return []byte(b.String())
}

// textMessage is a plain text message from from of exactly size bytes.
func textMessage(from string, size int) []byte {
	header := "From: Shop <" + from + ">\r\nTo: ann@x.example\r\nSubject: Your statement\r\n\r\n"
	return smtpservertest.MessageOfSize(header, size)
}
