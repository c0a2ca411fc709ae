package smtp

import (
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/smtp/smtptest"
)

// A delivery whose MayStart says no once its connection slot is held sends
// nothing, opens no connection, and says NotAttempted for every recipient:
// the worker hands it back instead of counting an attempt (a node that is
// draining, or has lost its storage, must not begin an exchange).
func TestMayStartFalseSendsNothing(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
	d := newDirect(t, dnsSrv, mx.Port())

	asked := 0
	del := delivery("example.test", "a@example.test", "b@example.test")
	del.MayStart = func() bool { asked++; return false }
	for _, r := range deliver(t, d, del) {
		if r.Outcome != mailroom.NotAttempted {
			t.Errorf("%s: %s, want not attempted", r.Recipient, outcomeName(r.Outcome))
		}
	}
	if asked == 0 {
		t.Error("MayStart was never asked")
	}
	if st := mx.Stats(); st.Connections != 0 || len(mx.Messages()) != 0 {
		t.Fatalf("the server saw %d connections and %d messages", st.Connections, len(mx.Messages()))
	}

	// The same delivery once it may start goes through.
	del.MayStart = func() bool { return true }
	for _, r := range deliver(t, d, del) {
		want(t, r, mailroom.Delivered, 250, "2.0.0", "queued as")
	}
}
