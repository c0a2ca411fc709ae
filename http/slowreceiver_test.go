package http_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mailroom/mailroom/delivery"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/smtp/smtptest"
	"github.com/mailroom/mailroom/storetest"
)

// slowDestinationCap is the test deliverer's PerDestination: small, so that
// a slow domain reaches it with fewer messages than the deliverer has
// message slots (40).
const slowDestinationCap = 10

// One slow receiver holds nobody else (docs/design.md "How mail is delivered"): with more mail for a
// receiver that never answers than the node has message slots, mail for
// another domain is still claimed and delivered at once, and the slow mail
// follows when its receiver answers.
func TestSlowReceiverHoldsNobodyElse(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	e.verifiedDomain(t, "shop.example")
	e.mailDomain("slow.example")
	e.mailDomain("fast.example")

	var release []func()
	var slow []string
	for i := range 60 {
		rcpt := fmt.Sprintf("r%d@slow.example", i)
		release = append(release, e.mx.Hold(rcpt))
		slow = append(slow, e.sendOne(t, rcpt))
	}
	defer func() {
		for _, r := range release {
			r()
		}
	}()
	e.mx.WaitStats(t, 10*time.Second, func(s smtptest.Stats) bool { return s.Held > 0 })

	for i := range 5 {
		e.waitStatus(t, e.sendOne(t, fmt.Sprintf("r%d@fast.example", i)), "delivered")
	}
	if held := e.mx.Stats().Held; held == 0 {
		t.Fatal("the slow receiver was not holding anything while the fast mail went: the test proves nothing")
	}

	for _, r := range release {
		r()
	}
	for _, id := range slow {
		e.waitStatus(t, id, "delivered")
	}
}

// Mail for another domain that comes due with time (a retry) while a busy
// domain keeps its deliveries flowing is claimed within a poll interval,
// not after the busy domain's whole backlog: the claim that looks past busy
// domains is skipped for one poll interval at most. The poll is long here
// (1 s, as in serve) so that the busy domain falls below its cap, waking
// the claim loop, more often than the poll timer would fire.
func TestRetryNotHiddenBehindBusyDomain(t *testing.T) {
	e := newEnvWithStore(t, storetest.SQLite.Open(t), func(_ *mhttp.Server, d *delivery.Deliverer) { d.Poll = time.Second })
	e.verifiedDomain(t, "shop.example")
	e.mailDomain("busy.example")
	e.mailDomain("other.example")

	e.mx.ReplyOnce("r@other.example", 451, "4.3.0", "try again later")
	retry := e.sendOne(t, "r@other.example")
	e.waitStatus(t, retry, "deferred")

	// A backlog of six seconds for a receiver that answers every message,
	// slowly: its deliveries finish all the time. It is held while the
	// backlog is queued, so that all of it is there when the retry comes
	// due, however long the sends take.
	e.mx.SlowDataFor("busy.example", 60*time.Millisecond)
	var busy []string
	var release []func()
	for i := range 400 {
		rcpt := fmt.Sprintf("b%d@busy.example", i)
		release = append(release, e.mx.Hold(rcpt))
		busy = append(busy, e.sendOne(t, rcpt))
	}
	e.clock.Advance(2 * time.Minute) // the retry comes due; no new mail wakes the deliverer
	for _, r := range release {
		r()
	}
	e.waitStatus(t, retry, "delivered")
	// The receiver's own order is the measure: counting the log's statuses
	// afterwards would take long enough, on a loaded machine, for the rest
	// of the backlog to go out meanwhile.
	before := -1
	for i, m := range e.mx.Messages() {
		if slices.Contains(m.Rcpts, "r@other.example") {
			before = i
			break
		}
	}
	if before < 0 {
		t.Fatal("the log says delivered but the receiver has no message for r@other.example")
	}
	left := len(busy) - before
	// About a poll interval's worth (1 s, some 70 messages) may go first.
	if left < len(busy)/2 {
		t.Fatalf("the retry waited behind the busy domain's backlog: %d of %d still to go when it went", left, len(busy))
	}
	t.Logf("the retry went out with %d of the busy domain's %d messages still to go", left, len(busy))
}
