package http

import (
	"strconv"

	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/resend"
)

// resendMessage is the message of an error on Resend's routes: Mailroom's
// message with each problem of a validation error after it, its field
// named as Resend names it, for Resend's Go SDK shows only the message,
// which must say on its own what was wrong.
func resendMessage(body api.ErrorBody) string {
	msg := body.Message
	for _, d := range body.Details {
		field := resend.FieldName(d.Field)
		if d.Index != nil {
			field += "[" + strconv.Itoa(*d.Index) + "]"
		}
		msg += " " + field + " " + d.Message + "."
	}
	return msg
}
