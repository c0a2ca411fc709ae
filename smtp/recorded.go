package smtp

import "errors"

// A crash must send again only what was in progress (docs/api.md "After a
// crash"): an outcome the receiver gave (250 to the data) but that was not
// yet committed is sent again after a restart. So a session never has more
// than one such outcome: its next transaction may go as far as its message
// data while the last outcome is being committed, overlapping the commit
// with the exchange, but waits for the commit before the final "." that
// makes the receiver take the message (RFC 5321 §4.1.1.4). A session that
// ends (QUIT or closed) ends only once its last outcome is committed, so
// that the receiver sees that transaction as the one in progress.

// errOutcomeWait is the wait for the last outcome, cut by the delivery's
// end (its deadline, the node's shutdown).
var errOutcomeWait = errors.New("the delivery ended while the session's last outcome was being recorded")

// awaitLastOutcome waits, before the final ".", until the outcome of the
// last transaction whose data the session sent is committed, and then
// makes this transaction's outcome the one the next waits for
// (client.unrecorded). A transaction that sends no data (its MAIL or
// every RCPT refused) leaves the mark as it was. The delivery's own
// outcome is never waited for (a session it reuses within its attempt).
func (t *transaction) awaitLastOutcome() error {
	if last := t.c.unrecorded; last != nil && last != t.d.Recorded {
		select {
		case <-last:
		case <-t.done:
			return errOutcomeWait
		}
	}
	t.c.unrecorded = t.d.Recorded
	return nil
}

// afterRecorded runs end, what becomes of session c once its transaction
// is over and it is not pooled (QUIT, or closed), when the outcome of the
// last transaction whose data it sent is recorded (client.unrecorded): the
// caller does not wait, since the delivery returns its results, whose
// writing is what it waits for.
func afterRecorded(c *client, end func()) {
	last := c.unrecorded
	if last == nil {
		end()
		return
	}
	select {
	case <-last:
		end()
	default:
		go func() {
			<-last
			end()
		}()
	}
}
