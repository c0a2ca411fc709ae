package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/mailroom/mailroom"
)

// MaxBodyBytes is the request body limit of API.md §11.
const MaxBodyBytes = 16 << 20

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// decodeJSON reads the request body into dst under the contract's rules:
// 415 unless the body is application/json (UTF-8), 413 past MaxBodyBytes
// (refused from Content-Length before reading when it is declared), 400
// invalid_json for malformed JSON or a field of the wrong JSON type, and 400
// validation_error naming any unknown field, so that typos are not silent.
func decodeJSON(r *http.Request, dst any) error {
	if err := checkContentType(r.Header.Get("Content-Type")); err != nil {
		return err
	}
	if r.ContentLength > MaxBodyBytes {
		return tooLarge()
	}
	resume := pauseBudget(r)
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBodyBytes))
	resume()
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &maxErr):
		return tooLarge()
	case err != nil:
		return mailroom.Errorf(mailroom.ECodeInvalidJSON, "The request body could not be read.")
	case len(bytes.TrimSpace(body)) == 0:
		return mailroom.Errorf(mailroom.ECodeInvalidJSON, "The request body is empty; send a JSON object.")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return mailroom.Errorf(mailroom.ECodeInvalidJSON, "The request body holds more than one JSON value.")
	}
	return nil
}

func tooLarge() error {
	return mailroom.Errorf(mailroom.ECodePayloadTooLarge, "The request body is larger than 16 MiB.")
}

func checkContentType(ct string) error {
	unsupported := mailroom.Errorf(mailroom.ECodeUnsupportedMediaType, "Send the body as Content-Type: application/json.")
	if ct == "" {
		return unsupported
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return unsupported
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return mailroom.Errorf(mailroom.ECodeUnsupportedMediaType, "JSON bodies must be UTF-8.")
	}
	return nil
}

// jsonError explains a decoding failure in the contract's terms.
func jsonError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return mailroom.Errorf(mailroom.ECodeInvalidJSON, "The body is not valid JSON (at byte %d).", syntax.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return mailroom.Errorf(mailroom.ECodeInvalidJSON, "The body ends before its JSON value does.")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return mailroom.Errorf(mailroom.ECodeInvalidJSON, "The body must be a JSON object, not %s.", typ.Value)
		}
		return mailroom.Errorf(mailroom.ECodeInvalidJSON, "Field %q must be %s, not %s.", typ.Field, jsonTypeName(typ.Type.Kind().String()), typ.Value)
	}
	// encoding/json reports unknown fields only as text: `json: unknown field "x"`.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		field := strings.Trim(name, `"`)
		return &mailroom.Error{
			Code:    mailroom.ECodeValidation,
			Message: "Unknown field " + name + ".",
			Details: []mailroom.FieldError{{Field: field, Message: "unknown field"}},
		}
	}
	return mailroom.Errorf(mailroom.ECodeInvalidJSON, "The body is not valid JSON.")
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "bool":
		return "a boolean"
	case "ptr", "interface":
		return "another JSON type"
	}
	return "a number"
}
