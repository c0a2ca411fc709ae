package resend

import "time"

// timestamp writes a time as Resend's answers do ("2023-04-26T20:21:26.347412+00:00":
// microseconds, UTC written as an offset), which every SDK reads as a
// string and JavaScript's Date and Go's time.RFC3339 parse.
func timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000") + "+00:00"
}
