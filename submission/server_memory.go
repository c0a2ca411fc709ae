package submission

import (
	"errors"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom/membudget"
	"github.com/mailroom/mailroom/smtpserver"
)

// MessageExpansion is how many bytes of memory a submitted message may
// come to hold for each byte of it while it is taken: the message read
// whole, its header split and written again, the digest of its bytes made
// canonical, the DKIM signature's canonical body, the signed copy, and what
// storage encodes of it. It is measured, not guessed: the bytes allocated
// by one whole submission (SMTP client and server on loopback, the real
// service over SQLite) divided by the message's size, taken from the worst
// of BenchmarkSubmitMemory's cases and rounded up; BENCHMARKS.md "SMTP
// submission in the memory budget" has the figures.
const MessageExpansion = 15

// MinMemory is the smallest budget that takes the largest message
// submission takes: DefaultMaxBytes, expanded.
const MinMemory = DefaultMaxBytes * MessageExpansion

// Replies of a message the memory budget has no room for: 452 4.3.1, RFC
// 1870 §6.1's reply to a SIZE the server cannot take now but may later
// (RFC 5321 §4.2.2 452, insufficient system storage; RFC 3463 §3.4 4.3.1,
// mail system full). The session goes on: the client tries again later,
// on this connection or another.
var (
	// The node's budget is taken: no fault of the client's, so not
	// counted against MaxErrors.
	errMemoryNode = smtpserver.ServiceFailure(452, gosmtp.EnhancedCode{4, 3, 1},
		"Insufficient system storage: the server is taking as many messages as its memory allows, try again later")
	// The account's messages in flight hold its share: of the client's
	// making, as its rate limit is.
	errMemoryAccount = smtpserver.Reply(452, gosmtp.EnhancedCode{4, 3, 1},
		"Insufficient system storage: this account's messages in flight hold its share of the server's memory, try again later")
)

// memoryReply is the reply to a refusal by the budget, counted.
func (s *Server) memoryReply(err error) *gosmtp.SMTPError {
	s.MemoryRefusals.Count(membudget.SurfaceSubmission, err)
	s.base.Observe(OutcomeMemoryRefused)
	if errors.Is(err, membudget.ErrAccountShare) {
		return errMemoryAccount
	}
	return errMemoryNode
}

// checkDeclared refuses at MAIL a declared SIZE (RFC 1870) whose memory
// the budget, or the account's share of it, has no room for now, so that
// such a message is refused before a byte of it is sent. It reserves
// nothing: a client that declares a large SIZE and then sends nothing (or
// stalls in DATA) would otherwise hold the memory of a message it never
// sends until the command or data timeout, and a few such sessions would
// hold an account's share, or the node's budget, for nothing. Data
// reserves the message as it arrives (meter). Without a SIZE nothing is
// checked.
func (s *Server) checkDeclared(accountID string, size int64) error {
	if size <= 0 {
		return nil
	}
	return s.Memory.Check(accountID, size*MessageExpansion)
}

// meter is the message as Submit reads it, reserved from the budget as it
// is read, MessageExpansion bytes per byte, membudget.MeterStep bytes of
// message at a time, whether its size was declared or not: what is held
// follows what has arrived. A refusal ends Submit's reading with the
// budget's error. The reservation is given back once the message is
// answered.
func (s *Server) meter(m *smtpserver.MessageReader, accountID string) (*membudget.Reader, *membudget.Reservation) {
	// Reserving nothing never fails.
	res, _ := s.Memory.Reserve(accountID, 0)
	return membudget.NewReader(m, res, MessageExpansion, nil), res
}
