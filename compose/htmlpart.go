package compose

import (
	"bytes"
	"fmt"
	"io"
	"mime/quotedprintable"
	"sync"

	"github.com/emersion/go-message/textproto"
)

// htmlPartHeader is the header of the HTML part exactly as compose writes
// it (textPart through go-message's textproto), with its blank line: what
// htmlPart looks for, made by the code that writes it so that the two
// cannot drift apart.
var htmlPartHeader = sync.OnceValue(func() []byte {
	h, err := textPart("text/html", "").header.header()
	if err != nil {
		panic(err)
	}
	var b bytes.Buffer
	if err := textproto.WriteHeader(&b, h.Header); err != nil {
		panic(err)
	}
	return b.Bytes()
})

// delimiterStart begins every boundary delimiter line compose writes
// (RFC 2046 §5.1.1: the CRLF before "--" belongs to the delimiter), since
// its boundaries begin with "=_" (body.go, multipart).
var delimiterStart = []byte("\r\n--=_")

// htmlPart finds the encoded body of the HTML part in body, the body of a
// message compose wrote: body[start:end] is it, its last line's CRLF
// excluded (that one belongs to the delimiter after it). ok is false when
// there is none.
//
// Compose's bytes are searched, not parsed, and the first part whose
// header is exactly htmlPartHeader is the HTML part, because nothing
// before the HTML part can hold that header: bodyTree puts the
// multipart/alternative first in every multipart around it, so what
// comes before it is compose's own multipart headers and delimiters and
// the text part, which is quoted-printable, where every "=" is written
// "=3D" and "charset=utf-8" cannot occur (RFC 2045 §6.7). The
// attachments, the only content compose may write unencoded (a
// message/* one, in 7bit), all come after it. The header must also
// follow a delimiter line of compose's boundaries. Its end is the first
// delimiter after it: quoted-printable cannot hold "=_" either.
func htmlPart(body []byte) (start, end int, ok bool) {
	head := htmlPartHeader()
	i := bytes.Index(body, head)
	if i < 0 {
		return 0, 0, false
	}
	if !bytes.HasSuffix(body[:i], crlf) {
		return 0, 0, false
	}
	line := i - 2
	from := bytes.LastIndex(body[:line], crlf) + 2
	if from < 2 {
		from = 0
	}
	if !bytes.HasPrefix(body[from:line], delimiterStart[2:]) {
		return 0, 0, false
	}
	start = i + len(head)
	n := bytes.Index(body[start:], delimiterStart)
	if n < 0 {
		return 0, 0, false
	}
	return start, start + n, true
}

// encodeHTML encodes html as compose encodes the HTML part: go-message
// writes a quoted-printable part through mime/quotedprintable's Writer,
// which writes every line break as CRLF (RFC 2045 §6.7 rule 4) and keeps
// lines within 76 characters with soft breaks.
func encodeHTML(html string) []byte {
	var b bytes.Buffer
	b.Grow(len(html) + len(html)/16)
	w := quotedprintable.NewWriter(&b)
	// Writes to a bytes.Buffer do not fail.
	_, _ = io.WriteString(w, html)
	_ = w.Close()
	return b.Bytes()
}

// decodeHTML is the text of an encoded HTML part: UTF-8 (the part's
// charset), its line breaks CRLF.
func decodeHTML(enc []byte) (string, error) {
	b, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(enc)))
	if err != nil {
		return "", fmt.Errorf("compose: HTML part: %w", err)
	}
	return string(b), nil
}
