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

// transactionMemory is what a transaction holds of the budget: the
// reservation made at MAIL for a declared SIZE (RFC 1870), and that size,
// which Data's reader does not reserve again.
type transactionMemory struct {
	res      *membudget.Reservation
	declared int64
}

// reserveDeclared takes a declared SIZE's memory at MAIL, before a byte
// of the message is sent, so that a message the budget has no room for
// is refused before it is sent. Without a SIZE nothing is reserved: Data
// reserves the message as it arrives.
func (s *Server) reserveDeclared(accountID string, size int64) (transactionMemory, error) {
	if s.Memory == nil || size <= 0 {
		return transactionMemory{}, nil
	}
	res, err := s.Memory.Reserve(accountID, size*MessageExpansion)
	if err != nil {
		return transactionMemory{}, err
	}
	return transactionMemory{res: res, declared: size}, nil
}

// meter is the message as Submit reads it: what the transaction reserved
// at MAIL covers its declared size, and whatever goes past it (or all of
// a message whose size was not declared) is reserved as it is read. A
// refusal ends Submit's reading with the budget's error.
func (s *Server) meter(m *smtpserver.MessageReader, accountID string, mem transactionMemory) (*membudget.Reader, *membudget.Reservation) {
	res := mem.res
	if res == nil {
		// Reserving nothing never fails.
		res, _ = s.Memory.Reserve(accountID, 0)
	}
	return membudget.NewReader(m, res, MessageExpansion, mem.declared, nil), res
}
