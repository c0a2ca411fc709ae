package http

import (
	"bytes"
	"net/http"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/resend"
)

// decodeResendBatch reads the body of Resend's POST /emails/batch, a JSON
// array of emails, as decodeBatch reads /v1's: each item's text as it is,
// checked only for being well-formed, so that each is decoded on its own
// and a flaw in one fails that one; reading stops at the first item past
// resend.MaxBatchEmails, which resend.CheckBatchSize refuses.
func decodeResendBatch(r *http.Request) ([][]byte, error) {
	body, err := readJSONBody(r)
	if err != nil {
		return nil, err
	}
	dec := jsontext.NewDecoder(bytes.NewBuffer(body), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if k := dec.PeekKind(); k != '[' {
		v, err := dec.ReadValue()
		if err != nil {
			return nil, jsonError(err)
		}
		return nil, mailroom.Errorf(mailroom.ECodeInvalidJSON, "The body must be a JSON array of emails, not %s.", kindName(v.Kind()))
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, jsonError(err)
	}
	var items [][]byte
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return nil, jsonError(err)
		}
		items = append(items, bytes.Clone(v))
		if len(items) > resend.MaxBatchEmails {
			return items, nil
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, jsonError(err)
	}
	if err := endOfBody(dec); err != nil {
		return nil, err
	}
	return items, nil
}
