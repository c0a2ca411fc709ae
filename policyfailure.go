package mailroom

import (
	"strings"
)

// PolicyFailure is a receiver's refusal (or deferral) of mail because the
// sender's authentication did not meet its requirements: Microsoft's and
// Gmail's sender requirements for bulk senders. Retrying as is cannot
// help; publishing the record it names can.
type PolicyFailure struct {
	// Records names what the receiver found missing or failing: "spf",
	// "dkim", "dmarc" or "ptr" (the sending address's reverse DNS).
	Records []string
	// Reason says so in words, with what to fix (email events'
	// policyFailure).
	Reason string
}

// policyRule is one provider's way of saying a policy failure: an
// enhanced code (RFC 3463 §3.8, X.7.X security or policy status), and
// optionally words the text must hold.
type policyRule struct {
	enhanced string
	text     string // matched in lower case; "" for any
	records  []string
	reason   string
}

// policyRules are checked in order; the first that matches wins. Each is
// tested with the provider's reply (policyfailure_test.go).
var policyRules = []policyRule{
	// Microsoft (Outlook.com, Hotmail, Live), May 2025: "550 5.7.515 Access
	// denied, sending domain [x] does not meet the required authentication
	// level." High-volume senders need SPF and DKIM to pass and a DMARC
	// record of at least p=none aligned with one of them.
	{"5.7.515", "", []string{"dmarc", "spf", "dkim"},
		"Microsoft refused the message: the sending domain does not meet its authentication requirements (SPF and DKIM passing, and a DMARC record of at least p=none). Publish the domain's dmarc record and check that its spf and dkim records are verified."},
	// Gmail, "Unauthenticated email from x is not accepted due to domain's
	// DMARC policy" (550 5.7.26): the From domain's DMARC policy refused
	// mail that passed neither aligned SPF nor aligned DKIM.
	{"5.7.26", "dmarc", []string{"dmarc", "dkim", "spf"},
		"Gmail refused the message under the From domain's DMARC policy: neither DKIM nor SPF passed aligned with it. Check that the domain's dkim and spf records are verified, and that the From address is on that domain."},
	// Gmail 5.7.26 / 4.7.26: "This mail has been blocked (rate limited)
	// because the sender is unauthenticated. Gmail requires all senders to
	// authenticate with either SPF or DKIM."
	{"5.7.26", "", []string{"spf", "dkim"},
		"Gmail refused the message as unauthenticated: neither SPF nor DKIM passed. Check that the domain's spf and dkim records are published and verified."},
	{"4.7.26", "", []string{"spf", "dkim"},
		"Gmail deferred the message as unauthenticated: neither SPF nor DKIM passed. Check that the domain's spf and dkim records are published and verified."},
	// Gmail 5.7.27 / 4.7.27: "... SPF authentication didn't pass for this
	// message" / "The sender does not meet basic SPF requirements."
	{"5.7.27", "", []string{"spf"},
		"Gmail refused the message because SPF did not pass for the sending address. Check that the domain's spf record is published, verified, and covers every sending address (the domain's spf_covers_sending_addresses check)."},
	{"4.7.27", "", []string{"spf"},
		"Gmail deferred the message because SPF did not pass for the sending address. Check that the domain's spf record is published, verified, and covers every sending address (the domain's spf_covers_sending_addresses check)."},
	// Gmail 5.7.25 / 4.7.25: "The IP address sending this message does
	// not have a PTR record setup, or the corresponding forward DNS entry
	// does not point to the sending IP."
	{"5.7.25", "", []string{"ptr"},
		"Gmail refused the message because the sending address has no forward-confirmed reverse DNS (PTR record). The operator must set it (the domain's fcrdns check says what)."},
	{"4.7.25", "", []string{"ptr"},
		"Gmail deferred the message because the sending address has no forward-confirmed reverse DNS (PTR record). The operator must set it (the domain's fcrdns check says what)."},
	// Gmail and others: "550 5.7.1 Unauthenticated email from x is not
	// accepted due to domain's DMARC policy", and any 5.7.1 that names
	// DMARC.
	{"5.7.1", "dmarc", []string{"dmarc", "dkim", "spf"},
		"The receiver refused the message under the From domain's DMARC policy: neither DKIM nor SPF passed aligned with it. Check that the domain's dkim and spf records are verified, and that the From address is on that domain."},
}

// ClassifyPolicyFailure reports whether a reply (its code, enhanced code
// and text; the enhanced code is found in the text when not given) is a
// refusal over the sender's authentication, and which records it names.
// A 2xx is never one.
func ClassifyPolicyFailure(code int, enhanced, text string) (PolicyFailure, bool) {
	if code/100 != 4 && code/100 != 5 {
		return PolicyFailure{}, false
	}
	if enhanced == "" {
		enhanced = EnhancedCode(text)
	}
	// The class must agree with the reply code (RFC 3463 §2: 4.X.X is
	// transient, 5.X.X permanent).
	if enhanced == "" || enhanced[0] != byte('0'+code/100) {
		return PolicyFailure{}, false
	}
	lower := strings.ToLower(text)
	for _, r := range policyRules {
		if enhanced == r.enhanced && (r.text == "" || strings.Contains(lower, r.text)) {
			return PolicyFailure{Records: append([]string(nil), r.records...), Reason: r.reason}, true
		}
	}
	return PolicyFailure{}, false
}

// MarkPolicyFailure sets d's PolicyFailure when its reply is a policy
// failure (ClassifyPolicyFailure). The bounce type stays what the reply
// makes it: such a refusal (5.7.x) is a "soft" bounce, which suppresses
// nothing, as it must: the receiver refused the sender's authentication,
// not the address. bounceType keeps the two values clients branch on.
func (d *EmailEventDetail) MarkPolicyFailure() {
	pf, ok := ClassifyPolicyFailure(d.SMTPCode, "", d.SMTPResponse)
	if !ok {
		return
	}
	d.PolicyFailure = pf.Reason
}
