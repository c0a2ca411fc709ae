package compose

import (
	"fmt"
	"mime"
	"path"
	"strings"

	"github.com/mailroom/mailroom"
)

// attachmentPart is one attachment (its transfer encoding is chosen by
// attachmentBody). With a Content-ID it is an inline part that the HTML
// refers to as cid:ID (RFC 2392); otherwise an attachment.
func attachmentPart(a mailroom.Attachment) (*part, error) {
	mediaType, cte, body := attachmentBody(attachmentType(a), a.Content)
	var h fields
	h.add("Content-Type", mediaType)
	h.add("Content-Transfer-Encoding", cte)
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
	return &part{header: h, body: body}, nil
}

// attachmentType is the client's content type, re-formatted so that only a
// well-formed media type reaches the header (a parameter that looks like
// an encoded-word is encoded, see encodeParams); else a guess from the
// file name's extension; else RFC 2046 §4.5.1's "arbitrary binary data".
func attachmentType(a mailroom.Attachment) string {
	if a.ContentType != "" {
		if t, params, err := mime.ParseMediaType(a.ContentType); err == nil {
			if v := mime.FormatMediaType(t, encodeParams(params)); v != "" {
				return v
			}
		}
	}
	if t := mime.TypeByExtension(path.Ext(a.Filename)); t != "" {
		return t
	}
	return octetStream
}

const octetStream = "application/octet-stream"

// dispositionValue is an RFC 2183 Content-Disposition. A non-ASCII file
// name is written by mime.FormatMediaType as an RFC 2231 §4 extended
// parameter (filename*, charset utf-8, bytes percent-encoded); RFC 2047
// encoded-words are not allowed inside a quoted parameter (RFC 2047 §5).
// The name is not split into RFC 2231 continuations, so a name of up to
// 255 bytes (what file systems allow) keeps the line under 998 octets even
// when every byte is percent-encoded. The exception is a name that looks
// like an encoded-word, which is written as encoded-words of its own text
// (encodeParams): the field folds between them.
func dispositionValue(disposition, filename string) string {
	if filename == "" {
		return disposition
	}
	if v := mime.FormatMediaType(disposition, encodeParams(map[string]string{"filename": filename})); v != "" {
		return v
	}
	return disposition
}

// isContentID accepts the printable ASCII of an RFC 2392 content-id
// without its angle brackets: no space, no brackets, no CR or LF, and
// nothing a reader could decode as an encoded-word (it could not be
// encoded without changing the id the HTML refers to).
func isContentID(id string) bool {
	if id == "" || looksEncoded(id) {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c > '~' || c == '<' || c == '>' {
			return false
		}
	}
	return true
}
