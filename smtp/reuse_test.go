package smtp

import (
	"context"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/smtp/smtptest"
)

func TestDirectReusesConnectionForSameHost(t *testing.T) {
	mx := smtptest.Start(t, smtptest.WithSTARTTLS())
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
	// Another domain hosted on the same MX shares its sessions.
	dnsSrv.SetMX("other.test", 10, "mx.example.test")
	d := newDirect(t, dnsSrv, mx.Port())

	for _, del := range []*mailroom.Delivery{
		delivery("example.test", "a@example.test"),
		delivery("example.test", "b@example.test"),
		delivery("other.test", "c@other.test"),
	} {
		res := deliver(t, d, del)
		want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	}
	if st := mx.Stats(); st.Connections != 1 || st.Transactions != 3 {
		t.Errorf("stats %+v, want 1 connection carrying 3 transactions", st)
	}
	for _, m := range mx.Messages() {
		if !m.TLS {
			t.Errorf("message to %v not under TLS on the reused session", m.Rcpts)
		}
	}
}

func TestDirectClosesIdleConnections(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
	d := newDirect(t, dnsSrv, mx.Port())
	d.IdleTimeout = 20 * time.Millisecond

	deliver(t, d, delivery("example.test", "a@example.test"))
	mx.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Open == 0 })

	// The next delivery opens a fresh session.
	res := deliver(t, d, delivery("example.test", "b@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	if st := mx.Stats(); st.Connections != 2 {
		t.Errorf("stats %+v, want a second connection after the idle one closed", st)
	}
}

func TestDirectCloseEndsPooledConnections(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
	d := newDirect(t, dnsSrv, mx.Port())

	deliver(t, d, delivery("example.test", "a@example.test"))
	if st := mx.Stats(); st.Open != 1 {
		t.Fatalf("stats %+v, want the session kept open after delivery", st)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	mx.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Open == 0 })
}

func TestDirectSessionClosedByServerIsReplaced(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
	d := newDirect(t, dnsSrv, mx.Port())

	deliver(t, d, delivery("example.test", "a@example.test"))
	// A drop mid-DATA kills the pooled session; the delivery after it
	// must not inherit the dead connection.
	mx.DropDuringData(1)
	res := deliver(t, d, delivery("example.test", "b@example.test"))
	want(t, res[0], mailroom.Deferred, 0, "4.4.2", "")
	res = deliver(t, d, delivery("example.test", "c@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
}

func TestDirectContextEndDefersAndDiscardsSession(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
	d := newDirect(t, dnsSrv, mx.Port())
	release := mx.Hold("slow@example.test")
	defer release()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []mailroom.RecipientResult, 1)
	go func() { done <- d.Deliver(ctx, delivery("example.test", "slow@example.test")) }()
	mx.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Held == 1 })
	cancel()
	res := <-done
	want(t, res[0], mailroom.Deferred, 0, "4.4.2", "")
	release()

	res = deliver(t, d, delivery("example.test", "next@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	if st := mx.Stats(); st.Connections != 2 {
		t.Errorf("stats %+v, want the interrupted session discarded", st)
	}
}
