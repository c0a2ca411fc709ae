package smtp

import "github.com/mailroom/mailroom"

// afterRecorded runs end, what becomes of a session once d's transaction
// on it is over (back to the pool, QUIT, or closed), when d's outcome is
// recorded (mailroom.Delivery.Recorded): the session carries no other
// transaction before, so that at a crash each connection has at most one
// transaction whose outcome is not stored, the one in progress. The
// caller does not wait: the delivery returns its results, whose writing
// is what Recorded waits for.
func afterRecorded(d *mailroom.Delivery, end func()) {
	if d.Recorded == nil {
		end()
		return
	}
	select {
	case <-d.Recorded:
		end()
	default:
		go func() {
			<-d.Recorded
			end()
		}()
	}
}
