package inbound

import (
	"regexp"
	"strings"

	"github.com/emersion/go-message"

	"github.com/mailroom/mailroom"
)

// bounceSubjects are found in the subjects of the bounces old MTAs write,
// compared in lower case: Postfix "Undelivered Mail Returned to Sender",
// qmail "failure notice", Exim "Mail delivery failed: returning message
// to sender", sendmail "Returned mail: see transcript for details",
// Exchange "Undeliverable:", Gmail "Delivery Status Notification
// (Failure)", Lotus "DELIVERY FAILURE:", and others.
var bounceSubjects = []string{
	"undeliverable", "undelivered mail", "delivery status notification", "failure notice",
	"mail delivery failed", "returned mail", "delivery failure", "non-delivery", "nondeliverable",
	"could not be delivered", "mail delivery failure", "mail system error", "delivery has failed",
}

// looksLikeBounce reports a message that says it is a bounce: sent by a
// mailer daemon or postmaster, with a null reverse path (RFC 5321 §4.5.5,
// when the receiving MTA recorded it in Return-Path), or under a bounce's
// subject. It is only half of the evidence: plainBounce must also find a
// recipient and a status.
func looksLikeBounce(h message.Header) bool {
	from := strings.ToLower(h.Get("From"))
	if strings.Contains(from, "mailer-daemon") || strings.Contains(from, "postmaster@") || strings.Contains(from, "mail delivery") {
		return true
	}
	if rp := strings.TrimSpace(h.Get("Return-Path")); rp == "<>" {
		return true
	}
	subject := strings.ToLower(decodedSubject(h))
	for _, s := range bounceSubjects {
		if strings.Contains(subject, s) {
			return true
		}
	}
	return false
}

var (
	// angleRecipient is a line that starts with an address in angle
	// brackets: qmail's "<ann@example.net>:", Postfix's (without DSN)
	// "<ann@example.net>: host … said: 550 5.1.1 …", sendmail's
	// "<ann@example.net>". Group 2 is what follows it on the line.
	angleRecipient = regexp.MustCompile(`^\s*<([^<>\s@]+@[^<>\s@]+)>:?(.*)$`)
	// bareRecipient is an indented line holding an address alone: Exim's
	// "  ann@example.net".
	bareRecipient = regexp.MustCompile(`^\s+([^<>\s@:()]+@[^<>\s@:()]+\.[^<>\s@:()]+):?\s*$`)
	// replyCode is an SMTP reply code of a failure (RFC 5321 §4.2.1: 4yz,
	// 5yz) starting a reply that the bounce quotes: "Remote host said:
	// 550 5.1.1 …", "    550-5.1.1 …", "[192.0.2.25]: 550 …".
	replyCode = regexp.MustCompile(`(?:^|[\s:;(])([45][0-5][0-9])(?:[ -]|$)`)
	// qmailStatus is the enhanced code qmail gives its own failures:
	// "Sorry, no mailbox here by that name. (#5.1.1)".
	qmailStatus = regexp.MustCompile(`\(#([45]\.[0-9]{1,3}\.[0-9]{1,3})\)`)
	// copyMarker starts the copy of the returned message that ends a
	// bounce's text: qmail "--- Below this line is a copy of the
	// message.", Exim "------ This is a copy of the message, including
	// all the headers. ------", "----- Original message -----", …
	copyMarker = regexp.MustCompile(`(?i)^\s*-{2,}.*(copy of|original|returned message|headers of|message headers)`)
)

// plainBounce reads the recipients of a plain-text bounce (no
// multipart/report): each address line followed, on it or on a later line
// before the next address, by a failure reply. Only what precedes the copy
// of the returned message is read. A recipient found without a reply is
// not taken: a bounce must say what failed.
func plainBounce(text string) []mailroom.ReportRecipient {
	var out []mailroom.ReportRecipient
	seen := map[string]bool{}
	pending := ""
	for line := range strings.SplitSeq(text, "\n") {
		if copyMarker.MatchString(line) {
			break
		}
		rest := line
		if m := angleRecipient.FindStringSubmatch(line); m != nil {
			pending, rest = m[1], m[2]
		} else if m := bareRecipient.FindStringSubmatch(line); m != nil {
			pending, rest = m[1], ""
		}
		if pending == "" {
			continue
		}
		var diag, status string
		if loc := replyCode.FindStringSubmatchIndex(rest); loc != nil {
			diag = cleanValue(rest[loc[2]:])
			status = replyStatus(diag)
		} else if m := qmailStatus.FindStringSubmatch(rest); m != nil {
			diag, status = cleanValue(rest), m[1]
		} else {
			continue
		}
		key := strings.ToLower(pending)
		if !seen[key] && len(out) < maxRecipients {
			seen[key] = true
			out = append(out, mailroom.ReportRecipient{
				FinalRecipient: cleanValue(pending),
				Action:         "failed",
				Status:         status,
				DiagnosticCode: diag,
			})
		}
		pending = ""
	}
	return out
}
