package tlsrpt

import "time"

// windowOf is the report window holding t: of length interval, aligned
// to the Unix epoch, so that at 24h the windows are UTC days (RFC 8460
// §4.1: "a daily report ... for the 24-hour period in UTC") and every node
// cuts time the same way. (time.Truncate aligns to year 1, not the epoch:
// the same for whole days, not for every interval.)
func windowOf(t time.Time, interval time.Duration) (start, end time.Time) {
	n := t.UnixNano()
	d := int64(interval)
	off := n % d
	if off < 0 {
		off += d
	}
	start = time.Unix(0, n-off).UTC()
	return start, start.Add(interval)
}
