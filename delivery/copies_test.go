package delivery_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-msgauth/dkim"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/unsubscribe"
)

// TestMarketingIsDeliveredOneCopyPerRecipient: marketing mail is composed
// and its content read once, but each recipient gets a transaction and a
// copy of its own, whose RFC 8058 link names that recipient and whose DKIM
// signature covers the link (h= names both fields) and verifies against
// the published key. A second preparation of a copy gives the very bytes
// that were sent (a retry sends them again). Transactional mail to the
// same recipients is one transaction per domain, without the pair.
func TestMarketingIsDeliveredOneCopyPerRecipient(t *testing.T) {
	w := newWorld(t, storetest.SQLite.Open(t))
	w.mailDomain("a.example")
	w.mailDomain("b.example")
	composer := &countingComposer{Composer: realComposer()}
	store := &countingStore{MessageStore: w.store}
	d, transport := newDeliverer(store, w.domains, composer, w.dns.Addr(), w.mx.Port())
	defer transport.Close()

	to := []string{"ann@a.example", "bob@a.example", "carol@b.example"}
	marketing := string(mailroom.CategoryMarketing)
	id := w.send(t, time.Now(), &mailroom.SendRequest{
		From: "News <news@" + sendingDomain + ">", To: to, Subject: "Our autumn sale", Text: "20% off.", Category: &marketing,
	})
	if n := deliverAll(t, d); n != len(to) {
		t.Fatalf("claimed %d recipients, want %d", n, len(to))
	}
	got := w.mx.WaitMessages(t, len(to), 10*time.Second)
	if len(got) != len(to) {
		t.Fatalf("received %d transactions, want one per recipient (%d)", len(got), len(to))
	}
	if n := composer.calls.Load(); n != 1 {
		t.Errorf("composed %d times, want once", n)
	}
	if n := store.contentReads.Load(); n != 1 {
		t.Errorf("read the content %d times, want once", n)
	}
	received := map[string][]byte{}
	for _, m := range got {
		if len(m.Rcpts) != 1 {
			t.Fatalf("a transaction of marketing mail has recipients %v, want one", m.Rcpts)
		}
		rcpt := m.Rcpts[0]
		received[rcpt] = m.Data
		if !strings.HasPrefix(m.MailFrom, "b2-") || !strings.HasSuffix(m.MailFrom, "@bounces."+sendingDomain) {
			t.Errorf("envelope sender %q", m.MailFrom)
		}
		h, err := mail.CreateReader(bytes.NewReader(m.Data))
		if err != nil {
			t.Fatal(err)
		}
		link := h.Header.Get("List-Unsubscribe")
		if h.Header.Get("List-Unsubscribe-Post") != unsubscribe.OneClick {
			t.Errorf("%s: List-Unsubscribe-Post %q", rcpt, h.Header.Get("List-Unsubscribe-Post"))
		}
		url, mailto, ok := strings.Cut(link, ", ")
		prefix := "<https://" + serviceHost + "/v1/unsubscribe/"
		if !ok || !strings.HasPrefix(url, prefix) || !strings.HasPrefix(mailto, "<mailto:unsubscribe-") ||
			!strings.HasSuffix(mailto, "@bounces."+sendingDomain+">") {
			t.Fatalf("%s: List-Unsubscribe %q", rcpt, link)
		}
		u, err := unsubscribeTokens.Open(strings.TrimSuffix(strings.TrimPrefix(url, prefix), ">"))
		if err != nil || u != (mailroom.Unsubscribe{AccountID: w.acct.ID, MessageID: id, Address: rcpt}) {
			t.Errorf("%s: the link names %+v (%v)", rcpt, u, err)
		}
		v, err := dkim.VerifyWithOptions(bytes.NewReader(m.Data), &dkim.VerifyOptions{
			LookupTXT: func(name string) ([]string, error) { return lookupTXT(w.dns.Addr(), name) },
		})
		if err != nil || len(v) != 1 || v[0].Err != nil || v[0].Domain != sendingDomain {
			t.Fatalf("%s: DKIM: %v %+v", rcpt, err, v)
		}
		if !slices.Contains(v[0].HeaderKeys, "List-Unsubscribe") || !slices.Contains(v[0].HeaderKeys, "List-Unsubscribe-Post") {
			t.Errorf("%s: h= %v does not name the unsubscribe pair", rcpt, v[0].HeaderKeys)
		}
	}
	if len(received) != len(to) {
		t.Fatalf("received copies for %d recipients, want %d", len(received), len(to))
	}
	signed, err := d.Signer.Signed(context.Background(), &mailroom.MessageSummary{ID: id, AccountID: w.acct.ID, Domain: sendingDomain})
	if err != nil {
		t.Fatal(err)
	}
	if again, err := signed.For("bob@a.example"); err != nil || !bytes.Equal(again, received["bob@a.example"]) {
		t.Errorf("bob's copy made again differs from the one sent (%v)", err)
	}

	// Transactional mail to the same recipients: as before.
	w.send(t, time.Now(), &mailroom.SendRequest{From: "orders@" + sendingDomain, To: to, Subject: "Receipt", Text: "Thanks."})
	deliverAll(t, d)
	all := w.mx.WaitMessages(t, len(to)+2, 10*time.Second)
	if len(all) != len(to)+2 {
		t.Fatalf("transactional mail went out in %d transactions, want one per domain", len(all)-len(to))
	}
	for _, m := range all[len(to):] {
		if bytes.Contains(m.Data, []byte("List-Unsubscribe")) {
			t.Errorf("transactional mail to %v carries List-Unsubscribe", m.Rcpts)
		}
	}
}
