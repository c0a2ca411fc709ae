package resend

import (
	"testing"

	"github.com/mailroom/mailroom"
)

// A revoked key is answered as an unknown one, in name and in words.
func TestErrorRevokedKeyIsAnInvalidOne(t *testing.T) {
	invalidStatus, invalid := Error(&mailroom.Error{Code: mailroom.ECodeInvalidAPIKey}, "The API key is not valid.")
	revokedStatus, revoked := Error(&mailroom.Error{Code: mailroom.ECodeAPIKeyRevoked}, "The API key has been revoked.")
	if revokedStatus != invalidStatus || revoked != invalid || revoked.StatusCode != 403 || revoked.Name != NameInvalidAPIKey {
		t.Errorf("revoked %d %+v, invalid %d %+v", revokedStatus, revoked, invalidStatus, invalid)
	}
}

func TestTextNamesFieldsAsResendDoes(t *testing.T) {
	for in, want := range map[string]string{
		"leave scheduledAt out":                         "leave scheduled_at out",
		"contentType and contentId must be text":        "content_type and content_id must be text",
		`"johnDoe@example.com" has no replyTo`:          `"johnDoe@example.com" has no reply_to`,
		"the Idempotency-Key header has 300 characters": "the Idempotency-Key header has 300 characters",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}
