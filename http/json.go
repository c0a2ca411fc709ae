package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mailroom/mailroom"
)

// MaxBodyBytes is the request body limit of docs/api.md "Limits".
const MaxBodyBytes = 16 << 20

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// requestJSON are the rules every request body is read by (docs/api.md, the
// conventions): names match exactly ("TO" is not "to", "ſubject" is not
// "subject"), a name given twice and a string that is not valid UTF-8 are
// malformed JSON, and an unknown member is refused so that typos are not
// silent. A proxy or a client library that reads the body another way
// (the last of two names, case-insensitive names, U+FFFD for bad bytes)
// must never see a different request than the service does. These are the
// defaults of encoding/json/v2; they are spelt out so that no default can
// change them.
var requestJSON = jsonv2.JoinOptions(
	jsonv2.MatchCaseInsensitiveNames(false),
	jsonv2.RejectUnknownMembers(true),
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(false),
)

// decodeJSON reads the request body into dst under the contract's rules:
// 415 unless the body is application/json (UTF-8), 413 past MaxBodyBytes
// (refused from Content-Length before reading when it is declared), 400
// invalid_json for malformed JSON (requestJSON) or a field of the wrong
// JSON type, and 400 validation_error naming any unknown field, or for a
// limit that a field's own decoder enforces as it reads (see
// mailroom.AttachmentList). It is the one place a request body is read.
func decodeJSON(r *http.Request, dst any) error {
	body, err := readJSONBody(r)
	if err != nil {
		return err
	}
	return unmarshalRequest(body, dst)
}

// readJSONBody reads a request body for decodeJSON's rules, checking its
// media type and its size.
func readJSONBody(r *http.Request) ([]byte, error) {
	if len(r.Header.Values("Content-Type")) > 1 {
		// Like two Authorization headers: which one counts is not to be
		// guessed, as a proxy might guess the other way.
		return nil, mailroom.Errorf(mailroom.ECodeUnsupportedMediaType, "Send one Content-Type header: application/json.")
	}
	if err := checkContentType(r.Header.Get("Content-Type")); err != nil {
		return nil, err
	}
	if r.ContentLength > MaxBodyBytes {
		return nil, tooLarge()
	}
	resume := pauseBudget(r)
	body, err := readBody(http.MaxBytesReader(nil, r.Body, MaxBodyBytes), r.ContentLength)
	resume()
	var maxErr *http.MaxBytesError
	var own *mailroom.Error
	switch {
	case errors.As(err, &maxErr):
		return nil, tooLarge()
	case errors.As(err, &own):
		// The memory budget refused the rest of a body of unknown length
		// (reserveMemory).
		return nil, own
	case err != nil:
		return nil, mailroom.Errorf(mailroom.ECodeInvalidJSON, "The request body could not be read.")
	case len(bytes.TrimSpace(body)) == 0:
		return nil, mailroom.Errorf(mailroom.ECodeInvalidJSON, "The request body is empty; send a JSON object.")
	}
	return body, nil
}

// firstBodyBuffer is the buffer a body is first read into; it doubles as
// the body arrives.
const firstBodyBuffer = 64 << 10

// readBody reads a body whole into a buffer that grows as the body
// arrives, doubling up to its declared length (with room to see its end):
// a 16 MiB body allocates about twice its size on the way and holds one
// and a half at the last step, where io.ReadAll, which grows a quarter at
// a time, allocates about five times. The buffer is never sized from the
// declared length before the bytes arrive, so that a client that declares
// 16 MiB and sends nothing holds no memory (the budget reserves a body as
// it arrives too, reserveMemory).
func readBody(body io.Reader, declared int64) ([]byte, error) {
	limit := MaxBodyBytes + bytes.MinRead
	if declared > 0 && declared <= MaxBodyBytes {
		limit = int(declared) + bytes.MinRead
	}
	buf := make([]byte, 0, min(firstBodyBuffer, limit))
	for {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), max(min(2*cap(buf), limit), len(buf)+bytes.MinRead))
			copy(grown, buf)
			buf = grown
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// unmarshalRequest decodes one JSON value from body into dst by
// requestJSON, and nothing after it.
func unmarshalRequest(body []byte, dst any) error {
	return unmarshalObject(body, dst, requestJSON, "The body")
}

// unmarshalObject decodes one JSON object from body into dst by opts, and
// nothing after it; what names the object in the error when it is not
// one ("The body", "An email").
func unmarshalObject(body []byte, dst any, opts jsonv2.Options, what string) error {
	// A bytes.Buffer is parsed in place, not copied into the decoder.
	dec := jsontext.NewDecoder(bytes.NewBuffer(body), opts)
	if dec.PeekKind() != '{' {
		v, err := dec.ReadValue()
		if err != nil {
			return jsonError(err)
		}
		return mailroom.Errorf(mailroom.ECodeInvalidJSON, "%s must be a JSON object, not %s.", what, kindName(v.Kind()))
	}
	if err := jsonv2.UnmarshalDecode(dec, dst); err != nil {
		return jsonError(err)
	}
	return endOfBody(dec)
}

// endOfBody refuses anything after the body's one JSON value.
func endOfBody(dec *jsontext.Decoder) error {
	switch _, err := dec.ReadToken(); {
	case err == io.EOF:
		return nil
	case err == nil:
		return mailroom.Errorf(mailroom.ECodeInvalidJSON, "The request body holds more than one JSON value.")
	}
	return mailroom.Errorf(mailroom.ECodeInvalidJSON, "The request body holds data after its JSON value.")
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

// jsonError explains a decoding failure in the contract's terms, naming
// the field as a path such as attachments[0].filename.
func jsonError(err error) error {
	var own *mailroom.Error
	var syntax *jsontext.SyntacticError
	var semantic *jsonv2.SemanticError
	switch {
	case errors.As(err, &own):
		// A limit enforced while decoding (too many attachments, ...).
		return own
	case errors.As(err, &syntax):
		switch {
		case errors.Is(syntax.Err, jsontext.ErrDuplicateName):
			return mailroom.Errorf(mailroom.ECodeInvalidJSON, "Field %q is given twice; each name may appear once in an object.", fieldPath(syntax.JSONPointer))
		case errors.Is(syntax.Err, io.ErrUnexpectedEOF):
			return mailroom.Errorf(mailroom.ECodeInvalidJSON, "The body ends before its JSON value does.")
		case syntax.Err != nil && strings.Contains(syntax.Err.Error(), "invalid UTF-8"):
			// jsontext's error for this is internal: only its text says it.
			return mailroom.Errorf(mailroom.ECodeInvalidJSON, "The body is not valid UTF-8 (at byte %d); JSON text must be UTF-8 (RFC 8259 §8.1).", syntax.ByteOffset)
		}
		return mailroom.Errorf(mailroom.ECodeInvalidJSON, "The body is not valid JSON (at byte %d).", syntax.ByteOffset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return mailroom.Errorf(mailroom.ECodeInvalidJSON, "The body ends before its JSON value does.")
	case errors.As(err, &semantic):
		if errors.Is(semantic.Err, jsonv2.ErrUnknownName) {
			return unknownField(semantic.JSONPointer)
		}
		field := fieldPath(semantic.JSONPointer)
		if semantic.JSONKind != 0 && semantic.GoType != nil {
			return mailroom.Errorf(mailroom.ECodeInvalidJSON, "Field %q must be %s, not %s.", field, goTypeName(semantic.GoType), kindName(semantic.JSONKind))
		}
		return mailroom.Errorf(mailroom.ECodeInvalidJSON, "Field %q has a value that cannot be read.", field)
	}
	return mailroom.Errorf(mailroom.ECodeInvalidJSON, "The body is not valid JSON.")
}

// unknownField names the unknown member at ptr in details: a top-level
// member by its name; one inside an item of a list on the list's field
// with the item's index, as validation does (attachments, index 0,
// unknown field "contnetType").
func unknownField(ptr jsontext.Pointer) error {
	var tokens []string
	for tok := range ptr.Tokens() {
		tokens = append(tokens, tok)
	}
	d := mailroom.FieldError{Field: fieldPath(ptr), Message: "unknown field"}
	if len(tokens) >= 3 {
		if i, err := strconv.Atoi(tokens[1]); err == nil && i >= 0 {
			name := mailroom.Excerpt(strings.Join(tokens[2:], "."), mailroom.MaxFieldName)
			d = mailroom.FieldError{Field: mailroom.Excerpt(tokens[0], mailroom.MaxFieldName), Index: &i, Message: fmt.Sprintf("unknown field %q", name)}
		}
	}
	return &mailroom.Error{
		Code:    mailroom.ECodeValidation,
		Message: fmt.Sprintf("Unknown field %q.", fieldPath(ptr)),
		Details: []mailroom.FieldError{d},
	}
}

// fieldPath writes a JSON pointer (RFC 6901) the way people name fields:
// /attachments/0/filename is attachments[0].filename. The names are the
// client's, of any length: the path is cut to mailroom.MaxFieldName.
func fieldPath(ptr jsontext.Pointer) string {
	var b strings.Builder
	for tok := range ptr.Tokens() {
		if b.Len() > mailroom.MaxFieldName {
			break
		}
		tok = mailroom.Excerpt(tok, mailroom.MaxFieldName)
		if _, err := strconv.ParseUint(tok, 10, 31); err == nil && b.Len() > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return mailroom.Excerpt(b.String(), mailroom.MaxFieldName)
}

// kindName names a JSON kind as found in a body.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '[':
		return "an array"
	case '{':
		return "an object"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '0':
		return "a number"
	}
	return "another JSON type"
}

// goTypeName names the JSON a Go type is read from.
func goTypeName(t reflect.Type) string {
	if t == reflect.TypeFor[mailroom.AddressList]() {
		return "an address or an array of addresses"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Pointer:
		return goTypeName(t.Elem())
	}
	return "another JSON type"
}
