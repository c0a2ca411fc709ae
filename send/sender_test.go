package send_test

import (
	"context"
	"crypto/rand"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/domain"
	"github.com/mailroom/mailroom/sealer"
	"github.com/mailroom/mailroom/send"
	"github.com/mailroom/mailroom/storetest"
)

// A key restricted to one sending domain sends from it alone, though its
// account has verified others: a send from another is refused as a From
// domain the key may not use, one item of a batch is refused on its own,
// and nothing refused is stored.
func TestKeyRestrictedToDomain(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		store := e.Open(t)
		acct := storetest.NewAccount(t, store, "acme")
		seal, err := sealer.New([]byte(rand.Text() + rand.Text())[:32])
		if err != nil {
			t.Fatal(err)
		}
		domains := &domain.Service{Store: store, Sealer: seal, Settings: mailroom.DefaultRecordSettings("mail.mailroom.test"),
			Now: time.Now, Log: slog.New(slog.DiscardHandler)}
		for _, name := range []string{"shop.example", "news.example"} {
			if _, err := domains.AddSandbox(ctx, acct.ID, name); err != nil {
				t.Fatal(err)
			}
		}
		sender := &send.Sender{Store: store, Domains: domains, Now: time.Now}
		restricted := &mailroom.APIKey{AccountID: acct.ID, Scopes: mailroom.Scopes{mailroom.ScopeSend}, Domain: "shop.example"}
		req := func(from string) *mailroom.SendRequest {
			return &mailroom.SendRequest{From: from, To: mailroom.AddressList{"ann@x.example"}, Subject: "Hi", Text: "Hi."}
		}

		if _, err := sender.Send(ctx, restricted, req("Shop <orders@shop.example>"), nil); err != nil {
			t.Fatalf("from its own domain: %v", err)
		}
		_, err = sender.Send(ctx, restricted, req("news@news.example"), nil)
		if !mailroom.IsCode(err, mailroom.ECodeDomainNotVerified) || !strings.Contains(err.Error(), "may send from shop.example only") {
			t.Fatalf("from another verified domain: %v", err)
		}
		out, err := sender.SendBatch(ctx, restricted, []send.BatchItem{{Request: req("orders@shop.example")}, {Request: req("news@news.example")}})
		if err != nil || out[0].Err != nil || !mailroom.IsCode(out[1].Err, mailroom.ECodeDomainNotVerified) {
			t.Fatalf("batch: %v %+v", err, out)
		}
		// The account's unrestricted keys send from either.
		if _, err := sender.Send(ctx, &mailroom.APIKey{AccountID: acct.ID}, req("news@news.example"), nil); err != nil {
			t.Fatalf("unrestricted key: %v", err)
		}
		list, _, err := store.ListMessages(ctx, acct.ID, mailroom.MessageFilter{}, mailroom.Page{Limit: 10})
		if err != nil || len(list) != 3 {
			t.Fatalf("stored %d messages, want 3: %v", len(list), err)
		}
	})
}
