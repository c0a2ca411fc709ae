package emaillog

import (
	"context"
	"time"

	"github.com/mailroom/mailroom"
)

// Service serves the email log's rules that go beyond reading rows
// (docs/api.md "The email log").
type Service struct {
	Store  mailroom.MessageStore
	Signer mailroom.Signer
}

// Raw returns the exact signed bytes of an account's message: those stored,
// or, before its first attempt, composed, signed and stored now, so that
// what the log shows is exactly what will be sent (the first stored bytes
// are the only ones ever sent). Marketing mail, composed per recipient,
// shows its first recipient's copy. A scheduled message has none yet, and a
// canceled one never will: ECodeInvalidState.
func (l *Service) Raw(ctx context.Context, accountID, messageID string) ([]byte, error) {
	m, _, err := l.Store.Message(ctx, accountID, messageID)
	if err != nil {
		return nil, err
	}
	switch {
	case m.Status == mailroom.MessageScheduled && m.ScheduledAt != nil:
		// Composing now would fix its Date and DKIM signature days before
		// it is sent (RFC 5322 §3.6.1: the Date is when it was ready to go).
		return nil, mailroom.Errorf(mailroom.ECodeInvalidState, "The message is scheduled: it is composed and signed when it is due (%s), and its raw bytes exist from then on.",
			m.ScheduledAt.UTC().Format(time.RFC3339))
	case m.Status == mailroom.MessageCanceled:
		return nil, mailroom.Errorf(mailroom.ECodeInvalidState, "The message was canceled before it was due: it was never composed.")
	}
	signed, err := l.Signer.Signed(ctx, m.Summary())
	if mailroom.IsCode(err, mailroom.ECodeNotFound) {
		return nil, mailroom.Errorf(mailroom.ECodeInvalidState, "The message was never composed, and its sending domain has been removed.")
	}
	if err != nil {
		return nil, err
	}
	if signed.Copy == nil || len(m.Recipients) == 0 {
		return signed.Raw, nil
	}
	// Marketing mail: every recipient gets a copy of its own (its own
	// List-Unsubscribe and signature); the log shows the first
	// recipient's, the very bytes it was (or will be) sent.
	raw, err := signed.For(m.Recipients[0].Address)
	if mailroom.IsCode(err, mailroom.ECodeNotFound) {
		return nil, mailroom.Errorf(mailroom.ECodeInvalidState, "The message is signed for each recipient, and its sending domain has been removed: its copies can no longer be signed.")
	}
	return raw, err
}
