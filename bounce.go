package mailroom

import (
	"regexp"
	"strings"
)

var enhancedCode = regexp.MustCompile(`\b([245])\.(\d{1,3})\.(\d{1,3})\b`)

// EnhancedCode finds the RFC 3463 status code in an SMTP reply text.
func EnhancedCode(response string) string {
	return enhancedCode.FindString(response)
}

// IsHardBounce reports whether a permanent failure says the mailbox does
// not exist or cannot receive (RFC 3463 §3.2, the X.1.X "addressing
// status" class: bad mailbox, bad domain, …): the address is then
// suppressed, since retrying it later cannot succeed and harms the
// sender's reputation.
func IsHardBounce(code int, response string) bool {
	if code < 500 || code > 599 {
		return false
	}
	return strings.HasPrefix(EnhancedCode(response), "5.1.")
}
