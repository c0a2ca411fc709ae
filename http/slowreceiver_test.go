package http_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/mailroom/mailroom/smtp/smtptest"
	"github.com/mailroom/mailroom/storetest"
)

// slowDestinationCap is the test deliverer's PerDestination: small, so that
// a slow domain reaches it with fewer messages than the deliverer has
// message slots (40).
const slowDestinationCap = 10

// One slow receiver holds nobody else (DESIGN.md §3): with more mail for a
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
