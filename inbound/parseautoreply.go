package inbound

import (
	"strings"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"
)

// isAutoSubmitted reports an Auto-Submitted field other than "no" (RFC
// 3834 §5): auto-replied, auto-generated, auto-notified, or an extension.
func isAutoSubmitted(h message.Header) bool {
	v := strings.ToLower(h.Get("Auto-Submitted"))
	keyword, _, _ := strings.Cut(v, ";")
	keyword, _, _ = strings.Cut(keyword, "(")
	keyword = strings.TrimSpace(keyword)
	return keyword != "" && keyword != "no"
}

// autoReplySubjects begin the subjects vacation responders write (Outlook,
// Exchange, Gmail, most webmails), compared in lower case.
var autoReplySubjects = []string{"out of office", "automatic reply", "auto:", "autoreply", "auto-reply"}

// isVacation reports the signals of a vacation responder that does not,
// or not only, say Auto-Submitted: the X-Autoreply and X-Autorespond
// fields of Unix vacation programs and webmails, "Precedence: auto_reply",
// and the subjects they write (Outlook writes "Automatic reply:" with no
// Auto-Submitted). X-Auto-Response-Suppress is no signal: Exchange puts it
// on its own notifications, bounces among them.
func isVacation(h message.Header) bool {
	if h.Has("X-Autoreply") || h.Has("X-Autorespond") {
		return true
	}
	if strings.EqualFold(strings.TrimSpace(h.Get("Precedence")), "auto_reply") {
		return true
	}
	subject := strings.ToLower(strings.TrimSpace(decodedSubject(h)))
	for _, p := range autoReplySubjects {
		if strings.HasPrefix(subject, p) {
			return true
		}
	}
	return false
}

// decodedSubject is the Subject with its encoded words decoded (RFC
// 2047), or as written when they do not decode.
func decodedSubject(h message.Header) string {
	mh := mail.Header{Header: h}
	s, err := mh.Subject()
	if err != nil {
		return h.Get("Subject")
	}
	return s
}
