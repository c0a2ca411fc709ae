package mailroom

import "strings"

// DeferralReason says why a recipient was put back in the queue (docs/api.md
// "How mail leaves"): in email.deferred data, the log and a metric.
type DeferralReason string

const (
	// DeferThrottled: the receiver said the sender goes too fast (421, a
	// 4.7.x other than greylisting, or a provider's known rate text).
	DeferThrottled DeferralReason = "throttled"
	// DeferGreylisted: the receiver greylists first contact.
	DeferGreylisted DeferralReason = "greylisted"
	// DeferSiteSuspended: the site was suspended after repeated throttling,
	// and nothing was sent to it.
	DeferSiteSuspended DeferralReason = "site_suspended"
	// DeferTLSRequired: a policy requires TLS the receiver did not give.
	DeferTLSRequired DeferralReason = "tls_required"
	// DeferConnection: the connection was refused, reset or timed out.
	DeferConnection DeferralReason = "connection"
	// DeferDNS: the destination's records could not be looked up.
	DeferDNS DeferralReason = "dns"
	// DeferTemporary: any other 4xx.
	DeferTemporary DeferralReason = "temporary"
)

// DeferralReasons lists every reason, for metrics and validation.
var DeferralReasons = []DeferralReason{DeferThrottled, DeferGreylisted, DeferSiteSuspended,
	DeferTLSRequired, DeferConnection, DeferDNS, DeferTemporary}

// ClassifyDeferral names the reason of a temporary failure: a server's 4xx
// reply (code, its RFC 3463 enhanced code and text), or, with code 0, a
// failure without a reply, which the transport describes with an enhanced
// code of its own (4.4.x network and DNS, RFC 3463 §3.5). firstAttempt says
// this was the first attempt for the recipient: greylisters answer a first
// contact with a plain 4.7.1 or 4.2.0 that later means something else.
func ClassifyDeferral(code int, enhanced, text string, firstAttempt bool) DeferralReason {
	if code == 0 {
		switch {
		case enhanced == "4.4.3":
			return DeferDNS
		case strings.HasPrefix(enhanced, "4.4."):
			return DeferConnection
		case enhanced == "4.7.0":
			// TLS could not be set up (issue 29 makes policies that
			// require it say tls_required).
			return DeferConnection
		}
		return DeferTemporary
	}
	if code/100 != 4 {
		return DeferTemporary
	}
	if IsGreylisting(code, enhanced, text, firstAttempt) {
		return DeferGreylisted
	}
	if IsThrottle(code, enhanced, text) {
		return DeferThrottled
	}
	return DeferTemporary
}

// IsGreylisting reports a 450 or 451 that says greylisting (RFC 6647): its
// text does, or, to a first attempt, its enhanced code is 4.7.1 or 4.2.0,
// which greylisters (rspamd, Postgrey, Microsoft's own) give without saying
// why. A 421 is never greylisting: it closes the session, which
// greylisters do not.
func IsGreylisting(code int, enhanced, text string, firstAttempt bool) bool {
	if code != 450 && code != 451 {
		return false
	}
	lower := strings.ToLower(text)
	for _, t := range greylistTexts {
		if strings.Contains(lower, t) {
			return true
		}
	}
	return firstAttempt && (enhanced == "4.7.1" || enhanced == "4.2.0")
}

// greylistTexts are what greylisters say (Postgrey "Greylisted", rspamd,
// milter-greylist "Greylisting in action", sqlgrey, Exim's and Postfix's
// policy daemons).
var greylistTexts = []string{"greylist", "graylist", "grey-list", "gray-list", "grey list", "gray list"}

// IsThrottle reports a reply that tells the sender to slow down (docs/api.md
// "How mail leaves"): a 421 at any stage (RFC 5321 §3.8: the service closes
// the channel), a 4xx whose enhanced code is 4.7.x (security or policy, RFC
// 3463 §3.8) other than greylisting, or a 4xx with one of the big providers'
// known rate texts (ThrottleTexts). A 5xx never is: it is a refusal, and
// the recipient bounces.
func IsThrottle(code int, enhanced, text string) bool {
	if code/100 != 4 {
		return false
	}
	if code == 421 {
		return true
	}
	if IsGreylisting(code, enhanced, text, false) {
		return false
	}
	if strings.HasPrefix(enhanced, "4.7.") {
		return true
	}
	lower := strings.ToLower(text)
	for _, t := range ThrottleTexts {
		if strings.Contains(lower, t.Text) {
			return true
		}
	}
	return false
}

// ThrottleText is a provider's known way of saying "too fast".
type ThrottleText struct {
	// Text is matched in lower case anywhere in the reply.
	Text string
	// Provider and Example say where it comes from, for the reader and the
	// table's test: Example is a reply the provider gives.
	Provider string
	Example  string
}

// ThrottleTexts are the rate and volume replies of the big providers whose
// codes alone do not say so (a 450 4.2.1 or a 451 4.3.2), one per line,
// each with a reply it matches (tested one by one).
var ThrottleTexts = []ThrottleText{
	{"receiving mail at a rate that prevents additional messages", "google",
		"450-4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered. Please resend your message at a later time."},
	{"unusual rate of unsolicited mail", "google",
		"421-4.7.28 Our system has detected an unusual rate of unsolicited mail originating from your IP address."},
	{"try again later, closing connection", "google",
		"421-4.7.0 Try again later, closing connection. (EHLO)"},
	{"server busy. please try again later", "microsoft",
		"451 4.7.500 Server busy. Please try again later from [192.0.2.1]. (AS761)"},
	{"temporarily rate limited", "microsoft",
		"451 4.7.650 The mail server [192.0.2.1] has been temporarily rate limited due to IP reputation."},
	{"maximum number of concurrent server connections", "microsoft",
		"451 4.3.2 The maximum number of concurrent server connections has exceeded a limit, closing transmission channel"},
	{"temporarily deferred due to unexpected volume", "yahoo",
		"451 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due to unexpected volume or user complaints"},
	{"temporarily deferred due to user complaints", "yahoo",
		"451 4.7.0 [TS01] Messages from 192.0.2.1 temporarily deferred due to user complaints"},
	{"[ts03]", "yahoo",
		"450 [TS03] All messages from 192.0.2.1 will be permanently deferred; Retrying will NOT succeed."},
	{"too many concurrent smtp connections", "apple",
		"450 4.2.1 Too many concurrent SMTP connections from this IP address; please try again later"},
	{"too many messages", "generic",
		"452 4.3.1 Too many messages from this sender this hour"},
	{"too many connections", "generic",
		"450 Too many connections from your host, please try again later"},
	{"rate limit", "generic",
		"450 4.2.0 Rate limit exceeded, try again later"},
	{"exceeded the rate", "generic",
		"450 Sender has exceeded the rate limit of this server"},
}
