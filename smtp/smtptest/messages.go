package smtptest

import (
	"slices"
	"testing"
	"time"

	"github.com/mailroom/mailroom/poll"
)

// Received is one message the server accepted.
type Received struct {
	MailFrom string
	// Rcpts are the recipients the server accepted, in order.
	Rcpts []string
	// Data is the message as received, dot-unstuffed, CRLF kept.
	Data []byte
	// TLS tells whether the transaction ran under TLS.
	TLS bool
	// RequireTLS tells whether MAIL FROM carried REQUIRETLS (RFC 8689
	// §4.2.1; WithREQUIRETLS).
	RequireTLS bool
	// Helo is the name the client gave in EHLO or HELO, and Client the
	// address it connected from (host:port).
	Helo   string
	Client string
}

// Messages is a copy of what was received so far, in order.
func (s *Server) Messages() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.msgs)
}

// WaitMessages polls until at least n messages were received and returns
// them, failing the test at the deadline.
func (s *Server) WaitMessages(tb testing.TB, n int, timeout time.Duration) []Received {
	tb.Helper()
	var msgs []Received
	if !poll.Within(timeout, func() bool { msgs = s.Messages(); return len(msgs) >= n }) {
		tb.Fatalf("smtptest: %d messages received within %v, want %d", len(msgs), timeout, n)
	}
	return msgs
}
