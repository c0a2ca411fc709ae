package smtpservertest

import (
	"strings"
	"time"
)

// Repeat sends cmd n times, each after the reply to the one before, as a
// client that does not pipeline does, and fails unless every reply
// begins with want.
func (c *Conn) Repeat(cmd, want string, n int) {
	c.t.Helper()
	for i := range n {
		c.Send(cmd)
		line, err := c.Reply(10 * time.Second)
		if err != nil || !strings.HasPrefix(line, want) {
			c.t.Fatalf("reply %d to %q: %q (%v), want %q…", i+1, strings.TrimSpace(cmd), line, err, want)
		}
	}
}

// ExpectLast reads, without sending anything, a reply that must be
// exactly want and the server's last words: the connection closes after
// it with nothing more. A server that ends a session past its limits
// answers so right after the command that passed them.
func (c *Conn) ExpectLast(want string) {
	c.t.Helper()
	line, err := c.Reply(10 * time.Second)
	if err != nil || line != want {
		c.t.Fatalf("reply %q (%v), want %q", line, err, want)
	}
	if _, rest, err := c.ClosedWithin(10 * time.Second); err != nil || rest != "" {
		c.t.Fatalf("the connection is not closed after %q: %q %v", want, rest, err)
	}
}
