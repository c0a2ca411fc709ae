package inbound

import (
	"strings"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"

	"github.com/mailroom/mailroom"
)

// readARF fills a feedback report (RFC 5965) from its
// message/feedback-report part and the message it is about (its third
// part: the whole message, or text/rfc822-headers, §2). Feedback-Type abuse
// or fraud (§7.3) is a complaint; any other type (not-spam, virus, other,
// auth-failure) is read the same way but stays ReportUnknown, as does a
// report without the part or the field.
func readARF(rep *mailroom.Report, w *walker) {
	var fields fieldBlock
	// One block by §3; producers that leave blank lines in it are read
	// whole.
	for _, blk := range parseFieldBlocks(w.feedback, 16) {
		fields = append(fields, blk...)
	}
	rep.FeedbackType = actionValue(fields.get("feedback-type"))
	if rep.FeedbackType == "abuse" || rep.FeedbackType == "fraud" {
		rep.Kind = mailroom.ReportComplaint
	}
	// §3.2: Original-Rcpt-To is the RCPT TO of the reported message, the
	// one address the report is about; some reporters redact it.
	rep.OriginalRecipient = reportAddress(fields.get("original-rcpt-to"))
	if w.original == nil {
		return
	}
	rep.OriginalMessageID = messageID(w.original.Get("Message-Id"))
	if rep.OriginalRecipient == "" {
		rep.OriginalRecipient = soleAddress(mail.Header{Header: message.Header{Header: *w.original}}, "To")
	}
}

// soleAddress is the address of a header field that names exactly one,
// or "".
func soleAddress(h mail.Header, key string) string {
	list, err := h.AddressList(key)
	if err != nil || len(list) != 1 {
		return ""
	}
	return cleanValue(strings.TrimSpace(list[0].Address))
}
