package http

import (
	"bytes"
	"net/http"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mailroom/mailroom"
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
	dec := jsontext.NewDecoder(bytes.NewBuffer(body), resendJSON)
	if dec.PeekKind() != '{' {
		v, err := dec.ReadValue()
		if err != nil {
			return jsonError(err)
		}
		return mailroom.Errorf(mailroom.ECodeInvalidJSON, "The body must be a JSON object, not %s.", kindName(v.Kind()))
	}
	if err := jsonv2.UnmarshalDecode(dec, dst); err != nil {
		return jsonError(err)
	}
	return endOfBody(dec)
}
