package smtp

import (
	"fmt"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/smtp/smtptest"
)

// A connection's slot is given back only once the receiver has closed its
// end after QUIT: a receiver that allows one connection never sees a
// second while the first is going, however fast the next message comes.
func TestSiteSlotFreedWhenReceiverHasClosed(t *testing.T) {
	mx := smtptest.Start(t, smtptest.WithMaxConnections(1))
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.1")
	p := bigmail
	p.MaxConnections = 1
	p.MaxMessagesPerConnection = 1
	d := newSiteDirect(t, dnsSrv, mx.Port(), newTracker(nil, p))

	for i := range 50 {
		res := deliver(t, d, delivery("a.test", fmt.Sprintf("r%d@a.test", i)))
		want(t, res[0], mailroom.Delivered, 250, "2.0.0", "")
	}
	if st := mx.Stats(); st.Refused != 0 || st.MaxAttempted > 1 {
		t.Errorf("stats %+v, want one connection at a time as the receiver counts them", st)
	}
}
