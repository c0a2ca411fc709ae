package tracking

import (
	"cmp"
	"fmt"
	"html"
	"slices"
	"strings"
	"unicode/utf8"

	xhtml "golang.org/x/net/html"

	"github.com/mailroom/mailroom"
)

// Tracker makes the tracked HTML of each recipient's copy of a tracked
// message (mailroom.Tracker), which delivery signs: the HTML is read once
// per message (Prepare), and each copy only splices its recipient's tokens
// into the prepared parts (For), since it runs once per recipient.
type Tracker struct {
	Tokens *Tokens
	// PublicURL is the service's public HTTPS base (--public-url), as
	// unsubscribe.CheckPublicURL returns it (no trailing slash): clicks go
	// through PublicURL/t/c/TOKEN, the pixel is PublicURL/t/o/TOKEN.
	PublicURL string
}

// Prepare reads html once and keeps it byte for byte, except for what
// tracking changes:
//
//   - with t.Clicks, the value of each <a href> and <area href> that is
//     an absolute http or https address (Trackable) becomes the link's
//     click address, HTML-escaped in the value's own quotes (an unquoted
//     value gets double quotes); at most mailroom.MaxTrackedLinks of them,
//     in document order;
//   - with t.Opens, a 1×1 image, the open pixel, goes in as the last
//     element: before the last </body>, or at the very end without one.
//
// Text, comments, <script>, <style> and every other attribute are left as
// they are. The HTML is tokenized as a browser reads it (WHATWG HTML
// §13.2.5), so that a link in a comment or a script is not taken for one;
// the contents of <noscript> are read as markup, as a mail program,
// which runs no scripts, shows them.
func (t Tracker) Prepare(messageID, src string, tr mailroom.Tracking) (mailroom.TrackedHTML, error) {
	if t.Tokens == nil || t.PublicURL == "" {
		return nil, fmt.Errorf("tracking: no public URL is set (--public-url)")
	}
	if _, err := messageULID(messageID); err != nil {
		return nil, err
	}
	p := &preparedHTML{tokens: t.Tokens, messageID: messageID}
	var edits []edit
	if tr.Any() {
		var err error
		if edits, p.links, err = t.scan(src, tr); err != nil {
			return nil, err
		}
	}
	p.assemble(src, edits)
	return p, nil
}

// edit replaces src[start:end] with prefix, a token, and suffix; link is
// the index of the link whose click token it takes, or pixelEdit.
type edit struct {
	start, end     int
	prefix, suffix string
	link           int
}

const pixelEdit = -1

// scan tokenizes src and returns the edits tracking makes and the tracked
// links' original addresses.
func (t Tracker) scan(src string, tr mailroom.Tracking) ([]edit, []string, error) {
	base := html.EscapeString(t.PublicURL)
	var (
		edits   []edit
		links   []string
		bodyEnd = -1
		offset  int
		// end is where the pixel goes without a </body>: after the last
		// token that is whole, so that it goes neither into a tag or
		// comment cut off by the end of the HTML (which a browser drops)
		// nor into the text of a <script> or <title> left open.
		end     int
		rawText string
	)
	z := xhtml.NewTokenizer(strings.NewReader(src))
	for {
		tt := z.Next()
		// The token's bytes are taken from src by their length: the
		// tokenizer lowers names and decodes values in its own buffer.
		n := len(z.Raw())
		start := offset
		offset += n
		if offset > len(src) {
			return nil, nil, fmt.Errorf("tracking: the HTML tokenizer read past the HTML")
		}
		if tt == xhtml.ErrorToken {
			break
		}
		if rawText != "" {
			// Inside <script>, <style>, <title>…: text until its end tag.
			if name, _ := z.TagName(); tt == xhtml.EndTagToken && string(name) == rawText {
				rawText, end = "", offset
			}
			continue
		}
		if whole(tt, src[start:offset]) {
			end = offset
		}
		switch tt {
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			if tt == xhtml.StartTagToken {
				if tag == "noscript" {
					z.NextIsNotRawText()
				} else if rawTextTags[tag] {
					rawText, end = tag, start
				}
			}
			if !tr.Clicks || !hasAttr || (tag != "a" && tag != "area") || len(links) >= mailroom.MaxTrackedLinks {
				continue
			}
			e, url, ok := linkEdit(src[start:offset], tag, tagAttrs(z), t.PublicURL, base)
			if !ok {
				continue
			}
			e.start, e.end, e.link = start+e.start, start+e.end, len(links)
			edits = append(edits, e)
			links = append(links, url)
		case xhtml.EndTagToken:
			if name, _ := z.TagName(); string(name) == "body" {
				bodyEnd = start
			}
		}
	}
	if tr.Opens {
		at := end
		if bodyEnd >= 0 {
			at = bodyEnd
		}
		edits = append(edits, edit{start: at, end: at, link: pixelEdit,
			prefix: `<img src="` + base + `/t/o/`,
			suffix: `" width="1" height="1" alt="" border="0" style="display:block;width:1px;height:1px;border:0" />`})
	}
	// Links come in document order; the pixel may precede a link written
	// after </body>.
	slices.SortStableFunc(edits, func(a, b edit) int { return cmp.Compare(a.start, b.start) })
	return edits, links, nil
}

// rawTextTags are the elements whose contents the tokenizer reads as
// text up to their end tag (WHATWG HTML §13.2.5.2 to §13.2.5.4, and
// <plaintext>, which has none); <noscript> is read as markup here.
var rawTextTags = map[string]bool{"script": true, "style": true, "title": true, "textarea": true, "xmp": true,
	"iframe": true, "noembed": true, "noframes": true, "plaintext": true}

// whole says whether a token's bytes are all of it, not cut off by the
// end of the HTML: text is, unless it ends in the start of a tag; a comment "<!--" needs its "-->" (or
// the forms §13.2.5.43 to §13.2.5.52 also close it); anything else its
// ">".
func whole(tt xhtml.TokenType, raw string) bool {
	switch {
	case tt == xhtml.TextToken:
		// "<" or "</" is text only at the very end, where a tag was
		// about to start.
		return !strings.HasSuffix(raw, "<") && !strings.HasSuffix(raw, "</")
	case tt == xhtml.CommentToken && strings.HasPrefix(raw, "<!--"):
		return raw == "<!-->" || raw == "<!--->" || strings.HasSuffix(raw, "-->") || strings.HasSuffix(raw, "--!>")
	}
	return strings.HasSuffix(raw, ">")
}

// attr is one attribute of a tag as the tokenizer decoded it.
type attr struct{ key, val string }

func tagAttrs(z *xhtml.Tokenizer) []attr {
	var attrs []attr
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		attrs = append(attrs, attr{string(k), string(v)})
	}
	return attrs
}

// linkEdit returns the edit of tag's href (the first, which a browser
// follows; WHATWG HTML §13.2.5.33 drops duplicates) when it is an
// address to track, relative to raw, the tag's bytes. The replacement is
// checked by tokenizing the tag again: every attribute must read as
// before, except href as the click address. A tag this reading and the
// tokenizer's disagree on is left as it is.
func linkEdit(raw, tag string, attrs []attr, publicURL, base string) (edit, string, bool) {
	i := slices.IndexFunc(attrs, func(a attr) bool { return a.key == "href" })
	if i < 0 {
		return edit{}, "", false
	}
	url, ok := Trackable(attrs[i].val, publicURL)
	if !ok {
		return edit{}, "", false
	}
	spans := scanAttrs(raw)
	if len(spans) != len(attrs) || spans[i].start < 0 {
		return edit{}, "", false
	}
	for j := range spans {
		if spans[j].name != attrs[j].key {
			return edit{}, "", false
		}
	}
	e := edit{start: spans[i].start, end: spans[i].end, prefix: base + "/t/c/"}
	if !spans[i].quoted {
		e.prefix, e.suffix = `"`+e.prefix, `"`
	}
	const probe = "Zz9-_"
	want := slices.Clone(attrs)
	want[i].val = publicURL + "/t/c/" + probe
	if got, ok := readTag(raw[:e.start] + e.prefix + probe + e.suffix + raw[e.end:]); !ok || got.tag != tag || !slices.Equal(got.attrs, want) {
		return edit{}, "", false
	}
	return e, url, true
}

type readBack struct {
	tag   string
	attrs []attr
}

// readTag tokenizes one tag.
func readTag(s string) (readBack, bool) {
	z := xhtml.NewTokenizer(strings.NewReader(s))
	tt := z.Next()
	if (tt != xhtml.StartTagToken && tt != xhtml.SelfClosingTagToken) || len(z.Raw()) != len(s) {
		return readBack{}, false
	}
	name, hasAttr := z.TagName()
	r := readBack{tag: string(name)}
	if hasAttr {
		r.attrs = tagAttrs(z)
	}
	return r, true
}

// Trackable says whether an href's value, decoded, is an address to send
// through the service, and returns it as the reader's browser reads it:
// without the ASCII whitespace around it (WHATWG HTML §2.5.2 strips it),
// and otherwise exactly, not normalised, so that the redirect asks for
// what the link would have. It must be an absolute http or https URL,
// scheme in any case, with an authority ("//" or, as browsers take it
// for these schemes, backslashes; WHATWG URL §4.4), no control
// characters (which browsers drop and a Location field cannot carry), at
// most MaxLinkURL bytes of valid UTF-8, and not one of the service's own addresses: an
// unsubscribe page (whose token is the reader's) or a tracking address.
// mailto:, tel:, javascript:, relative and fragment-only links are never
// tracked.
func Trackable(href, publicURL string) (string, bool) {
	u := strings.Trim(href, "\t\n\f\r ")
	if u == "" || len(u) > MaxLinkURL || !utf8.ValidString(u) || strings.ContainsFunc(u, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", false
	}
	scheme, rest, ok := strings.Cut(u, ":")
	if !ok || (!strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https")) {
		return "", false
	}
	slash := func(c byte) bool { return c == '/' || c == '\\' }
	if len(rest) < 3 || !slash(rest[0]) || !slash(rest[1]) || strings.IndexByte("/\\?#", rest[2]) >= 0 {
		return "", false
	}
	for _, own := range []string{publicURL + "/v1/unsubscribe/", publicURL + "/t/"} {
		if len(u) >= len(own) && strings.EqualFold(u[:len(own)], own) {
			return "", false
		}
	}
	return u, true
}

// preparedHTML is a message's HTML cut around its tokens: parts[0],
// token 0, parts[1], …, parts[n].
type preparedHTML struct {
	tokens    *Tokens
	messageID string
	parts     []string
	slots     []int // link index, or pixelEdit
	links     []string
	size      int
}

func (p *preparedHTML) assemble(src string, edits []edit) {
	prev := 0
	part := ""
	for _, e := range edits {
		p.parts = append(p.parts, part+src[prev:e.start]+e.prefix)
		p.slots = append(p.slots, e.link)
		part, prev = e.suffix, e.end
	}
	p.parts = append(p.parts, part+src[prev:])
	for _, s := range p.parts {
		p.size += len(s)
	}
}

// Links returns the tracked links' original addresses, in document order.
func (p *preparedHTML) Links() []string { return slices.Clone(p.links) }

// For returns recipient's copy of the HTML. Tokens are deterministic, so
// the same recipient always gets the same bytes.
func (p *preparedHTML) For(recipient string) (string, error) {
	if len(p.slots) == 0 {
		return p.parts[0], nil
	}
	var b strings.Builder
	b.Grow(p.size + len(p.slots)*(64+len(recipient)*4/3))
	for i, slot := range p.slots {
		b.WriteString(p.parts[i])
		var tok string
		var err error
		if slot == pixelEdit {
			tok, err = p.tokens.SealPixel(Pixel{MessageID: p.messageID, Recipient: recipient})
		} else {
			tok, err = p.tokens.SealLink(Link{MessageID: p.messageID, Recipient: recipient, Index: slot, URL: p.links[slot]})
		}
		if err != nil {
			return "", err
		}
		b.WriteString(tok)
	}
	b.WriteString(p.parts[len(p.parts)-1])
	return b.String(), nil
}
