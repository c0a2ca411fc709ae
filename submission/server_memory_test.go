package submission_test

import (
	"context"
	"fmt"
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

// msgSize is about the size of the messages these tests submit (a little
// under it); each reserves msgCost once most of it has arrived, the
// message being reserved membudget.MeterStep bytes at a time as it
// arrives, and msgSize four steps.
const (
	msgSize = 4 * membudget.MeterStep
	msgCost = msgSize * submission.MessageExpansion
	// held is what sendAllBut keeps back of a message: what is sent of
	// it then is past its third step (and the client's 4 KiB buffer
	// holds back a little more), so that it holds msgCost.
	held = 64 << 10
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

// sendAllBut starts DATA on c and sends all of msg but its last keep
// bytes, and holds it there: the session holds what has arrived of the
// message. finish sends the rest.
func sendAllBut(t *testing.T, c *gosmtp.Client, msg []byte, keep int) *gosmtp.DataCommand {
	t.Helper()
	wc, err := c.Data()
	if err != nil {
		t.Fatalf("DATA: %v", err)
	}
	if _, err := wc.Write(msg[:len(msg)-keep]); err != nil {
		t.Fatalf("writing the message: %v", err)
	}
	return wc
}

// finish sends rest of a message sendAllBut began, and its final dot,
// and returns the reply.
func finish(wc *gosmtp.DataCommand, rest []byte) (string, error) {
	if _, err := wc.Write(rest); err != nil {
		return "", err
	}
	resp, err := wc.CloseWithResponse()
	if err != nil {
		return "", err
	}
	return resp.StatusText, nil
}

// holding waits until the budget holds want: what the sessions in DATA
// have sent, reserved as it arrived.
func (w *memoryWorld) holding(t *testing.T, want int64) {
	t.Helper()
	poll.Until(t, 10*time.Second, fmt.Sprintf("the memory budget holding %d", want), func() bool { return w.budget.InUse() == want })
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

// holdAcme opens n sessions of acme, each declaring msg's SIZE and
// sending all of it but its last held bytes, and waits until the budget
// holds them all: n messages' cost.
func (w *memoryWorld) holdAcme(t *testing.T, msg []byte, n int) []*gosmtp.DataCommand {
	t.Helper()
	var open []*gosmtp.DataCommand
	for i := range n {
		c := w.ts.dialTLS(t, w.acmeKey)
		if err := mail(c, w.acmeFrom, int64(len(msg))); err != nil {
			t.Fatalf("acme's message %d, MAIL SIZE=%d within the budget: %v", i+1, len(msg), err)
		}
		open = append(open, sendAllBut(t, c, msg, held))
		w.holding(t, int64(i+1)*msgCost)
	}
	return open
}

// backToZero waits for every reservation to be given back.
func (w *memoryWorld) backToZero(t *testing.T) {
	t.Helper()
	poll.Until(t, 10*time.Second, "the memory budget back to 0", func() bool { return w.budget.InUse() == 0 })
}

// Concurrent large submissions beyond the budget, three sessions holding
// it with most of their messages sent: one that declares its SIZE is
// refused at MAIL, before sending a byte, and one that does not is
// refused after its final dot, its bytes read and dropped, once its
// reading passes what is left; both with 452 4.3.1, and each session stays
// usable. The messages admitted are queued, and the budget is back to 0
// once they are answered.
func TestSubmissionsBeyondTheMemoryBudgetAre452(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		// Room for three messages at once; one account may take it all.
		budget := membudget.New(3*msgCost, 3*msgCost)
		w := newMemoryWorld(t, e, budget)
		msg := largeMessage(w.acmeFrom, msgSize)

		admitted := w.holdAcme(t, msg, 3)
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
		if got, want := budget.InUse(), int64(3*msgCost); got != want {
			t.Fatalf("in use %d while three are admitted, want %d", got, want)
		}

		for i, wc := range admitted {
			if reply, err := finish(wc, msg[len(msg)-held:]); err != nil || !strings.Contains(reply, "queued as msg_") {
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

// One account cannot take the whole budget: with its share held by its
// sessions' messages in flight, its next message is refused 452 4.3.1
// saying so, while another account's message gets through; the budget is
// back to 0 afterwards.
func TestOneAccountCannotTakeTheWholeSubmissionBudget(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		// Room for four messages at once, two of one account.
		budget := membudget.New(4*msgCost, 2*msgCost)
		w := newMemoryWorld(t, e, budget)
		msg := largeMessage(w.acmeFrom, msgSize)

		acme := w.holdAcme(t, msg, 2)
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

		for i, wc := range acme {
			if reply, err := finish(wc, msg[len(msg)-held:]); err != nil || !strings.Contains(reply, "queued as msg_") {
				t.Fatalf("acme's message %d: %q %v", i, reply, err)
			}
		}
		w.queuedIn(t, w.acme, 2)
		w.backToZero(t)
	})
}

// The outside probe's finding: sessions that declare a large SIZE at MAIL
// and then send nothing, or stall in DATA after a few KiB, hold only what
// they sent, not the memory of the messages they declared; so a few of
// them cannot hold an account's share, or the node's budget, while they
// idle until their timeouts, and another message of the same account
// gets through meanwhile. Each declared SIZE alone fits, so MAIL takes
// them all.
func TestStalledSubmissionsHoldOnlyWhatTheySent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		// The smallest budget, twice: one account at most half, the
		// largest message's memory.
		budget := membudget.New(2*submission.MinMemory, submission.MinMemory)
		w := newMemoryWorld(t, e, budget)
		// Near the largest message, leaving room in the account's share
		// for what the stalled sessions send: the whole cost of a
		// declared SIZE must fit beside what the account holds.
		declared := int64(submission.DefaultMaxBytes - 1<<20)
		// A few KiB of a message, without its final dot: the client's
		// buffer sends at least 4 KiB of it, within one step.
		start := textMessage(w.acmeFrom, 8<<10)

		var stalled []*gosmtp.Client
		for i := range 6 {
			c := w.ts.dialTLS(t, w.acmeKey)
			if err := mail(c, w.acmeFrom, declared); err != nil {
				t.Fatalf("stalled session %d: MAIL SIZE=%d: %v", i, declared, err)
			}
			switch i % 3 {
			case 1: // DATA, and nothing.
				if _, err := c.Data(); err != nil {
					t.Fatalf("stalled session %d: DATA: %v", i, err)
				}
			case 2: // DATA, and a few KiB.
				sendAllBut(t, c, start, 0)
			}
			stalled = append(stalled, c)
		}
		// Two sessions sent a few KiB, one step each; the others nothing.
		stall := int64(2 * membudget.MeterStep * submission.MessageExpansion)
		w.holding(t, stall)

		msg := largeMessage(w.acmeFrom, msgSize)
		c := w.ts.dialTLS(t, w.acmeKey)
		if err := mail(c, w.acmeFrom, int64(len(msg))); err != nil {
			t.Fatalf("MAIL SIZE=%d beside the stalled sessions: %v", len(msg), err)
		}
		if reply, err := data(c, msg); err != nil || !strings.Contains(reply, "queued as msg_") {
			t.Fatalf("a message beside the stalled sessions: %q %v", reply, err)
		}
		w.queuedIn(t, w.acme, 1)
		w.holding(t, stall)
		if n := w.ts.outcome(submission.OutcomeMemoryRefused); n != 0 {
			t.Fatalf("memory_refused outcomes %d, want 0", n)
		}

		for _, c := range stalled {
			_ = c.Close()
		}
		w.backToZero(t)
	})
}
