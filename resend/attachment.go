package resend

import (
	"encoding/base64"
	"errors"
	"fmt"
	"reflect"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mailroom/mailroom"
)

// Attachment is one item of an email's attachments as Resend takes it
// (https://resend.com/docs/api-reference/emails/send-email): the file's
// bytes in content, or an https URL in path that Mailroom fetches
// (Fetcher). content_id makes it an inline part; inline_content_id is the
// Go SDK's older name for it.
type Attachment struct {
	Filename        string  `json:"filename"`
	Content         Content `json:"content"`
	Path            string  `json:"path"`
	ContentType     string  `json:"content_type"`
	ContentID       string  `json:"content_id"`
	InlineContentID string  `json:"inline_content_id"`
}

// Content is an attachment's content in each form Resend's SDKs send it:
//   - base64 text, which the Node SDK sends from 6.37 on (and any string a
//     caller gives it);
//   - a JSON array of byte values, which the Go SDK sends (resend-go v3
//     marshals Attachment.Content, a []byte, as a []int) and the Python
//     SDK (list(bytes));
//   - Node's Buffer as JSON.stringify writes it, {"type": "Buffer",
//     "data": [...]}, which older Node SDKs sent.
//
// null and "" are no content. The byte forms are decoded byte by byte
// into the bytes themselves, and stop at the first byte past
// mailroom.MaxAttachmentBytes: a body of 16 MiB of "255," holds 4 MiB, and
// never a slice of numbers eight times that.
type Content struct {
	// Base64 is the text of the base64 form, which Mailroom's own
	// validation decodes and checks.
	Base64 string
	// Bytes are the bytes of an array or Buffer form.
	Bytes []byte
	// Given tells whether the content has any form at all (a byte array
	// may be empty).
	Given bool
}

// Len is how many bytes the content holds once decoded (for base64, as
// its length says, padding aside).
func (c Content) Len() int {
	if c.Base64 != "" {
		return base64.RawStdEncoding.DecodedLen(len(c.Base64))
	}
	return len(c.Bytes)
}

// AsBase64 is the content as Mailroom's send request takes it.
func (c Content) AsBase64() string {
	if c.Base64 != "" || c.Bytes == nil {
		return c.Base64
	}
	return base64.StdEncoding.EncodeToString(c.Bytes)
}

// contentProblem is what is wrong with a content, in words that name it.
type contentProblem string

func (p contentProblem) Error() string { return string(p) }

// UnmarshalJSONFrom reads any of the three forms, or null.
func (c *Content) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*c = Content{}
	switch k := dec.PeekKind(); k {
	case 'n':
		_, err := dec.ReadToken()
		return err
	case '"':
		if err := json.UnmarshalDecode(dec, &c.Base64); err != nil {
			return err
		}
		c.Given = c.Base64 != ""
		return nil
	case '[':
		b, err := decodeByteArray(dec, "content")
		c.Bytes, c.Given = b, err == nil
		return err
	case '{':
		return c.decodeBuffer(dec)
	default:
		if err := dec.SkipValue(); err != nil {
			return err
		}
		return contentProblem(fmt.Sprintf("content is %s; give the file's bytes as base64 text, as an array of byte values or as a Node Buffer", kindName(k)))
	}
}

// decodeBuffer reads Node's {"type": "Buffer", "data": [...]}.
func (c *Content) decodeBuffer(dec *jsontext.Decoder) error {
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	var typ string
	seenData := false
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		switch name := tok.String(); name {
		case "type":
			if dec.PeekKind() != '"' {
				_ = dec.SkipValue()
				return contentProblem(`content is an object whose "type" is not "Buffer"; an object is taken only as Node's Buffer, {"type": "Buffer", "data": [...]}`)
			}
			if err := json.UnmarshalDecode(dec, &typ); err != nil {
				return err
			}
		case "data":
			if dec.PeekKind() != '[' {
				_ = dec.SkipValue()
				return contentProblem(`content is a Buffer whose "data" is not an array of byte values`)
			}
			b, err := decodeByteArray(dec, "content.data")
			if err != nil {
				return err
			}
			c.Bytes, seenData = b, true
		default:
			if err := dec.SkipValue(); err != nil {
				return err
			}
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	if typ != "Buffer" || !seenData {
		return contentProblem(`content is an object that is not Node's Buffer, {"type": "Buffer", "data": [...]}; give the file's bytes as base64 text, as an array of byte values or as a Buffer`)
	}
	c.Given = true
	return nil
}

// decodeByteArray reads an array of integers 0..255 into the bytes they
// are, one token at a time, and stops at the first byte past
// mailroom.MaxAttachmentBytes.
func decodeByteArray(dec *jsontext.Decoder, what string) ([]byte, error) {
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	b := []byte{}
	for dec.PeekKind() != ']' {
		if len(b) == mailroom.MaxAttachmentBytes {
			return nil, contentProblem(fmt.Sprintf("content has more than %d bytes; attachments may add up to at most %d (10 MiB) per message", mailroom.MaxAttachmentBytes, mailroom.MaxAttachmentBytes))
		}
		// A value, not a token: a number token's text would be a
		// string allocated for each byte.
		raw, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		v, ok := byteValue(raw)
		if !ok {
			return nil, contentProblem(fmt.Sprintf("%s[%d] is not a byte value: an array of byte values holds integers from 0 to 255", what, len(b)))
		}
		if len(b) == cap(b) {
			// Doubling: append grows large slices by a quarter, which
			// allocates five times the final size on the way.
			grown := make([]byte, len(b), min(max(2*cap(b), 512), mailroom.MaxAttachmentBytes))
			copy(grown, b)
			b = grown
		}
		b = append(b, v)
	}
	_, err := dec.ReadToken()
	return b, err
}

// byteValue is a number's value if it is an integer from 0 to 255
// written plainly (no sign, fraction or exponent).
func byteValue(raw jsontext.Value) (byte, bool) {
	if raw.Kind() != '0' || len(raw) == 0 || len(raw) > 3 || (len(raw) > 1 && raw[0] == '0') {
		return 0, false
	}
	n := 0
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return byte(n), n <= 255
}

// AttachmentList is an email's attachments: at most
// mailroom.MaxAttachments, whose contents together stop decoding at the
// first byte past mailroom.MaxAttachmentBytes.
type AttachmentList []Attachment

// UnmarshalJSONFrom decodes the array item by item. A content that is
// none of the forms is refused as an invalid attachment, naming it.
func (l *AttachmentList) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch k := dec.PeekKind(); k {
	case 'n':
		_, err := dec.ReadToken()
		*l = nil
		return err
	case '[':
	default:
		if err := dec.SkipValue(); err != nil {
			return err
		}
		return &json.SemanticError{JSONPointer: dec.StackPointer(), JSONKind: k, GoType: reflect.TypeFor[[]Attachment]()}
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	list, total := AttachmentList{}, 0
	for dec.PeekKind() != ']' {
		i := len(list)
		if i == mailroom.MaxAttachments {
			return attachmentError(-1, "has more than %d attachments; at most %d are allowed per message", mailroom.MaxAttachments, mailroom.MaxAttachments)
		}
		var a Attachment
		if err := json.UnmarshalDecode(dec, &a); err != nil {
			var p contentProblem
			if errors.As(err, &p) {
				return attachmentError(i, "%s", string(p))
			}
			return err
		}
		if total += a.Content.Len(); total > mailroom.MaxAttachmentBytes {
			return attachmentError(-1, "add up to more than %d bytes once decoded; at most %d (10 MiB) are allowed per message", mailroom.MaxAttachmentBytes, mailroom.MaxAttachmentBytes)
		}
		list = append(list, a)
	}
	_, err := dec.ReadToken()
	*l = list
	return err
}

// attachmentError is a validation error on attachments, at index i (none
// when i < 0), as Mailroom's validation reports one.
func attachmentError(i int, format string, args ...any) error {
	var v mailroom.Validator
	if i < 0 {
		v.Add("attachments", format, args...)
	} else {
		v.AddAt("attachments", i, format, args...)
	}
	return v.Err()
}

// kindName names a JSON kind in a message.
func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 'f', 't':
		return "a boolean"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "not a JSON value"
}
