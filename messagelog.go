package mailroom

import "context"

// MessageLog serves the email log's rules that go beyond reading rows
// (docs/api.md "The email log").
type MessageLog struct {
	Store  MessageStore
	Signer Signer
}

// Raw returns the exact signed bytes of an account's message: those stored,
// or, before its first attempt, composed, signed and stored now, so that
// what the log shows is exactly what will be sent (the first stored bytes
// are the only ones ever sent).
func (l *MessageLog) Raw(ctx context.Context, accountID, messageID string) ([]byte, error) {
	m, _, err := l.Store.Message(ctx, accountID, messageID)
	if err != nil {
		return nil, err
	}
	raw, _, err := l.Signer.Signed(ctx, m.Summary())
	if IsCode(err, ECodeNotFound) {
		return nil, Errorf(ECodeInvalidState, "The message was never composed, and its sending domain has been removed.")
	}
	return raw, err
}
