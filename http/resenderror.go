package http

import (
	"strconv"
	"strings"

	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/resend"
)

// resendMessage is the message of an error on Resend's routes. Resend's
// Go SDK shows only the message, so it must say on its own what was
// wrong: a validation error's message that is only the summary of its
// first problem (mailroom.Validator's) becomes every problem of its
// details, each with its field as Resend names it ("reply_to",
// "attachments[0]"); a message the service wrote for the case (a batch
// refused whole) already says it, and is kept as it is.
func resendMessage(body api.ErrorBody) string {
	if len(body.Details) == 0 {
		return resend.Text(body.Message)
	}
	if _, rest, _ := strings.Cut(body.Message, ": "); !strings.HasPrefix(rest, body.Details[0].Message) {
		return resend.Text(body.Message)
	}
	problems := make([]string, len(body.Details))
	for i, d := range body.Details {
		field := resend.FieldName(d.Field)
		msg := resend.Text(d.Message)
		if d.Index != nil {
			field += "[" + strconv.Itoa(*d.Index) + "]"
		}
		// A problem that starts with its field's name ("html or text is
		// required") is not given the name again.
		if named := resend.FieldName(d.Field); strings.HasPrefix(msg, named+" ") || strings.HasPrefix(msg, named+",") {
			problems[i] = msg
		} else {
			problems[i] = field + " " + msg
		}
	}
	return strings.Join(problems, "; ") + "."
}
