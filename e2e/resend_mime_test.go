package e2e

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
)

// receivedMail is a message as the MX got it, read with the standard
// library's MIME reader (not Mailroom's composer), so that what arrived is
// checked by a reader of its own.
type receivedMail struct {
	Header mail.Header
	Rcpts  []string
	// Parts are the leaves of the MIME tree, in order, their bodies
	// decoded from their transfer encoding.
	Parts []mimeLeaf
	Raw   []byte
}

type mimeLeaf struct {
	MediaType   string
	Params      map[string]string
	Disposition string
	Filename    string
	ContentID   string
	Body        []byte
}

// parseReceived reads data; a part it cannot read is left out, and the
// test that looks for it fails saying what is missing.
func parseReceived(data []byte, rcpts []string) receivedMail {
	rm := receivedMail{Rcpts: rcpts, Raw: data}
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return rm
	}
	rm.Header = m.Header
	rm.Parts = leaves(m.Header.Get("Content-Type"), m.Header.Get("Content-Transfer-Encoding"),
		m.Header.Get("Content-Disposition"), m.Header.Get("Content-ID"), m.Body)
	return rm
}

func leaves(contentType, cte, disposition, contentID string, body io.Reader) []mimeLeaf {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, params = "text/plain", map[string]string{}
	}
	if strings.HasPrefix(mt, "multipart/") {
		var out []mimeLeaf
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err != nil {
				return out
			}
			out = append(out, leaves(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"),
				p.Header.Get("Content-Disposition"), p.Header.Get("Content-ID"), p)...)
		}
	}
	switch strings.ToLower(cte) {
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body)
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	}
	b, _ := io.ReadAll(body)
	leaf := mimeLeaf{MediaType: mt, Params: params, ContentID: contentID, Body: b}
	if d, dp, err := mime.ParseMediaType(disposition); err == nil {
		leaf.Disposition, leaf.Filename = d, dp["filename"]
	}
	if leaf.Filename == "" {
		leaf.Filename = params["name"]
	}
	return []mimeLeaf{leaf}
}

// part is the first leaf whose media type is mt, or whose filename is
// name when name is given.
func (m receivedMail) part(mt, name string) (mimeLeaf, bool) {
	for _, p := range m.Parts {
		if (name == "" && p.MediaType == mt) || (name != "" && p.Filename == name) {
			return p, true
		}
	}
	return mimeLeaf{}, false
}

// text is the decoded text of the part of media type mt, CRLF as LF and
// trailing space trimmed.
func (m receivedMail) text(mt string) string {
	p, _ := m.part(mt, "")
	return strings.TrimSpace(strings.ReplaceAll(string(p.Body), "\r\n", "\n"))
}
