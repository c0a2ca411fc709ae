package mailroom_test

import (
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
)

// The one classification that POST /v1/send and SMTP submission both ask
// (docs/api.md "Sending", "SMTP submission"): every name the contract
// lists, in any case, and the families by prefix.
func TestClassifyHeaderField(t *testing.T) {
	for kind, names := range map[mailroom.HeaderFieldKind][]string{
		mailroom.HeaderCustom: {"X-Mailer", "In-Reply-To", "References", "Precedence", "Keywords", "X-Content-Type",
			"Received-By-App", "X-Resent-From", "Contents"},
		mailroom.HeaderMessageField: {"From", "To", "Cc", "Bcc", "Reply-To", "Sender", "Subject", "Date", "Message-ID",
			"MIME-Version", "Content-Type", "Content-Transfer-Encoding", "Content-Disposition"},
		mailroom.HeaderServiceAdded: {"DKIM-Signature", "List-Unsubscribe", "List-Unsubscribe-Post"},
		mailroom.HeaderTrace:        {"Received", "Return-Path"},
		mailroom.HeaderReceiverTrusted: {"Authentication-Results", "Received-SPF", "Delivered-To", "ARC-Seal",
			"ARC-Message-Signature", "ARC-Authentication-Results", "Resent-From", "Resent-Bcc", "Resent-Message-ID"},
	} {
		for _, name := range names {
			for _, n := range []string{name, strings.ToLower(name), strings.ToUpper(name)} {
				got, why := mailroom.ClassifyHeaderField(n)
				if got != kind || (why == "") != (kind == mailroom.HeaderCustom) {
					t.Errorf("%s: kind %d (%q), want %d", n, got, why, kind)
				}
			}
		}
	}
}

// A field value of a whole message is held to the API's rule for a header
// value: tab and 8-bit text are fine, a control character is not.
func TestCheckHeaderFieldText(t *testing.T) {
	for _, ok := range []string{"", "plain", "Grüße\tand tabs", "\xff\xfe not UTF-8"} {
		if problem := mailroom.CheckHeaderFieldText(ok); problem != "" {
			t.Errorf("%q refused: %s", ok, problem)
		}
	}
	for _, bad := range []string{"a\x00b", "a\rb", "a\nb", "\x1b[31m", "a\x7fb", "a\u0085b"} {
		if mailroom.CheckHeaderFieldText(bad) == "" {
			t.Errorf("%q taken", bad)
		}
	}
}
