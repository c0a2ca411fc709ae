package storetest_test

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// TestCursorWithAnIDThatIsNone: a cursor of the email log, the events or
// the scheduled list whose id is not an id of the list's kind (one forged,
// its digest made again, since the API's cursor digest is no secret) is
// refused as a validation error. Read as a key no id has, it would start
// the list over as if no cursor were given.
func TestCursorWithAnIDThatIsNone(t *testing.T) {
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		s := e.Open(t)
		acct := storetest.NewAccount(t, s, "acme")
		cursor := func(id string) mailroom.Page {
			return mailroom.Page{Cursor: base64.RawURLEncoding.EncodeToString([]byte("1764000000000000." + id))}
		}
		for _, id := range []string{
			"msg_8zzzzzzzzzzzzzzzzzzzzzzzzz", // above 128 bits
			"msg_01jz00000000000000000000oo", // not Crockford's base32
			"evt_01jz0000000000000000000000", // another kind
			"msg_01jz",
		} {
			if _, _, err := s.ListMessages(ctx, acct.ID, mailroom.MessageFilter{}, cursor(id)); !mailroom.IsCode(err, mailroom.ECodeValidation) {
				t.Errorf("messages after %q: %v, want a validation error", id, err)
			}
			if _, _, err := s.ListScheduled(ctx, acct.ID, cursor(id)); !mailroom.IsCode(err, mailroom.ECodeValidation) {
				t.Errorf("scheduled after %q: %v, want a validation error", id, err)
			}
		}
		if _, _, err := s.ListEvents(ctx, acct.ID, mailroom.EventFilter{}, cursor("msg_01jz0000000000000000000000")); !mailroom.IsCode(err, mailroom.ECodeValidation) {
			t.Errorf("events after a message id: %v, want a validation error", err)
		}
		// A cursor of the right kind still pages.
		if _, _, err := s.ListMessages(ctx, acct.ID, mailroom.MessageFilter{}, cursor("msg_01jz0000000000000000000000")); err != nil {
			t.Errorf("messages after a message id: %v", err)
		}
	})
}
