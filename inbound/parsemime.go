package inbound

import (
	"bufio"
	"bytes"
	"io"
	"mime"
	"strings"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/textproto"
)

// walker goes once through a message's MIME tree (RFC 2046) and keeps the
// parts a report is made of: the first of each kind, read up to its bound.
// It opens multiparts only, never an enclosed message (message/rfc822):
// the text of a returned message is not the reporter's.
type walker struct {
	parts int
	// text is the first text/plain part that is not an attachment,
	// decoded to UTF-8 (RFC 6522 §3: a report's human-readable first
	// part).
	text     string
	haveText bool
	// status is the first message/delivery-status (RFC 3464 §2) or
	// message/global-delivery-status (RFC 6533 §6.2) part.
	status []byte
	// feedback is the first message/feedback-report part (RFC 5965 §3).
	feedback []byte
	// original is the header of the first returned message
	// (message/rfc822, text/rfc822-headers, RFC 6532's message/global,
	// RFC 6533's message/global-headers).
	original *textproto.Header
}

// visit reads one entity: its decoded body is kept when it is a part a
// report is made of, and a multipart's parts are visited in turn.
func (w *walker) visit(h message.Header, body io.Reader, depth int) {
	mediaType, params := contentType(h)
	if strings.HasPrefix(mediaType, "multipart/") {
		// RFC 2046 §5.1.1: a multipart has no transfer encoding of its
		// own beyond 7bit, 8bit, binary; go-message ignores one too.
		if depth < maxDepth {
			w.multipart(body, params["boundary"], depth+1)
		}
		return
	}
	// New decodes the transfer encoding, and the charset of a text part
	// when it is UTF-8 or US-ASCII. An unknown encoding or charset leaves
	// the body as it came (and says so): it is still read.
	e, _ := message.New(h, body)
	switch mediaType {
	case "text/plain":
		if w.haveText || isAttachment(h) {
			return
		}
		w.haveText = true
		w.text = decodeText(readAtMost(e.Body, maxScanText), params["charset"])
	case "message/delivery-status", "message/global-delivery-status":
		if w.status == nil {
			w.status = readFields(e.Body)
		}
	case "message/feedback-report":
		if w.feedback == nil {
			w.feedback = readFields(e.Body)
		}
	case "message/rfc822", "message/global", "text/rfc822-headers", "message/global-headers":
		if w.original == nil {
			// The fields before a bad line, or before the budget ran
			// out, are kept: the Message-ID is usually among them.
			oh, _ := textproto.ReadHeader(bufio.NewReader(&budgetReader{r: e.Body, n: maxPartHeaderBytes}))
			w.original = &oh
		}
	}
}

// multipart visits the parts of a multipart body, within maxParts in all.
// A part's preamble and header are read under a budget; its body is read
// by visit or skipped here, outside the budget. A missing or empty
// boundary, a bad part header or a body cut off ends the walk of this
// multipart with what was read (a truncated report keeps its first parts).
func (w *walker) multipart(body io.Reader, boundary string, depth int) {
	if boundary == "" {
		return
	}
	b := &budgetReader{r: body, n: unlimited}
	mr := textproto.NewMultipartReader(b, boundary)
	var prev *textproto.Part
	for w.parts < maxParts {
		if prev != nil {
			_, _ = io.Copy(io.Discard, prev)
		}
		b.n = maxPartHeaderBytes
		p, err := mr.NextPart()
		b.n = unlimited
		if err != nil {
			return
		}
		w.parts++
		prev = p
		w.visit(message.Header{Header: p.Header}, p, depth)
	}
}

// contentType is the entity's media type, lower-case, and its parameters
// (RFC 2045 §5). text/plain when absent (§5.2). Parameters that
// mime.ParseMediaType refuses (unquoted specials in a boundary, a
// duplicate) are read leniently, as mail readers do.
func contentType(h message.Header) (string, map[string]string) {
	v := h.Get("Content-Type")
	if strings.TrimSpace(v) == "" {
		return "text/plain", map[string]string{}
	}
	if t, params, err := mime.ParseMediaType(v); err == nil {
		return t, params
	}
	t, rest, _ := strings.Cut(v, ";")
	params := map[string]string{}
	for _, kv := range strings.Split(rest, ";") {
		k, val, ok := strings.Cut(kv, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		if !ok || k == "" {
			continue
		}
		if _, dup := params[k]; dup {
			continue
		}
		val = strings.TrimSpace(val)
		if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
			val = val[1 : len(val)-1]
		}
		params[k] = val
	}
	return strings.ToLower(strings.TrimSpace(t)), params
}

// isAttachment reports a part marked "Content-Disposition: attachment"
// (RFC 2183 §2.2): a text/plain attachment is a file, not the report's
// text.
func isAttachment(h message.Header) bool {
	d, _, _ := strings.Cut(h.Get("Content-Disposition"), ";")
	return strings.EqualFold(strings.TrimSpace(d), "attachment")
}

// readFields reads a part of fields (a delivery-status or feedback-report
// part), up to maxStatusBytes. When the part is cut off (the message ends
// before its boundary, or a transfer encoding breaks), its last line, if
// it lacks its end, is dropped: "Status: 5.1" is not a status. The
// fields before it are kept.
func readFields(r io.Reader) []byte {
	b, err := io.ReadAll(io.LimitReader(r, maxStatusBytes))
	if err != nil && len(b) > 0 && b[len(b)-1] != '\n' {
		b = b[:bytes.LastIndexByte(b, '\n')+1]
	}
	if b == nil {
		b = []byte{}
	}
	return b
}

// readAtMost reads up to n bytes of r. A read error ends the read and
// keeps what came before it: a truncated part is read as far as it goes.
func readAtMost(r io.Reader, n int64) []byte {
	b, _ := io.ReadAll(io.LimitReader(r, n))
	return b
}
