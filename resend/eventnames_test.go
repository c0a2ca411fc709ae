package resend

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
)

// Every name a Resend SDK user subscribes with reads as the Mailroom type
// that the outbox matches, and shows back as it was given.
func TestEventNamesRoundTrip(t *testing.T) {
	resendNames := []string{"email.sent", "email.scheduled", "email.delivered", "email.delivery_delayed",
		"email.bounced", "email.complained", "email.failed", "email.suppressed", "email.opened", "email.clicked"}
	types, err := EventTypes(resendNames)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{mailroom.EventEmailQueued, mailroom.EventEmailScheduled, mailroom.EventEmailDelivered, mailroom.EventEmailDeferred,
		mailroom.EventEmailBounced, mailroom.EventEmailComplained, mailroom.EventEmailFailed, mailroom.EventEmailSuppressed,
		mailroom.EventEmailOpened, mailroom.EventEmailClicked}
	if !slices.Equal(types, want) {
		t.Fatalf("types %v, want %v", types, want)
	}
	if back := EventNames(types); !slices.Equal(back, resendNames) {
		t.Fatalf("shown back as %v", back)
	}
	// A type Resend lacks keeps Mailroom's name, which reads back too.
	own := []string{mailroom.EventEmailCanceled, mailroom.EventDomainVerified, mailroom.AllEventTypes}
	if got := EventNames(own); !slices.Equal(got, own) {
		t.Fatalf("Mailroom's own types shown as %v", got)
	}
	if got, err := EventTypes(own); err != nil || !slices.Equal(got, own) {
		t.Fatalf("Mailroom's own types read as %v, %v", got, err)
	}
}

// A name Mailroom would match under another name (its own email.queued)
// is refused on Resend's routes, as are names Mailroom does not send, each
// with what to write instead.
func TestEventNamesRefused(t *testing.T) {
	for _, tc := range []struct{ name, says string }{
		{"domain.created", "does not send domain.created events"},
		{"contact.created", "does not send contact.created"},
		{"email.queued", `"email.queued" is not an event name`},
		{"email.deferred", `"email.deferred" is not an event name`},
		{"nope", `"nope" is not an event name`},
	} {
		_, err := EventTypes([]string{"email.delivered", tc.name})
		var e *mailroom.Error
		if !errors.As(err, &e) || e.Code != mailroom.ECodeValidation || len(e.Details) != 1 {
			t.Fatalf("%s: %v", tc.name, err)
		}
		d := e.Details[0]
		if d.Field != "events" || d.Index == nil || *d.Index != 1 || !strings.Contains(d.Message, tc.says) || !strings.Contains(d.Message, "email.delivery_delayed") {
			t.Errorf("%s: %+v", tc.name, d)
		}
	}
}
