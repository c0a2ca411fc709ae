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

// tryDeliver runs d with a short deadline: long enough for a session that
// is free, not for one that is held.
func tryDeliver(tr mailroom.Transport, d *mailroom.Delivery) []mailroom.RecipientResult {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	return tr.Deliver(ctx, d)
}

// A session begins no transaction while the outcome of its last one is not
// recorded (Delivery.Recorded), so that a crash never sends again a message
// whose outcome was known: with one connection allowed, the next delivery
// waits, and goes once the outcome is recorded, on the same session.
func TestSessionWaitsForTheOutcomeBeforeItsNextTransaction(t *testing.T) {
	srv := smtptest.Start(t)
	r := newRelay(t, "smtp", srv, "", "")
	r.MaxConns = 1

	recorded := make(chan struct{})
	first := delivery("example.test", "a@example.test")
	first.Recorded = recorded
	want(t, deliver(t, r, first)[0], mailroom.Delivered, 250, "2.0.0", "")

	if res := tryDeliver(r, delivery("example.test", "b@example.test")); res[0].Outcome == mailroom.Delivered {
		t.Fatalf("a second transaction went while the first one's outcome was not recorded: %+v", res[0])
	}
	if st := srv.Stats(); st.MailCommands != 1 {
		t.Fatalf("stats %+v, want one MAIL before the outcome is recorded", st)
	}

	close(recorded)
	want(t, deliver(t, r, delivery("example.test", "c@example.test"))[0], mailroom.Delivered, 250, "2.0.0", "")
	if st := srv.Stats(); st.Connections != 1 || st.Transactions != 2 {
		t.Errorf("stats %+v, want the one session carrying the next message once the outcome was recorded", st)
	}
}

// The same for a site's sessions, and a session at its last message is not
// closed (QUIT) before its outcome is recorded either: the receiver sees
// the connection's last transaction as the one that may be in progress.
func TestSiteSessionWaitsForTheOutcomeBeforeItsNextTransaction(t *testing.T) {
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
	if res := tryDeliver(d, delivery("a.test", "r2@a.test")); res[0].Outcome == mailroom.Delivered {
		t.Fatalf("a second transaction went while the first one's outcome was not recorded: %+v", res[0])
	}
	if st := mx.Stats(); st.MailCommands != 1 {
		t.Fatalf("stats %+v, want one MAIL before the outcome is recorded", st)
	}
	close(recorded)
	want(t, deliver(t, d, delivery("a.test", "r3@a.test"))[0], mailroom.Delivered, 250, "2.0.0", "")
	if st := mx.Stats(); st.Connections != 1 || st.Transactions != 2 {
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
