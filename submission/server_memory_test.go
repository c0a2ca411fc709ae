package submission_test

import (
	"context"
	"strings"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/membudget"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/submission"
)

// SMTP submission takes its messages' memory from the node's budget for
// requests in flight (docs/api.md "SMTP submission", "Memory"), tried
// with go-smtp's client on loopback against the submission server and the
// real Service over each engine.

// msgSize is the size of the messages these tests submit; each reserves
// msgCost.
const (
	msgSize = 1 << 20
	msgCost = msgSize * submission.MessageExpansion
)

// mail opens a transaction on c declaring size (0: none) with one
// recipient.
func mail(c *gosmtp.Client, from string, size int64) error {
	var opts *gosmtp.MailOptions
	if size > 0 {
		opts = &gosmtp.MailOptions{Size: size}
	}
	if err := c.Mail(from, opts); err != nil {
		return err
	}
	return c.Rcpt("ann@x.example", nil)
}

// data sends msg in the open transaction and returns the reply.
func data(c *gosmtp.Client, msg []byte) (string, error) {
	w, err := c.Data()
	if err != nil {
		return "", err
	}
	if _, err := w.Write(msg); err != nil {
		return "", err
	}
	resp, err := w.CloseWithResponse()
	if err != nil {
		return "", err
	}
	return resp.StatusText, nil
}

// wantMemoryRefusal fails unless err is the budget's 452 4.3.1, saying
// to try later, and whose.
func wantMemoryRefusal(t *testing.T, what string, err error, whose string) {
	t.Helper()
	e := wantReply(t, what, err, 452, gosmtp.EnhancedCode{4, 3, 1})
	if !strings.Contains(e.Message, "try again later") || !strings.Contains(e.Message, whose) {
		t.Fatalf("%s: %q, want it to say %q and to try again later", what, e.Message, whose)
	}
}

// refusals is mailroom_request_memory_refused_total{surface="submission",reason}.
func (w *memoryWorld) refusals(t *testing.T, reason string) float64 {
	t.Helper()
	families, err := w.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "mailroom_request_memory_refused_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["surface"] == membudget.SurfaceSubmission && labels["reason"] == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no mailroom_request_memory_refused_total{surface=submission,reason=%s}", reason)
	return 0
}

// queuedIn fails unless the account's log holds n messages, all queued.
func (w *memoryWorld) queuedIn(t *testing.T, acct *mailroom.Account, n int) {
	t.Helper()
	list, _, err := w.store.ListMessages(context.Background(), acct.ID, mailroom.MessageFilter{}, mailroom.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != n {
		t.Fatalf("%s's log holds %d messages, want %d", acct.Name, len(list), n)
	}
	for _, m := range list {
		if m.Status != mailroom.MessageQueued {
			t.Fatalf("%s's message %s is %s, want queued", acct.Name, m.ID, m.Status)
		}
	}
}

// backToZero waits for every reservation to be given back.
func (w *memoryWorld) backToZero(t *testing.T) {
	t.Helper()
	poll.Until(t, 10*time.Second, "the memory budget back to 0", func() bool { return w.budget.InUse() == 0 })
}

// Concurrent large submissions beyond the budget: those that declare their
// SIZE are refused at MAIL, before sending a byte, and one that does not
// is refused after its final dot, its bytes read and dropped, once its
// reading passes what is left; all with 452 4.3.1, and each session stays
// usable. The messages admitted are queued, and the budget is back to 0
// once they are answered.
func TestSubmissionsBeyondTheMemoryBudgetAre452(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		// Room for three messages at once; one account may take it all.
		budget := membudget.New(3*msgCost, 3*msgCost)
		w := newMemoryWorld(t, e, budget)
		msg := largeMessage(w.acmeFrom, msgSize)

		var admitted []*gosmtp.Client
		for range 3 {
			c := w.ts.dialTLS(t, w.acmeKey)
			if err := mail(c, w.acmeFrom, int64(len(msg))); err != nil {
				t.Fatalf("MAIL SIZE=%d within the budget: %v", len(msg), err)
			}
			admitted = append(admitted, c)
		}
		// Declared: refused at MAIL.
		declared := w.ts.dialTLS(t, w.acmeKey)
		wantMemoryRefusal(t, "MAIL SIZE= past the budget", mail(declared, w.acmeFrom, int64(len(msg))), "the server is taking as many messages as its memory allows")
		// Not declared: read, dropped, refused after the final dot.
		undeclared := w.ts.dialTLS(t, w.acmeKey)
		if err := mail(undeclared, w.acmeFrom, 0); err != nil {
			t.Fatal(err)
		}
		_, err := data(undeclared, msg)
		wantMemoryRefusal(t, "DATA past the budget", err, "the server is taking as many messages as its memory allows")
		if n := w.refusals(t, "node"); n != 2 {
			t.Fatalf("refused_total{reason=node} = %v, want 2", n)
		}
		if n := w.ts.outcome(submission.OutcomeMemoryRefused); n != 2 {
			t.Fatalf("memory_refused outcomes %d, want 2", n)
		}
		if got, want := budget.InUse(), 3*int64(len(msg))*submission.MessageExpansion; got != want {
			t.Fatalf("in use %d while three are admitted, want %d", got, want)
		}

		for i, c := range admitted {
			if reply, err := data(c, msg); err != nil || !strings.Contains(reply, "queued as msg_") {
				t.Fatalf("admitted message %d: %q %v", i, reply, err)
			}
		}
		w.queuedIn(t, w.acme, 3)
		w.backToZero(t)

		// Both refused sessions go on, and their messages go through now.
		for name, c := range map[string]*gosmtp.Client{"declared": declared, "undeclared": undeclared} {
			if err := mail(c, w.acmeFrom, 0); err != nil {
				t.Fatalf("%s session after its refusal: MAIL: %v", name, err)
			}
			if reply, err := data(c, msg); err != nil || !strings.Contains(reply, "queued as msg_") {
				t.Fatalf("%s session after its refusal: %q %v", name, reply, err)
			}
		}
		w.queuedIn(t, w.acme, 5)
		w.backToZero(t)
	})
}

// One account cannot take the whole budget: past its share its next
// message is refused 452 4.3.1 saying so, while another account's message
// gets through; the budget is back to 0 afterwards.
func TestOneAccountCannotTakeTheWholeSubmissionBudget(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		// Room for four messages at once, two of one account.
		budget := membudget.New(4*msgCost, 2*msgCost)
		w := newMemoryWorld(t, e, budget)
		msg := largeMessage(w.acmeFrom, msgSize)

		var acme []*gosmtp.Client
		for range 2 {
			c := w.ts.dialTLS(t, w.acmeKey)
			if err := mail(c, w.acmeFrom, int64(len(msg))); err != nil {
				t.Fatalf("acme within its share: %v", err)
			}
			acme = append(acme, c)
		}
		third := w.ts.dialTLS(t, w.acmeKey)
		wantMemoryRefusal(t, "acme's third message", mail(third, w.acmeFrom, int64(len(msg))), "this account's messages in flight hold its share")
		// Streamed without SIZE, refused too once past the share.
		if err := mail(third, w.acmeFrom, 0); err != nil {
			t.Fatal(err)
		}
		_, err := data(third, msg)
		wantMemoryRefusal(t, "acme's third message without SIZE", err, "this account's messages in flight hold its share")
		if n := w.refusals(t, "account"); n != 2 {
			t.Fatalf("refused_total{reason=account} = %v, want 2", n)
		}

		// Another account's messages get through meanwhile, with SIZE and
		// without.
		other := largeMessage(w.otherFrom, msgSize)
		for _, size := range []int64{int64(len(other)), 0} {
			c := w.ts.dialTLS(t, w.otherKey)
			if err := mail(c, w.otherFrom, size); err != nil {
				t.Fatalf("other account (SIZE %d) while acme holds its share: %v", size, err)
			}
			if reply, err := data(c, other); err != nil || !strings.Contains(reply, "queued as msg_") {
				t.Fatalf("other account (SIZE %d) while acme holds its share: %q %v", size, reply, err)
			}
		}
		w.queuedIn(t, w.other, 2)

		for i, c := range acme {
			if reply, err := data(c, msg); err != nil || !strings.Contains(reply, "queued as msg_") {
				t.Fatalf("acme's message %d: %q %v", i, reply, err)
			}
		}
		w.queuedIn(t, w.acme, 2)
		w.backToZero(t)
	})
}
