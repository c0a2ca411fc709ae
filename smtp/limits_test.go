package smtp

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/smtp/smtptest"
)

func TestDirectCapsConnectionsPerHost(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
	d := newDirect(t, dnsSrv, mx.Port())
	d.MaxConnsPerHost = 1
	release := mx.Hold("slow@example.test")
	defer release()

	first := deliverAsync(d, delivery("example.test", "slow@example.test"))
	mx.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Held == 1 })

	// With the host's only slot taken, a second delivery waits for it, up
	// to its deadline, rather than opening a second connection.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res := d.Deliver(ctx, delivery("example.test", "quick@example.test"))
	want(t, res[0], mailroom.Deferred, 0, "4.4.5", "mx.example.test")

	release()
	want(t, (<-first)[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	res = deliver(t, d, delivery("example.test", "quick@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")

	if st := mx.Stats(); st.MaxOpen != 1 || st.Connections != 1 {
		t.Errorf("stats %+v, want one connection at a time, and that one reused", st)
	}
}

func TestDirectConcurrentDeliveriesStayWithinCap(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
	d := newDirect(t, dnsSrv, mx.Port())
	d.MaxConnsPerHost = 2

	const n = 20
	var done []<-chan []mailroom.RecipientResult
	for i := range n {
		done = append(done, deliverAsync(d, delivery("example.test", fmt.Sprintf("r%d@example.test", i))))
	}
	for _, ch := range done {
		want(t, (<-ch)[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	}
	if st := mx.Stats(); st.MaxOpen > 2 || st.Transactions != n {
		t.Errorf("stats %+v, want at most 2 connections open and %d transactions", st, n)
	}
}

func TestDirectSlowHostDoesNotStallOthers(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	// Two MX hosts by name; both happen to be this server.
	publishMX(dnsSrv, "slow.test", 10, "mx.slow.test", "127.0.0.1")
	publishMX(dnsSrv, "fast.test", 10, "mx.fast.test", "127.0.0.1")
	d := newDirect(t, dnsSrv, mx.Port())
	d.MaxConnsPerHost = 2
	d.MaxConns = 3
	release := mx.Hold("a@slow.test")
	defer release()

	slow := []<-chan []mailroom.RecipientResult{
		deliverAsync(d, delivery("slow.test", "a@slow.test")),
		deliverAsync(d, delivery("slow.test", "a@slow.test")),
	}
	mx.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Held == 2 })

	// The slow host has all it may have; the other host still gets through.
	res := deliver(t, d, delivery("fast.test", "b@fast.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")

	release()
	for _, ch := range slow {
		want(t, (<-ch)[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	}
}
