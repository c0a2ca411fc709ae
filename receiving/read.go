package receiving

import (
	"context"

	"github.com/mailroom/mailroom"
)

// Message is one of the account's received messages, parsed: its header
// fields, text, HTML, attachments' metadata and verdicts. An id that is
// not a received message's (rcv_…) is ECodeNotFound without asking the
// store, as is another account's message.
func (m *Mailbox) Message(ctx context.Context, accountID, id string) (*mailroom.ReceivedMessage, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	return m.Store.Received(ctx, accountID, id)
}

// Raw is a received message's stored bytes: the Authentication-Results
// and Received fields the service added above the bytes received.
func (m *Mailbox) Raw(ctx context.Context, accountID, id string) ([]byte, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	return m.Store.ReceivedRaw(ctx, accountID, id)
}

// Attachment is one attachment of a received message, with its decoded
// bytes.
func (m *Mailbox) Attachment(ctx context.Context, accountID, id, attachmentID string) (*mailroom.ReceivedAttachment, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if len(attachmentID) <= len(mailroom.PrefixReceivedAttachment) || len(attachmentID) > 64 ||
		attachmentID[:len(mailroom.PrefixReceivedAttachment)] != mailroom.PrefixReceivedAttachment {
		return nil, mailroom.Errorf(mailroom.ECodeNotFound, "No attachment %q in received message %s.", mailroom.Excerpt(attachmentID, 64), id)
	}
	return m.Store.ReceivedAttachment(ctx, accountID, id, attachmentID)
}

// checkID refuses what cannot be a received message's id, so that a
// typo or a sent message's id reads as not found, naming it.
func checkID(id string) error {
	if !mailroom.IsID(id, mailroom.PrefixReceived) {
		return mailroom.Errorf(mailroom.ECodeNotFound, "No received message %q in this account.", mailroom.Excerpt(id, 64))
	}
	return nil
}
