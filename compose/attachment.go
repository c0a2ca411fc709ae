package compose

import (
	"fmt"
	"mime"
	"path"
	"strings"

	"github.com/mailroom/mailroom"
)

// attachmentPart is one attachment, base64 encoded (RFC 2045 §6.8) so that
// any bytes survive any server. With a Content-ID it is an inline part that
// the HTML refers to as cid:ID (RFC 2392); otherwise an attachment.
func attachmentPart(a mailroom.Attachment) (*part, error) {
	var h fields
	h.add("Content-Type", attachmentType(a))
	h.add("Content-Transfer-Encoding", "base64")
	disposition := "attachment"
	if a.ContentID != "" {
		id := strings.TrimSuffix(strings.TrimPrefix(a.ContentID, "<"), ">")
		if !isContentID(id) {
			return nil, fmt.Errorf("compose: attachment %q: invalid content id %q", a.Filename, a.ContentID)
		}
		h.add("Content-ID", "<"+id+">") // RFC 2045 §7
		disposition = "inline"
	}
	h.add("Content-Disposition", dispositionValue(disposition, a.Filename))
	return &part{header: h, body: a.Content}, nil
}

// attachmentType is the client's content type, re-formatted so that only a
// well-formed media type reaches the header; else a guess from the file
// name's extension; else RFC 2046 §4.5.1's "arbitrary binary data".
func attachmentType(a mailroom.Attachment) string {
	if a.ContentType != "" {
		if t, params, err := mime.ParseMediaType(a.ContentType); err == nil {
			if v := mime.FormatMediaType(t, params); v != "" {
				return v
			}
		}
	}
	if t := mime.TypeByExtension(path.Ext(a.Filename)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// dispositionValue is an RFC 2183 Content-Disposition. A non-ASCII file
// name is written by mime.FormatMediaType as an RFC 2231 §4 extended
// parameter (filename*, charset utf-8, bytes percent-encoded); RFC 2047
// encoded-words are not allowed inside a quoted parameter (RFC 2047 §5).
// The name is not split into RFC 2231 continuations, so a name of up to
// 255 bytes (what file systems allow) keeps the line under 998 octets even
// when every byte is percent-encoded.
func dispositionValue(disposition, filename string) string {
	if filename == "" {
		return disposition
	}
	if v := mime.FormatMediaType(disposition, map[string]string{"filename": filename}); v != "" {
		return v
	}
	return disposition
}

// isContentID accepts the printable ASCII of an RFC 2392 content-id
// without its angle brackets: no space, no brackets, no CR or LF.
func isContentID(id string) bool {
	if id == "" {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c > '~' || c == '<' || c == '>' {
			return false
		}
	}
	return true
}
