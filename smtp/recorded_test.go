package smtp

import (
	"context"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/smtp/smtptest"
)

// holdsBeforeTheDot checks the pipelined wait on srv: the next transaction
// on the session has sent its message data (DATA taken) and the receiver
// has not taken it, because the final "." waits for the last outcome.
func holdsBeforeTheDot(t *testing.T, srv *smtptest.Server) {
	t.Helper()
	srv.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.DataCommands == 2 })
	if poll.Within(300*time.Millisecond, func() bool { return srv.Stats().Messages > 1 }) {
		t.Fatalf("stats %+v: the next message was taken while the last outcome was not recorded", srv.Stats())
	}
}

// A session's next transaction goes as far as its message data while the
// outcome of its last one is being recorded (Delivery.Recorded), and sends
// the final "." only once it is, so that a crash never sends again a
// message whose outcome was known: one connection carries both.
func TestSessionWaitsForTheOutcomeBeforeItsNextMessage(t *testing.T) {
	srv := smtptest.Start(t)
	r := newRelay(t, "smtp", srv, "", "")
	r.MaxConns = 1

	recorded := make(chan struct{})
	first := delivery("example.test", "a@example.test")
	first.Recorded = recorded
	want(t, deliver(t, r, first)[0], mailroom.Delivered, 250, "2.0.0", "")

	next := deliverAsync(r, delivery("example.test", "b@example.test"))
	holdsBeforeTheDot(t, srv)
	close(recorded)
	want(t, (<-next)[0], mailroom.Delivered, 250, "2.0.0", "")
	if st := srv.Stats(); st.Connections != 1 || st.Messages != 2 {
		t.Errorf("stats %+v, want the one session carrying the next message once the outcome was recorded", st)
	}
}

// A delivery whose deadline ends while it waits for the last outcome is
// deferred, and the receiver never took it.
func TestWaitForTheLastOutcomeEndsWithTheDelivery(t *testing.T) {
	srv := smtptest.Start(t)
	r := newRelay(t, "smtp", srv, "", "")
	r.MaxConns = 1
	first := delivery("example.test", "a@example.test")
	first.Recorded = make(chan struct{}) // never recorded
	want(t, deliver(t, r, first)[0], mailroom.Delivered, 250, "2.0.0", "")

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if res := r.Deliver(ctx, delivery("example.test", "b@example.test")); res[0].Outcome != mailroom.Deferred {
		t.Fatalf("the delivery that timed out waiting: %+v, want deferred", res[0])
	}
	if st := srv.Stats(); st.Messages != 1 {
		t.Errorf("stats %+v: the receiver took a message whose final dot waited", st)
	}
}

// The same for a site's sessions, and a session at its last message is not
// closed (QUIT) before its outcome is recorded either: the receiver sees
// the connection's last transaction as the one that may be in progress.
func TestSiteSessionWaitsForTheOutcomeBeforeItsNextMessage(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.1")
	p := bigmail
	p.MaxConnections = 1
	d := newSiteDirect(t, dnsSrv, mx.Port(), newTracker(nil, p))

	recorded := make(chan struct{})
	first := delivery("a.test", "r1@a.test")
	first.Recorded = recorded
	want(t, deliver(t, d, first)[0], mailroom.Delivered, 250, "2.0.0", "")
	next := deliverAsync(d, delivery("a.test", "r2@a.test"))
	holdsBeforeTheDot(t, mx)
	close(recorded)
	want(t, (<-next)[0], mailroom.Delivered, 250, "2.0.0", "")
	if st := mx.Stats(); st.Connections != 1 || st.Messages != 2 {
		t.Errorf("stats %+v, want the one session carrying the next message once the outcome was recorded", st)
	}

	// At the session's last message (MaxMessagesPerConnection), QUIT waits
	// for the outcome too.
	last := make(chan struct{})
	p.MaxMessagesPerConnection = 1
	mx2 := smtptest.Start(t)
	d2 := newSiteDirect(t, dnsSrv, mx2.Port(), newTracker(nil, p))
	del := delivery("a.test", "r4@a.test")
	del.Recorded = last
	want(t, deliver(t, d2, del)[0], mailroom.Delivered, 250, "2.0.0", "")
	if poll.Within(300*time.Millisecond, func() bool { return mx2.Stats().Open == 0 }) {
		t.Fatalf("stats %+v: the session ended before its outcome was recorded", mx2.Stats())
	}
	close(last)
	mx2.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Open == 0 })
}
