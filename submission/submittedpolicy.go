package submission

import (
	"bytes"
	"strings"

	"github.com/mailroom/mailroom"
)

// applyHeaderPolicy holds a submitted message to the header policy of
// POST /v1/send (mailroom.ClassifyHeaderField, the one classification
// both surfaces ask; docs/api.md "SMTP submission"), by kind:
//
//   - the message's own fields (From, To, Subject, Content-*, …) are the
//     message as written, and stay: the API writes the same fields from
//     its request (Bcc alone goes, RFC 5322 §3.6.3, in newSubmittedMessage);
//   - trace fields (Received, Return-Path) are removed, as the API sends
//     none: the message starts its way to the recipients here, and a relay
//     in front of Mailroom (an application's own MTA, which adds Received
//     as RFC 5321 §4.4 asks) must not be refused for it, nor its network's
//     host names shown to recipients;
//   - the fields Mailroom adds (DKIM-Signature, List-Unsubscribe and
//     List-Unsubscribe-Post) and the ones receivers trust
//     (Authentication-Results, Received-SPF, Delivered-To, ARC-*,
//     Resent-*) refuse the message, each named once, as the API refuses
//     them: removing them silently would drop what the client meant to
//     send (its unsubscribe link, a Resent-* resending) without its
//     knowing. Resent-Bcc so never reaches a recipient.
//
// Every field's value is held to the API's rule too (no control
// character but tab, mailroom.CheckHeaderFieldText): what is accepted is
// delivered as written and shown as it is in the log, which would
// otherwise strip a NUL that the recipients get.
func (h *submittedHeader) applyHeaderPolicy(v *mailroom.Validator) {
	named := map[string]bool{} // each name is reported once
	for fs := h.fields.Fields(); fs.Next(); {
		raw, err := fs.Raw()
		if err != nil {
			continue
		}
		b, folded, _ := bytes.Cut(raw, []byte(":"))
		name, value := string(b), string(bytes.ReplaceAll(folded, []byte("\r\n"), nil))
		problem := mailroom.CheckHeaderFieldText(value)
		kind, why := mailroom.ClassifyHeaderField(name)
		switch {
		case problem != "":
			problem = "the field's value " + problem
		case kind == mailroom.HeaderTrace:
			fs.Del()
		case kind == mailroom.HeaderServiceAdded, kind == mailroom.HeaderReceiverTrusted:
			problem = "a submitted message must not carry this field: " + why + "; remove it"
		}
		if key := strings.ToLower(name); problem != "" && !named[key] {
			named[key] = true
			v.Add(name, "%s", mailroom.OwnText(problem))
		}
	}
}
