package http

import (
	"net/http"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// resendJSON reads bodies on Resend's routes as leniently as Resend
// does: a member Mailroom does not use (topic_id, region, an id in a
// PATCH body) is ignored, since the SDKs send them. The rules that keep a
// body from being read two ways stay: exact names, no name twice, valid
// UTF-8.
var resendJSON = jsonv2.JoinOptions(
	jsonv2.MatchCaseInsensitiveNames(false),
	jsonv2.RejectUnknownMembers(false),
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(false),
)

// decodeResendJSON is decodeJSON for Resend's routes (resendJSON), with
// its media type, size and memory rules.
func decodeResendJSON(r *http.Request, dst any) error {
	body, err := readJSONBody(r)
	if err != nil {
		return err
	}
	return unmarshalObject(body, dst, resendJSON, "The body")
}

// unmarshalResendObject decodes one JSON object, a body or a batch's
// email, under resendJSON's rules: the bytes are kept by the caller, whose
// digest stands for the request (resend.Email.SendRequest).
func unmarshalResendObject(body []byte, dst any) error {
	return unmarshalObject(body, dst, resendJSON, "An email")
}
