package receiving

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"time"

	"github.com/emersion/go-message"
	_ "github.com/emersion/go-message/charset" // charsets beyond UTF-8 and US-ASCII, for bodies and RFC 2047 words
	"github.com/emersion/go-message/mail"

	"github.com/mailroom/mailroom"
)

// Bounds of the parse: whatever arrives, it takes memory and time in
// proportion to the message's size (itself bounded by --receive-max-size).
const (
	// maxHeaders is the most header fields kept of the top-level header.
	maxHeaders = 1000
	// maxHeaderBytes bounds the header of the message and of each part
	// (go-message's default is 1 MiB).
	maxHeaderBytes = 256 << 10
	// maxParts bounds the MIME parts visited; maxDepth the nesting of
	// multiparts (RFC 2046 §5.1). An enclosed message (message/rfc822)
	// is kept as an attachment, never opened: its parts are its own.
	maxParts = 500
	maxDepth = 20
)

// Parsed is what a message's parse yields; what it could not read is said
// in Problem, and the rest is kept.
type Parsed struct {
	From        string
	To, Cc      []string
	Subject     string
	MessageID   string
	Headers     []mailroom.ReceivedHeader
	Text, HTML  string
	Attachments []mailroom.ReceivedAttachment
	Problem     string
}

// Parse reads a received message: its header fields (RFC 5322, words
// decoded per RFC 2047), the first text/plain and text/html parts that
// are not attachments as its text and HTML, and every other leaf part as
// an attachment, decoded (RFC 2045 §6), with its filename (RFC 2183,
// RFC 2231) and Content-ID (RFC 2392). Nothing in raw can make it panic,
// loop or take more than a bounded multiple of len(raw): a malformed
// message yields what could be read and a Problem. now stamps the
// attachments' ids.
func Parse(raw []byte, now time.Time) (p Parsed) {
	defer func() {
		if v := recover(); v != nil {
			p.Problem = join(p.Problem, fmt.Sprintf("the parser failed (%v)", v))
		}
	}()
	p.Headers = []mailroom.ReceivedHeader{}
	p.To, p.Cc = []string{}, []string{}
	p.Attachments = []mailroom.ReceivedAttachment{}

	fields, _, truncated := splitHeader(raw, maxHeaders)
	dec := mime.WordDecoder{CharsetReader: message.CharsetReader}
	for _, f := range fields {
		v := f.value()
		if d, err := dec.DecodeHeader(v); err == nil {
			v = d
		}
		p.Headers = append(p.Headers, mailroom.ReceivedHeader{Name: f.Name, Value: v})
	}
	if truncated {
		p.Problem = join(p.Problem, fmt.Sprintf("more than %d header fields; the others are not listed", maxHeaders))
	}

	e, err := message.ReadWithOptions(bytes.NewReader(raw), &message.ReadOptions{MaxHeaderBytes: maxHeaderBytes})
	if e == nil {
		p.Problem = join(p.Problem, "the header could not be read whole: "+excerpt(err))
		// From, To and Subject are still read from the fields split
		// above, so that the message is never shown without the From its
		// DMARC verdict is about.
		if e = fallbackEntity(raw, fields); e == nil {
			return p
		}
	} else if err != nil {
		p.Problem = join(p.Problem, excerpt(err))
	}
	h := mail.Header{Header: e.Header}
	p.From = firstAddress(h, "From")
	p.To, p.Cc = addresses(h, "To"), addresses(h, "Cc")
	p.Subject, _ = h.Subject()
	if p.Subject == "" {
		p.Subject = h.Get("Subject")
	}
	p.MessageID = strings.Trim(strings.TrimSpace(h.Get("Message-Id")), "<>")

	w := walker{now: now, budget: 2*int64(len(raw)) + 4096}
	w.visit(e, 0)
	p.Text, p.HTML, p.Attachments = w.text, w.html, w.attachments
	if w.problem != "" {
		p.Problem = join(p.Problem, w.problem)
	}
	return p
}

// walker goes once through the MIME tree.
type walker struct {
	now         time.Time
	parts       int
	budget      int64 // decoded bytes left to read, all parts together
	text, html  string
	haveText    bool
	haveHTML    bool
	attachments []mailroom.ReceivedAttachment
	problem     string
}

func (w *walker) fail(format string, args ...any) {
	if w.problem == "" {
		w.problem = fmt.Sprintf(format, args...)
	}
}

func (w *walker) visit(e *message.Entity, depth int) {
	w.parts++
	if w.parts > maxParts {
		w.fail("more than %d MIME parts; the others are not read", maxParts)
		return
	}
	if mr := e.MultipartReader(); mr != nil {
		if depth >= maxDepth {
			w.fail("multiparts nested more than %d deep; the deeper ones are not read", maxDepth)
			return
		}
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return
			}
			if part == nil {
				w.fail("a multipart could not be read: %s", excerpt(err))
				return
			}
			if err != nil && !message.IsUnknownCharset(err) && !message.IsUnknownEncoding(err) {
				w.fail("%s", excerpt(err))
			}
			w.visit(part, depth+1)
			if w.parts > maxParts {
				return
			}
		}
	}
	body, err := w.read(e.Body)
	if err != nil {
		w.fail("a part could not be read whole: %s", excerpt(err))
	}
	mediaType, params, _ := e.Header.ContentType()
	if mediaType == "" {
		mediaType = "text/plain" // RFC 2045 §5.2
	}
	disp, dparams, _ := e.Header.ContentDisposition()
	attached := strings.EqualFold(disp, "attachment") || dparams["filename"] != ""
	switch {
	case mediaType == "text/plain" && !attached && !w.haveText:
		w.haveText, w.text = true, string(body)
		return
	case mediaType == "text/html" && !attached && !w.haveHTML:
		w.haveHTML, w.html = true, string(body)
		return
	}
	ah := mail.AttachmentHeader{Header: e.Header}
	filename, _ := ah.Filename()
	if filename == "" {
		filename = params["name"]
	}
	ct := mediaType
	if cs := params["charset"]; cs != "" && strings.HasPrefix(mediaType, "text/") {
		// The bytes are decoded to UTF-8 (go-message converts text/*).
		ct += "; charset=utf-8"
	}
	w.attachments = append(w.attachments, mailroom.ReceivedAttachment{
		ID:          mailroom.NewID(mailroom.PrefixReceivedAttachment, w.now),
		Filename:    filename,
		ContentType: ct,
		Size:        int64(len(body)),
		ContentID:   strings.Trim(strings.TrimSpace(e.Header.Get("Content-Id")), "<>"),
		Content:     body,
	})
}

// read reads a part's decoded body within the walk's budget: decoding
// never makes more than a few times what arrived, and the budget holds
// it to that whatever a part claims.
func (w *walker) read(r io.Reader) ([]byte, error) {
	var b bytes.Buffer
	n, err := io.Copy(&b, io.LimitReader(r, w.budget+1))
	if n > w.budget {
		w.budget = 0
		return b.Bytes()[:b.Len()-1], errors.New("the decoded parts are larger than the message allows")
	}
	w.budget -= n
	return b.Bytes(), err
}

func firstAddress(h mail.Header, key string) string {
	if l, err := h.AddressList(key); err == nil && len(l) > 0 {
		return l[0].Address
	}
	return ""
}

func addresses(h mail.Header, key string) []string {
	out := []string{}
	l, _ := h.AddressList(key)
	for _, a := range l {
		out = append(out, a.Address)
	}
	return out
}

// excerpt bounds an error's text: it may quote the message.
func excerpt(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// fallbackEntity is the message as read from the fields splitHeader cut
// (at most maxHeaders of them) when go-message's reader refuses its header
// (over maxHeaderBytes): those fields, in order, and the body after the
// header's first empty line. Nil when even that does not parse.
func fallbackEntity(raw []byte, fields []headerField) *message.Entity {
	var h message.Header
	// Add puts a field above the others of its name: adding from the last
	// keeps the order they came in.
	for i := len(fields) - 1; i >= 0; i-- {
		h.Add(fields[i].Name, fields[i].value())
	}
	var body []byte
	if i := bytes.Index(raw, []byte("\r\n\r\n")); i >= 0 {
		body = raw[i+4:]
	} else if i := bytes.Index(raw, []byte("\n\n")); i >= 0 {
		body = raw[i+2:]
	}
	e, _ := message.New(h, bytes.NewReader(body))
	return e
}
