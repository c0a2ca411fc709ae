package compose

import (
	"crypto/rand"
	"mime"

	"github.com/emersion/go-message"
	"github.com/k3a/html2text"

	"github.com/mailroom/mailroom"
)

// part is one MIME entity (RFC 2045): a leaf holds a body, a multipart
// holds parts.
type part struct {
	header fields
	body   []byte
	parts  []*part
}

// bodyTree builds the MIME structure of m:
//
//	text only              text/plain
//	html (with text)       multipart/alternative: text/plain, text/html
//	+ inline attachments   multipart/related: the above, inline parts
//	+ other attachments    multipart/mixed: the above, attachments
func bodyTree(m *mailroom.Message) (*part, error) {
	if m.Text == "" && m.HTML == "" {
		return nil, ErrNoBody
	}
	text := m.Text
	if text == "" {
		// The API fills Text at accept time (docs/api.md "Sending"); this covers a
		// message that reached the worker without it, so that a reader
		// who will not render HTML still gets words.
		text = html2text.HTML2TextWithOptions(m.HTML,
			html2text.WithLinksInnerText(), html2text.WithListSupport(), html2text.WithUnixLineBreaks())
	}

	content := textPart("text/plain", text)
	if m.HTML != "" {
		// RFC 2046 §5.1.4: alternatives go in increasing faithfulness to
		// the original, and readers show the last one they can, so HTML
		// comes last.
		content = multipart("multipart/alternative", nil, content, textPart("text/html", m.HTML))
	}

	var inline, attached []*part
	for _, a := range m.Attachments {
		p, err := attachmentPart(a)
		if err != nil {
			return nil, err
		}
		if a.ContentID != "" {
			inline = append(inline, p)
		} else {
			attached = append(attached, p)
		}
	}
	if len(inline) > 0 {
		// RFC 2387 §3.1: the type parameter is required and names the
		// root, the first part, which refers to the others by Content-ID.
		rootType := "text/plain"
		if m.HTML != "" {
			rootType = "multipart/alternative"
		}
		content = multipart("multipart/related", map[string]string{"type": rootType},
			append([]*part{content}, inline...)...)
	}
	if len(attached) > 0 {
		content = multipart("multipart/mixed", nil, append([]*part{content}, attached...)...)
	}
	return content, nil
}

// textPart is UTF-8 text in quoted-printable (RFC 2045 §6.7): it keeps
// lines under 76 characters whatever the client sent, is 7-bit clean for
// servers without 8BITMIME, and stays readable in the raw log.
func textPart(mediaType, text string) *part {
	return &part{
		header: fields{
			{"Content-Type", mime.FormatMediaType(mediaType, map[string]string{"charset": "utf-8"})},
			{"Content-Transfer-Encoding", "quoted-printable"},
		},
		body: []byte(text),
	}
}

// multipart gives its parts a boundary chosen here rather than by
// go-message, which would re-set Content-Type and move it to the top of
// the header. "=_" cannot occur in quoted-printable or base64 output, so
// the boundary cannot collide with such content (RFC 2046 §5.1.1); a
// message/* attachment, sent unencoded, could hold it only by guessing
// the 128 random bits after it, drawn anew for each message.
func multipart(mediaType string, params map[string]string, parts ...*part) *part {
	p := map[string]string{"boundary": "=_" + rand.Text()}
	for k, v := range params {
		p[k] = v
	}
	return &part{
		header: fields{{"Content-Type", mime.FormatMediaType(mediaType, p)}},
		parts:  parts,
	}
}

// writeBody writes p's body (not its header, which the caller wrote) to w
// and closes w: for a leaf that flushes the transfer encoding, for a
// multipart it writes the close delimiter.
func (p *part) writeBody(w *message.Writer) error {
	if p.parts == nil {
		if _, err := w.Write(p.body); err != nil {
			return err
		}
		return w.Close()
	}
	for _, c := range p.parts {
		h, err := c.header.header()
		if err != nil {
			return err
		}
		cw, err := w.CreatePart(h)
		if err != nil {
			return err
		}
		if err := c.writeBody(cw); err != nil {
			return err
		}
	}
	return w.Close()
}
