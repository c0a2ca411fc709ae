package submission_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"log/slog"
	"strings"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apikey"
	"github.com/mailroom/mailroom/compose"
	"github.com/mailroom/mailroom/delivery"
	"github.com/mailroom/mailroom/domain"
	"github.com/mailroom/mailroom/inbound"
	"github.com/mailroom/mailroom/sealer"
	"github.com/mailroom/mailroom/smtp"
	"github.com/mailroom/mailroom/smtp/smtptest"
	"github.com/mailroom/mailroom/sqlstore"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/submission"
)

// The header policy of SMTP submission (docs/api.md "SMTP submission"),
// tried as a client would, end to end: a real SMTP client, the submission
// server with the Service `mailroom serve` wires behind it, a real store
// of each engine, the real signer, and the delivery runtime relaying to
// an SMTP server on loopback, whose received bytes are what recipients
// get.

// policyWorld is that chain for one account with the verified domain
// shop.example.
type policyWorld struct {
	store     *sqlstore.Store
	acct      *mailroom.Account
	ts        *testServer
	password  string // the account's send key
	mx        *smtptest.Server
	deliverer *delivery.Deliverer
}

func newPolicyWorld(t *testing.T, e storetest.Engine) *policyWorld {
	t.Helper()
	ctx := context.Background()
	w := &policyWorld{store: e.Open(t)}
	w.acct = storetest.NewAccount(t, w.store, "acme")
	seal, err := sealer.New([]byte(rand.Text() + rand.Text())[:sealer.KeySize])
	if err != nil {
		t.Fatal(err)
	}
	domains := &domain.Service{Store: w.store, Sealer: seal, Settings: mailroom.DefaultRecordSettings("mail.mailroom.test"),
		Now: time.Now, Log: slog.New(slog.DiscardHandler)}
	// Verified from the start, as the sandbox domain is.
	if _, err := domains.AddSandbox(ctx, w.acct.ID, "shop.example"); err != nil {
		t.Fatal(err)
	}
	var key *mailroom.APIKey
	w.password, key = mailroom.NewAPIKey(w.acct.ID, "smtp", mailroom.Scopes{mailroom.ScopeSend}, time.Now())
	if err := w.store.CreateAPIKey(ctx, key); err != nil {
		t.Fatal(err)
	}
	svc := &submission.Service{
		Auth:  &apikey.Authenticator{Keys: w.store, Now: time.Now},
		Store: w.store, Domains: domains, Signer: compose.Composer{}, Now: time.Now,
	}
	w.ts = startServer(t, func(s *submission.Server) { s.Handler = svc })

	w.mx = smtptest.Start(t, smtptest.WithSTARTTLS())
	relay := smtp.NewRelay(smtp.RelayConfig{Host: "127.0.0.1", Port: w.mx.Port()}, "mail.mailroom.test")
	relay.TLSConfig = &tls.Config{RootCAs: w.mx.RootCAs()}
	t.Cleanup(func() { _ = relay.Close() })
	w.deliverer = &delivery.Deliverer{
		Store:       w.store,
		Signer:      &delivery.Signer{Store: w.store, Domains: domains, Composer: compose.Composer{}},
		ReturnPaths: inbound.ReturnPaths{Key: []byte("submission test return-path key")},
		Transport:   relay, Now: time.Now, Node: "node_test",
		Log:   slog.New(slog.DiscardHandler),
		Retry: mailroom.RetryPolicy{MinDelay: time.Minute, MaxDelay: time.Hour, Window: 72 * time.Hour},
		Lease: 10 * time.Minute, Batch: 50, MaxMessages: 400, PerDestination: 64, Poll: time.Second,
		DrainTimeout: 5 * time.Second,
	}
	return w
}

// submit sends msg from orders@shop.example to rcpts over a session of its
// own, runs delivery, and returns the messages delivered and logged since
// and the reply to DATA.
func (w *policyWorld) submit(t *testing.T, rcpts []string, msg string) ([]smtptest.Received, []*mailroom.Message, error) {
	t.Helper()
	delivered, logged := len(w.mx.Messages()), len(w.logged(t))
	c := w.ts.dialTLS(t, w.password)
	defer func() { _ = c.Quit() }()
	_, err := send(c, "orders@shop.example", rcpts, []byte(msg))
	w.deliver(t)
	// The log lists the newest first.
	return w.mx.Messages()[delivered:], w.logged(t)[:len(w.logged(t))-logged], err
}

// deliver runs delivery passes until nothing is due; each pass returns
// once what it claimed is settled.
func (w *policyWorld) deliver(t *testing.T) {
	t.Helper()
	for {
		n, err := w.deliverer.DeliverDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// logged is the email log's messages of the account, newest first.
func (w *policyWorld) logged(t *testing.T) []*mailroom.Message {
	t.Helper()
	list, _, err := w.store.ListMessages(context.Background(), w.acct.ID, mailroom.MessageFilter{}, mailroom.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// wantRefused checks that a submission's reply is 550 5.7.1 naming field,
// and that nothing was delivered or logged.
func wantRefused(t *testing.T, field string, delivered []smtptest.Received, logged []*mailroom.Message, err error) {
	t.Helper()
	if len(delivered) != 0 {
		t.Errorf("%d messages were delivered:\n%q", len(delivered), delivered[0].Data)
	}
	if len(logged) != 0 {
		t.Errorf("%d messages are in the log", len(logged))
	}
	e := wantReply(t, field, err, 550, gosmtp.EnhancedCode{5, 7, 1})
	if !strings.HasPrefix(e.Message, field+": ") {
		t.Errorf("the reply does not name %s first: %q", field, e.Message)
	}
}

// fieldValues are the unfolded values of raw's header fields named name
// (any case), as a recipient's reader finds them.
func fieldValues(raw []byte, name string) []string {
	head, _, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	var out []string
	for _, line := range strings.Split(strings.ReplaceAll(strings.ReplaceAll(string(head), "\r\n ", " "), "\r\n\t", "\t"), "\r\n") {
		if n, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(n, name) {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}

const policyBody = "\r\nHello.\r\n"

// Each header the API refuses among a send's headers, a submitted message
// may not carry, but for the message's own fields: the fields the service
// adds and the ones receivers trust are refused with 550 5.7.1 naming the
// field, and nothing is logged or sent; the trace fields are removed.
func TestSubmissionHeaderPolicy(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		// One world: a refusal leaves nothing behind.
		w := newPolicyWorld(t, e)
		for _, field := range []string{
			"DKIM-Signature: v=1; a=rsa-sha256; d=elsewhere.example; s=s; h=from; bh=x; b=x",
			"List-Unsubscribe: <https://attacker.example/u>",
			"List-Unsubscribe-Post: List-Unsubscribe=One-Click",
			"Authentication-Results: mx.google.com; dkim=pass header.d=bank.example; spf=pass; dmarc=pass",
			"Received-SPF: pass (mx.example: domain of bank.example designates 192.0.2.1 as permitted sender)",
			"Delivered-To: ceo@x.example",
			"ARC-Seal: i=1; a=rsa-sha256; cv=none; d=google.com; s=arc; b=x",
			"ARC-Authentication-Results: i=1; mx.google.com; dmarc=pass",
			"Resent-From: boss@x.example",
			"resent-message-id: <a@x.example>",
		} {
			name, _, _ := strings.Cut(field, ":")
			t.Run(name, func(t *testing.T) {
				delivered, logged, err := w.submit(t, []string{"ann@x.example"},
					"From: orders@shop.example\r\nTo: ann@x.example\r\nSubject: hi\r\n"+field+"\r\n"+policyBody)
				wantRefused(t, name, delivered, logged, err)
			})
		}

		t.Run("trace removed, message fields kept", func(t *testing.T) {
			msg := "Received: from app.internal (app.internal [10.1.2.3]) by relay.internal; Sun, 22 Nov 2026 09:59:59 +0000\r\n" +
				"Return-Path: <someone@elsewhere.example>\r\n" +
				"From: Shop <orders@shop.example>\r\nTo: ann@x.example\r\nReply-To: help@shop.example\r\n" +
				"Subject: hi\r\nX-Order: 42\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n" + policyBody
			got, _, err := w.submit(t, []string{"ann@x.example"}, msg)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("%d messages delivered, want 1", len(got))
			}
			for _, name := range []string{"Received", "Return-Path"} {
				if v := fieldValues(got[0].Data, name); len(v) != 0 {
					t.Errorf("%s delivered: %q", name, v)
				}
			}
			for name, want := range map[string]string{"From": "Shop <orders@shop.example>", "Reply-To": "help@shop.example",
				"X-Order": "42", "Content-Type": "text/plain; charset=utf-8", "Subject": "hi"} {
				if v := fieldValues(got[0].Data, name); len(v) != 1 || v[0] != want {
					t.Errorf("%s delivered as %q, want %q", name, v, want)
				}
			}
		})
	})
}

// Resent-Bcc names recipients whom the others must not see (RFC 5322
// §3.6.6); a submitted message carrying it is refused, so it never
// reaches a recipient, the hidden one included.
func TestSubmissionResentBccNeverDelivered(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newPolicyWorld(t, e)
		delivered, logged, err := w.submit(t, []string{"ann@x.example", "hidden@z.example"},
			"Resent-From: orders@shop.example\r\nResent-To: ann@x.example\r\nResent-Bcc: hidden@z.example\r\n"+
				"From: orders@shop.example\r\nTo: ann@x.example\r\nSubject: forwarded\r\n"+policyBody)
		for _, m := range delivered {
			if bytes.Contains(bytes.ToLower(m.Data), []byte("hidden@")) {
				t.Errorf("the hidden recipient is named in the copy %v received:\n%s", m.Rcpts, m.Data)
			}
		}
		// The first Resent-* field is named; none is delivered.
		wantRefused(t, "Resent-From", delivered, logged, err)
	})
}

// A NUL or another control character in a field is treated as the API
// treats it in a header value: the message is refused, naming the field,
// so nothing is delivered raw that the log shows stripped. A tab is text,
// delivered and logged alike.
func TestSubmissionHeaderControls(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newPolicyWorld(t, e)
		for _, tc := range []struct{ name, field string }{
			{"NUL in Subject", "Subject: Your\x00receipt"},
			{"escape in Subject", "Subject: \x1b[31mred"},
			{"DEL in a custom field", "X-Note: a\x7fb"},
			{"NUL in a From display name", "From: Sh\x00op <orders@shop.example>"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				name, _, _ := strings.Cut(tc.field, ":")
				msg := "To: ann@x.example\r\n" + tc.field + "\r\n"
				if name != "From" {
					msg = "From: orders@shop.example\r\n" + msg
				}
				delivered, logged, err := w.submit(t, []string{"ann@x.example"}, msg+policyBody)
				if len(delivered) == 1 && len(logged) == 1 {
					if v := fieldValues(delivered[0].Data, "Subject"); len(v) > 0 && v[0] != logged[0].Subject {
						t.Errorf("delivered Subject %q, logged %q", v, logged[0].Subject)
					}
				}
				wantRefused(t, name, delivered, logged, err)
			})
		}

		t.Run("tab delivered as logged", func(t *testing.T) {
			got, logged, err := w.submit(t, []string{"ann@x.example"},
				"From: orders@shop.example\r\nTo: ann@x.example\r\nSubject: Your\treceipt\r\n"+policyBody)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || len(logged) != 1 {
				t.Fatalf("%d delivered, %d logged", len(got), len(logged))
			}
			if v := fieldValues(got[0].Data, "Subject"); len(v) != 1 || v[0] != logged[0].Subject || v[0] != "Your\treceipt" {
				t.Fatalf("delivered Subject %q, logged %q", v, logged[0].Subject)
			}
		})
	})
}
