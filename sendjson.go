package mailroom

import (
	"reflect"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The JSON shapes of the send request's list and object fields. Each one
// decodes itself item by item from the caller's jsontext.Decoder, so it
// keeps the caller's strict rules (exact names, no repeated names, valid
// UTF-8, no unknown members), and each stops at the first item past its
// limit (docs/api.md "Limits"): a 16 MiB body of tiny items costs one item more than
// the limit, not a slice or map of a million items that validation would
// then walk. Address lists and tags, whose limits are small, are read up
// to maxDecodedItems, so that validation still says how many there were
// ("to, cc and bcc together have 51 addresses") in any request of sensible
// size.

// maxDecodedItems bounds the address lists and tags as they are decoded.
const maxDecodedItems = 1000

// AddressList is an address field that takes a string or an array of
// strings: "a@x.com" and ["a@x.com"] are the same request.
type AddressList []string

// UnmarshalJSONFrom accepts a string, an array of at most maxDecodedItems
// strings, or null. Any other JSON type is a *json.SemanticError naming
// the JSON kind found, which the HTTP layer answers with invalid_json as
// for every other field of the wrong type.
func (l *AddressList) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch k := dec.PeekKind(); k {
	case '"':
		var s string
		if err := json.UnmarshalDecode(dec, &s); err != nil {
			return err
		}
		*l = AddressList{s}
		return nil
	case '[', 'n':
	default:
		return wrongKind(dec, k, reflect.TypeFor[AddressList]())
	}
	field := dec.StackPointer().LastToken()
	list, err := decodeArray[string](dec, maxDecodedItems, '"', func() error {
		return validationError(field, "has more than %d addresses; at most %d are allowed per message", maxDecodedItems, MaxRecipients)
	})
	*l = list
	return err
}

// AttachmentList is the attachments field: at most MaxAttachments items.
type AttachmentList []SendAttachment

// UnmarshalJSONFrom decodes the array item by item and refuses the
// (MaxAttachments+1)th item before decoding it.
func (l *AttachmentList) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	list, err := decodeArray[SendAttachment](dec, MaxAttachments, 0, func() error {
		return tooManyItems("attachments", "attachments", MaxAttachments, "per message")
	})
	*l = list
	return err
}

// HeaderFields is the headers field: name → value, at most MaxHeaders
// entries and MaxHeaderBytes of names and values together.
type HeaderFields map[string]string

// UnmarshalJSONFrom refuses the first entry past either limit.
func (h *HeaderFields) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	m, err := decodeStringObject(dec, reflect.TypeFor[HeaderFields](), func(n, size int) error {
		switch {
		case n > MaxHeaders:
			return tooManyItems("headers", "headers", MaxHeaders, "per message")
		case size > MaxHeaderBytes:
			return validationError("headers", "names and values add up to more than %d octets; at most %d (16 KiB) are allowed per message", MaxHeaderBytes, MaxHeaderBytes)
		}
		return nil
	})
	*h = m
	return err
}

// TagMap is the tags field.
type TagMap map[string]string

// UnmarshalJSONFrom refuses the first pair past maxDecodedItems.
func (t *TagMap) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	m, err := decodeStringObject(dec, reflect.TypeFor[TagMap](), func(n, _ int) error {
		if n > maxDecodedItems {
			return validationError("tags", "has more than %d pairs; at most %d are allowed", maxDecodedItems, MaxTags)
		}
		return nil
	})
	*t = m
	return err
}

// decodeStringObject decodes an object of strings (or null), calling
// check after each name with the number of entries so far and the octets
// of their names and values, before the entry's value is decoded.
func decodeStringObject(dec *jsontext.Decoder, t reflect.Type, check func(n, size int) error) (map[string]string, error) {
	switch k := dec.PeekKind(); k {
	case 'n':
		_, err := dec.ReadToken()
		return nil, err
	case '{':
	default:
		return nil, wrongKind(dec, k, t)
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	m := map[string]string{}
	size := 0
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		if tok.Kind() == '}' {
			return m, nil
		}
		name := tok.String()
		size += len(name)
		if err := check(len(m)+1, size); err != nil {
			return nil, err
		}
		if k := dec.PeekKind(); k != '"' {
			// null is not an empty string: it would write an empty header.
			return nil, wrongKind(dec, k, reflect.TypeFor[string]())
		}
		var value string
		if err := json.UnmarshalDecode(dec, &value); err != nil {
			return nil, err
		}
		size += len(value)
		if err := check(len(m)+1, size); err != nil {
			return nil, err
		}
		m[name] = value
	}
}

// Variables is the variables object of a templated send, kept as the
// JSON text it was sent as: numbers such as 12345678901234567890 or 0.1
// keep every digit (a float64 would not), and decoding it costs a copy of
// its bytes whatever it holds.
type Variables jsontext.Value

// present tells whether the request has variables at all ({} counts).
func (v Variables) Present() bool { return len(v) > 0 }

// UnmarshalJSONFrom accepts an object or null.
func (v *Variables) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch k := dec.PeekKind(); k {
	case 'n':
		_, err := dec.ReadToken()
		*v = nil
		return err
	case '{':
		raw, err := dec.ReadValue()
		*v = Variables(raw.Clone())
		return err
	default:
		return wrongKind(dec, k, reflect.TypeFor[map[string]any]())
	}
}

// MarshalJSONTo writes the object as it was received.
func (v Variables) MarshalJSONTo(enc *jsontext.Encoder) error {
	if len(v) == 0 {
		return enc.WriteToken(jsontext.Null)
	}
	return enc.WriteValue(jsontext.Value(v))
}

// MarshalJSON writes the object as it was received, for encoding/json.
func (v Variables) MarshalJSON() ([]byte, error) {
	if len(v) == 0 {
		return []byte("null"), nil
	}
	return v, nil
}

// decodeArray reads null (nil) or an array of at most limit items of T,
// answering tooMany at the first item past the limit, before decoding it.
// When itemKind is not 0, every item must be of that JSON kind: a null is
// not an empty string.
func decodeArray[T any](dec *jsontext.Decoder, limit int, itemKind jsontext.Kind, tooMany func() error) ([]T, error) {
	switch k := dec.PeekKind(); k {
	case 'n':
		_, err := dec.ReadToken()
		return nil, err
	case '[':
	default:
		return nil, wrongKind(dec, k, reflect.TypeFor[[]T]())
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	list := []T{}
	for dec.PeekKind() != ']' {
		if len(list) == limit {
			return nil, tooMany()
		}
		if k := dec.PeekKind(); itemKind != 0 && k != itemKind {
			return nil, wrongKind(dec, k, reflect.TypeFor[T]())
		}
		var item T
		if err := json.UnmarshalDecode(dec, &item); err != nil {
			return nil, err
		}
		list = append(list, item)
	}
	_, err := dec.ReadToken()
	return list, err
}

// wrongKind skips the value of JSON kind k that is not of type t and
// reports it where it was.
func wrongKind(dec *jsontext.Decoder, k jsontext.Kind, t reflect.Type) error {
	if err := dec.SkipValue(); err != nil {
		return err
	}
	return &json.SemanticError{JSONPointer: dec.StackPointer(), JSONKind: k, GoType: t}
}

func tooManyItems(field, what string, limit int, per string) error {
	return validationError(field, "has more than %d %s; at most %d are allowed %s", limit, what, limit, per)
}

// validationError is a validation *Error about one field.
func validationError(field, format string, args ...any) error {
	var v Validator
	v.Add(field, format, args...)
	return v.Err()
}
