package http

import (
	"bytes"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mailroom/mailroom"
)

// decodeBatch reads the body of POST /v1/send/batch: its envelope under
// requestJSON's rules, and each item's JSON text as it is, checked only for
// being well-formed, so that each item is then decoded on its own
// (decodeBatchItem) under the same rules as a send, and a flaw inside one
// (a name given twice, bytes that are not UTF-8, an unknown field) fails
// that item, not the batch. Reading an item without checking its names is
// a scan; checking them here would also hold a set of every name of every
// object in it (an item of a million members cost hundreds of MiB before
// its own decoder could stop at the 101st header). Reading stops at the
// first item past mailroom.MaxBatchMessages, which Validate refuses.
func decodeBatch(r *http.Request) (*mailroom.SendBatchRequest, error) {
	body, err := readJSONBody(r)
	if err != nil {
		return nil, err
	}
	dec := jsontext.NewDecoder(bytes.NewBuffer(body), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if dec.PeekKind() != '{' {
		v, err := dec.ReadValue()
		if err != nil {
			return nil, jsonError(err)
		}
		return nil, mailroom.Errorf(mailroom.ECodeInvalidJSON, "The body must be a JSON object, not %s.", kindName(v.Kind()))
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, jsonError(err)
	}
	req := &mailroom.SendBatchRequest{}
	seen := false
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, jsonError(err)
		}
		switch name := tok.String(); {
		case !utf8.ValidString(name):
			return nil, mailroom.Errorf(mailroom.ECodeInvalidJSON, "The body is not valid UTF-8; JSON text must be UTF-8 (RFC 8259 §8.1).")
		case name != "messages":
			return nil, &mailroom.Error{Code: mailroom.ECodeValidation,
				Message: fmt.Sprintf("Unknown field %q.", mailroom.Excerpt(name, mailroom.MaxFieldName)),
				Details: []mailroom.FieldError{{Field: mailroom.Excerpt(name, mailroom.MaxFieldName), Message: "unknown field"}}}
		case seen:
			return nil, mailroom.Errorf(mailroom.ECodeInvalidJSON, "Field \"messages\" is given twice; each name may appear once in an object.")
		}
		seen = true
		if req.Messages, err = readItems(dec); err != nil {
			return nil, err
		}
		if len(req.Messages) > mailroom.MaxBatchMessages {
			return req, nil // Validate says so; the rest is not read
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, jsonError(err)
	}
	if err := endOfBody(dec); err != nil {
		return nil, err
	}
	return req, nil
}

// readItems reads the messages array's items as JSON texts, up to one past
// the limit; null is no items.
func readItems(dec *jsontext.Decoder) ([]jsontext.Value, error) {
	switch k := dec.PeekKind(); k {
	case 'n':
		_, err := dec.ReadToken()
		return nil, jsonErrorOrNil(err)
	case '[':
	default:
		if err := dec.SkipValue(); err != nil {
			return nil, jsonError(err)
		}
		return nil, mailroom.Errorf(mailroom.ECodeInvalidJSON, "Field \"messages\" must be an array, not %s.", kindName(k))
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, jsonError(err)
	}
	var items []jsontext.Value
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return nil, jsonError(err)
		}
		items = append(items, v.Clone()) // v is the decoder's until its next read
		if len(items) > mailroom.MaxBatchMessages {
			return items, nil
		}
	}
	_, err := dec.ReadToken()
	return items, jsonErrorOrNil(err)
}

func jsonErrorOrNil(err error) error {
	if err == nil {
		return nil
	}
	return jsonError(err)
}
