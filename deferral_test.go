package mailroom

import "testing"

// Each provider's rate text, as the provider says it, is a throttle, and
// so is it at any 4xx code; none of them at a 5xx (docs/api.md "How mail
// leaves").
func TestEveryThrottleTextIsRecognised(t *testing.T) {
	for _, tt := range ThrottleTexts {
		t.Run(tt.Provider+"/"+tt.Text, func(t *testing.T) {
			code, enhanced, text := splitReply(tt.Example)
			if code/100 != 4 {
				t.Fatalf("example %q is not a 4xx", tt.Example)
			}
			if !IsThrottle(code, enhanced, text) {
				t.Errorf("%q is not recognised as a throttle", tt.Example)
			}
			// Recognised by the text, not the code: the same text with a
			// plain 450 and no enhanced code.
			if !IsThrottle(450, "", text) {
				t.Errorf("%q with a plain 450 is not recognised by its text", text)
			}
			if IsThrottle(550, "5.7.1", text) {
				t.Errorf("%q with a 550 is a throttle: a 5xx never is", text)
			}
			if got := ClassifyDeferral(450, "", text, false); got != DeferThrottled {
				t.Errorf("ClassifyDeferral(450, %q) = %s, want throttled", text, got)
			}
		})
	}
}

// splitReply cuts "450-4.2.1 text" or "451 4.7.0 [TS01] text" into its
// code, its enhanced code (when it has one) and its text.
func splitReply(s string) (int, string, string) {
	code := int(s[0]-'0')*100 + int(s[1]-'0')*10 + int(s[2]-'0')
	rest := s[4:]
	if len(rest) > 5 && rest[1] == '.' && (rest[0] == '4' || rest[0] == '5') {
		for i := 2; i < len(rest); i++ {
			if rest[i] == ' ' {
				return code, rest[:i], rest[i+1:]
			}
		}
	}
	return code, "", rest
}

func TestClassifyDeferral(t *testing.T) {
	for _, tc := range []struct {
		code           int
		enhanced, text string
		first          bool
		want           DeferralReason
	}{
		{421, "4.7.0", "Try again later, closing connection.", false, DeferThrottled},
		{421, "", "Service not available, closing transmission channel", false, DeferThrottled},
		{450, "4.7.28", "unusual rate", false, DeferThrottled},
		{451, "4.7.1", "Try again later", false, DeferThrottled},
		{451, "4.7.1", "Try again later", true, DeferGreylisted},
		{450, "4.2.0", "Recipient address rejected", true, DeferGreylisted},
		{450, "4.2.0", "Recipient address rejected", false, DeferTemporary},
		{451, "4.7.1", "Greylisted, see http://postgrey.schweikert.ch/help/example.com.html", false, DeferGreylisted},
		{450, "", "Greylisting in action, please come back later", false, DeferGreylisted},
		{421, "4.7.0", "greylisted", false, DeferThrottled}, // a 421 closes: never greylisting
		{452, "4.2.2", "Mailbox full", false, DeferTemporary},
		{451, "4.3.0", "Local error in processing", false, DeferTemporary},
		{0, "4.4.1", "connecting: connection refused", false, DeferConnection},
		{0, "4.4.2", "connection reset", false, DeferConnection},
		{0, "4.4.5", "no connection slot", false, DeferConnection},
		{0, "4.4.3", "looking up the MX records: timeout", false, DeferDNS},
		{0, "4.7.0", "TLS failed", false, DeferConnection},
		{0, "", "no result from the transport", false, DeferTemporary},
	} {
		if got := ClassifyDeferral(tc.code, tc.enhanced, tc.text, tc.first); got != tc.want {
			t.Errorf("ClassifyDeferral(%d, %q, %q, first %v) = %s, want %s", tc.code, tc.enhanced, tc.text, tc.first, got, tc.want)
		}
	}
	for _, code := range []int{550, 552, 554} {
		if IsThrottle(code, "5.7.1", "rate limit exceeded, too many connections") {
			t.Errorf("a %d is a throttle", code)
		}
	}
}
