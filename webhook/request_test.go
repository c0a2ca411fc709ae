package webhook

import (
	"errors"
	"testing"

	"github.com/mailroom/mailroom"
)

// A request's format is one of mailroom.WebhookFormats; absent, it is no
// change (the create stores Mailroom's own).
func TestRequestFormat(t *testing.T) {
	for _, f := range []string{"mailroom", "resend"} {
		c, err := (&Request{Format: &f}).Validate(false)
		if err != nil || c.Format == nil || string(*c.Format) != f {
			t.Errorf("%s: %v, %v", f, c.Format, err)
		}
	}
	if c, err := (&Request{}).Validate(false); err != nil || c.Format != nil {
		t.Errorf("no format: %v, %v", c.Format, err)
	}
	bad := "svix"
	_, err := (&Request{Format: &bad}).Validate(false)
	var e *mailroom.Error
	if !errors.As(err, &e) || len(e.Details) != 1 || e.Details[0].Field != "format" {
		t.Fatalf("svix: %v", err)
	}
}
