package storetest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/submission"
)

// MAIL FROM … REQUIRETLS (RFC 8689) makes the submitted message's
// requireTls: stored, read back by the log and by delivery's claims, and
// part of the request an Idempotency-Key names.
func TestSubmissionRequireTLS(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newSubmissionWorld(t, e)
		ctx := context.Background()
		submit := func(raw string, requireTLS bool) (string, error) {
			return w.svc.Submit(ctx, w.key, submission.Envelope{MailFrom: "orders@shop.example", Rcpts: []string{"ann@x.example"},
				RequireTLS: requireTLS}, strings.NewReader(raw))
		}
		raw := "From: orders@shop.example\r\nTo: ann@x.example\r\nSubject: receipt\r\n\r\nThanks.\r\n"
		strict, err := submit(raw, true)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := submit(raw, false)
		if err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]bool{strict: true, plain: false} {
			m, _, err := w.store.Message(ctx, w.acct.ID, id)
			if err != nil || m.RequireTLS != want {
				t.Fatalf("message %s: requireTls %v (%v), want %v", id, m != nil && m.RequireTLS, err, want)
			}
		}
		claimed, err := w.store.ClaimDueRecipients(ctx, mailroom.Claim{Node: "node_a", Now: time.Now().Add(time.Hour), Lease: time.Minute, Limit: 10})
		if err != nil || len(claimed) != 2 {
			t.Fatalf("claimed %d (%v), want 2", len(claimed), err)
		}
		for _, q := range claimed {
			if want := q.MessageID == strict; q.Message.RequireTLS != want {
				t.Fatalf("claimed %s with RequireTLS %v, want %v", q.MessageID, q.Message.RequireTLS, want)
			}
		}

		keyed := "From: orders@shop.example\r\nTo: ann@x.example\r\nIdempotency-Key: order-7\r\nSubject: receipt\r\n\r\nThanks.\r\n"
		if _, err := submit(keyed, false); err != nil {
			t.Fatal(err)
		}
		if _, err := submit(keyed, true); mailroom.ErrorCode(err) != mailroom.ECodeIdempotencyKeyReused {
			t.Fatalf("the same key and bytes with REQUIRETLS: %v, want idempotency_key_reused", err)
		}
	})
}
