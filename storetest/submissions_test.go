package storetest_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/textproto"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-msgauth/dkim"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apikey"
	"github.com/mailroom/mailroom/compose"
	"github.com/mailroom/mailroom/delivery"
	"github.com/mailroom/mailroom/domain"
	"github.com/mailroom/mailroom/emaillog"
	"github.com/mailroom/mailroom/sealer"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/submission"
)

// submissionWorld is SMTP submission's service (docs/api.md "SMTP
// submission") over a real store, with the real signer and domain keys,
// as `mailroom serve` wires it but without the SMTP server.
type submissionWorld struct {
	store   mailroom.Store
	domains *domain.Service
	svc     *submission.Service
	acct    *mailroom.Account
	key     *mailroom.APIKey
	// shop is the verified sending domain.
	shop *mailroom.Domain
}

func newSubmissionWorld(t *testing.T, e storetest.Engine) *submissionWorld {
	t.Helper()
	ctx := context.Background()
	store := e.Open(t)
	seal, err := sealer.New([]byte(rand.Text() + rand.Text())[:32])
	if err != nil {
		t.Fatal(err)
	}
	w := &submissionWorld{store: store, acct: storetest.NewAccount(t, store, "acme")}
	w.domains = &domain.Service{Store: store, Sealer: seal, Settings: mailroom.DefaultRecordSettings("mail.mailroom.test"),
		Now: time.Now, Log: slog.New(slog.DiscardHandler)}
	// Verified from the start, as the sandbox domain is; a DNS check is
	// the domain service's business, tested on its own.
	if w.shop, err = w.domains.AddSandbox(ctx, w.acct.ID, "shop.example"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.domains.Add(ctx, w.acct.ID, "pending.example"); err != nil {
		t.Fatal(err)
	}
	var full string
	full, w.key = mailroom.NewAPIKey(w.acct.ID, "smtp", mailroom.Scopes{mailroom.ScopeSend}, time.Now())
	if err := store.CreateAPIKey(ctx, w.key); err != nil {
		t.Fatal(err)
	}
	w.svc = &submission.Service{
		Auth:  &apikey.Authenticator{Keys: store, Now: time.Now},
		Store: store, Domains: w.domains, Signer: compose.Composer{}, Now: time.Now,
	}
	if w.key, err = w.svc.Authenticate(ctx, full); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *submissionWorld) submit(mailFrom string, rcpts []string, raw string) (string, error) {
	return w.svc.Submit(context.Background(), w.key, submission.Envelope{MailFrom: mailFrom, Rcpts: rcpts}, strings.NewReader(raw))
}

// verifyDKIM checks raw's signature as a receiver would, against the
// domain's published key.
func (w *submissionWorld) verifyDKIM(t *testing.T, raw []byte) {
	t.Helper()
	record := mailroom.DKIMRecordValue(w.shop.DKIMPublicKey)
	vs, err := dkim.VerifyWithOptions(bytes.NewReader(raw), &dkim.VerifyOptions{LookupTXT: func(name string) ([]string, error) {
		if name == w.shop.DKIMSelector+"._domainkey.shop.example" {
			return []string{record}, nil
		}
		return nil, fmt.Errorf("no TXT record at %s", name)
	}})
	if err != nil || len(vs) != 1 || vs[0].Err != nil || vs[0].Domain != "shop.example" {
		t.Fatalf("DKIM: %v %+v", err, vs)
	}
}

const submittedBody = "Hello Ann,  \r\n.leading dot\r\n\r\n\xe2\x82\xac 8-bit\r\n"

// A submitted message is in the log under the id Submit returned, with
// the envelope recipients (the Bcc'd one among them, its header gone),
// and its stored bytes, which delivery sends and the log's raw view
// shows, are the message signed by its From domain.
func TestSubmissionAccepted(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newSubmissionWorld(t, e)
		ctx := context.Background()
		if _, err := w.store.AddSuppression(ctx, &mailroom.Suppression{AccountID: w.acct.ID, Address: "gone@x.example",
			Reason: mailroom.SuppressedHardBounce, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		raw := "From: Shop <orders@shop.example>\r\nTo: Ann <ann@x.example>\r\nBcc: bob@y.example\r\n" +
			"Subject: Your receipt\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + submittedBody
		id, err := w.submit("bounce@shop.example", []string{"ann@x.example", "bob@y.example", "gone@x.example"}, raw)
		if err != nil {
			t.Fatal(err)
		}

		m, events, err := w.store.Message(ctx, w.acct.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != mailroom.MessageQueued || m.Subject != "Your receipt" || m.From.Address != "orders@shop.example" ||
			m.Category != mailroom.CategoryTransactional || m.Domain != "shop.example" {
			t.Fatalf("logged message %+v", m)
		}
		var rcpts []string
		for _, r := range m.Recipients {
			rcpts = append(rcpts, fmt.Sprintf("%s:%s:%s", r.Kind, r.Address, r.Status))
		}
		if want := []string{"to:ann@x.example:queued", "bcc:bob@y.example:queued", "bcc:gone@x.example:suppressed"}; !slices.Equal(rcpts, want) {
			t.Fatalf("recipients %v, want %v", rcpts, want)
		}
		var types []string
		for _, ev := range events {
			types = append(types, ev.Type+":"+ev.Recipient)
		}
		slices.Sort(types)
		if want := []string{"email.queued:ann@x.example", "email.queued:bob@y.example", "email.suppressed:gone@x.example"}; !slices.Equal(types, want) {
			t.Fatalf("events %v, want %v", types, want)
		}
		list, _, err := w.store.ListMessages(ctx, w.acct.ID, mailroom.MessageFilter{To: "bob@y.example"}, mailroom.Page{Limit: 10})
		if err != nil || len(list) != 1 || list[0].ID != id {
			t.Fatalf("the log filtered by the Bcc'd recipient: %v %v", list, err)
		}

		_, stored, err := w.store.MessageForDelivery(ctx, id)
		if err != nil || !mailroom.IsSigned(stored) {
			t.Fatalf("stored bytes: %v, signed %v", err, mailroom.IsSigned(stored))
		}
		w.verifyDKIM(t, stored)
		head, body, _ := bytes.Cut(stored, []byte("\r\n\r\n"))
		if string(body) != submittedBody {
			t.Fatalf("body %q, want it untouched %q", body, submittedBody)
		}
		// Field by field: the DKIM signature's base64 may spell "Bcc" by
		// chance (about one message in 700), which is no Bcc field.
		hdr, err := textproto.NewReader(bufio.NewReader(bytes.NewReader(append(head, "\r\n\r\n"...)))).ReadMIMEHeader()
		if err != nil {
			t.Fatalf("the stored header does not parse: %v\n%s", err, head)
		}
		for name, values := range hdr {
			if name == "Bcc" || slices.ContainsFunc(values, func(v string) bool { return strings.Contains(v, "bob@") }) {
				t.Fatalf("the header names the Bcc'd recipient in %s:\n%s", name, head)
			}
		}
		ulid := strings.TrimPrefix(id, mailroom.PrefixMessage)
		if !bytes.Contains(head, []byte("\r\nMessage-ID: <"+ulid+"@shop.example>\r\nDate: ")) {
			t.Fatalf("no Message-ID and Date added:\n%s", head)
		}

		// The log's raw view and the delivery worker's bytes are the stored ones.
		signer := &delivery.Signer{Store: w.store, Domains: w.domains, Composer: compose.Composer{}}
		shown, err := (&emaillog.Service{Store: w.store, Signer: signer}).Raw(ctx, w.acct.ID, id)
		if err != nil || !bytes.Equal(shown, stored) {
			t.Fatalf("raw view: %v, same bytes %v", err, bytes.Equal(shown, stored))
		}
		signed, err := signer.Signed(ctx, m.Summary())
		if err != nil || !bytes.Equal(signed.Raw, stored) || signed.ReturnPath != w.shop.ReturnPathDomain {
			t.Fatalf("delivery's message: %v, same bytes %v, return path %q", err, bytes.Equal(signed.Raw, stored), signed.ReturnPath)
		}
		for _, r := range []string{"ann@x.example", "bob@y.example"} {
			if b, _ := signed.For(r); !bytes.Equal(b, stored) {
				t.Fatalf("%s is sent other bytes", r)
			}
		}
	})
}

// The same Idempotency-Key with the same submission gives the first id
// and stores one message, concurrent submissions too; with another
// message it is idempotency_key_reused.
func TestSubmissionIdempotencyKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newSubmissionWorld(t, e)
		raw := "From: orders@shop.example\r\nTo: ann@x.example\r\nIdempotency-Key: order-42\r\nSubject: receipt\r\n\r\nThanks.\r\n"
		rcpts := []string{"ann@x.example"}
		ids := make([]string, 6)
		var wg sync.WaitGroup
		errs := make([]error, len(ids))
		for i := range ids {
			wg.Go(func() { ids[i], errs[i] = w.submit("orders@shop.example", rcpts, raw) })
		}
		wg.Wait()
		for i := range ids {
			if errs[i] != nil || ids[i] != ids[0] {
				t.Fatalf("submission %d: %q %v, want %q", i, ids[i], errs[i], ids[0])
			}
		}
		again, err := w.submit("orders@shop.example", rcpts, raw)
		if err != nil || again != ids[0] {
			t.Fatalf("retry: %q %v", again, err)
		}
		_, err = w.submit("orders@shop.example", rcpts, strings.Replace(raw, "Thanks.", "Thank you.", 1))
		if mailroom.ErrorCode(err) != mailroom.ECodeIdempotencyKeyReused {
			t.Fatalf("another message under the key: %v", err)
		}
		list, _, err := w.store.ListMessages(context.Background(), w.acct.ID, mailroom.MessageFilter{}, mailroom.Page{Limit: 10})
		if err != nil || len(list) != 1 || list[0].ID != ids[0] {
			t.Fatalf("log holds %d messages (%v), want the first one only", len(list), err)
		}
		_, stored, err := w.store.MessageForDelivery(context.Background(), ids[0])
		if err != nil || bytes.Contains(stored, []byte("order-42")) {
			t.Fatalf("stored: %v; the Idempotency-Key header is sent: %v", err, bytes.Contains(stored, []byte("order-42")))
		}
		w.verifyDKIM(t, stored)
	})
}

// A From header or an envelope sender on a domain the account has not
// verified is refused, saying which, and nothing is stored.
func TestSubmissionUnverifiedDomains(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newSubmissionWorld(t, e)
		for _, tc := range []struct{ mailFrom, from, says string }{
			{"orders@shop.example", "orders@pending.example", "The From header's domain pending.example is not verified"},
			{"orders@shop.example", "orders@other.example", "The From header's domain other.example is not verified"},
			{"bounce@pending.example", "orders@shop.example", "The envelope sender's domain pending.example is not verified"},
			{"bounce@other.example", "orders@shop.example", "The envelope sender's domain other.example is not verified"},
		} {
			_, err := w.submit(tc.mailFrom, []string{"ann@x.example"}, "From: "+tc.from+"\r\nTo: ann@x.example\r\n\r\nHi.\r\n")
			if mailroom.ErrorCode(err) != mailroom.ECodeDomainNotVerified || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("MAIL FROM %s, From %s: %v, want %q", tc.mailFrom, tc.from, err, tc.says)
			}
		}
		list, _, err := w.store.ListMessages(context.Background(), w.acct.ID, mailroom.MessageFilter{}, mailroom.Page{Limit: 10})
		if err != nil || len(list) != 0 {
			t.Fatalf("refused messages were stored: %d %v", len(list), err)
		}
	})
}

// A key restricted to one domain (created through apikey.Service, read
// back by the authenticator from storage) submits from that domain alone,
// in the From header and in the envelope, though the account has verified
// another: the same rule as a send through the API.
func TestSubmissionKeyRestrictedToDomain(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newSubmissionWorld(t, e)
		ctx := context.Background()
		if _, err := w.domains.AddSandbox(ctx, w.acct.ID, "news.example"); err != nil {
			t.Fatal(err)
		}
		keys := &apikey.Service{Store: w.store, Domains: w.domains}
		full, _, err := keys.Create(ctx, w.acct.ID, apikey.NewKey{Name: "shop app", Scopes: []string{"send"}, Domain: w.shop.ID}, apikey.APIFields)
		if err != nil {
			t.Fatal(err)
		}
		if w.key, err = w.svc.Authenticate(ctx, full); err != nil || w.key.Domain != "shop.example" {
			t.Fatalf("authenticated key %+v, %v", w.key, err)
		}
		if _, err := w.submit("bounce@shop.example", []string{"ann@x.example"}, "From: orders@shop.example\r\nTo: ann@x.example\r\n\r\nHi.\r\n"); err != nil {
			t.Fatalf("from its own domain: %v", err)
		}
		for _, tc := range []struct{ mailFrom, from, says string }{
			{"bounce@shop.example", "news@news.example", "may send from shop.example only; the From header's domain news.example"},
			{"bounce@news.example", "orders@shop.example", "may send from shop.example only; the envelope sender's domain news.example"},
		} {
			_, err := w.submit(tc.mailFrom, []string{"ann@x.example"}, "From: "+tc.from+"\r\nTo: ann@x.example\r\n\r\nHi.\r\n")
			if mailroom.ErrorCode(err) != mailroom.ECodeDomainNotVerified || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("MAIL FROM %s, From %s: %v, want %q", tc.mailFrom, tc.from, err, tc.says)
			}
		}
		list, _, err := w.store.ListMessages(ctx, w.acct.ID, mailroom.MessageFilter{}, mailroom.Page{Limit: 10})
		if err != nil || len(list) != 1 {
			t.Fatalf("stored %d messages, want the one from shop.example: %v", len(list), err)
		}
	})
}
