package compose

import (
	"bufio"
	"bytes"
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/mail"
	"strconv"
	"strings"

	"github.com/emersion/go-message/textproto"

	"github.com/mailroom/mailroom"
)

// Copies prepares the per-recipient copies of mail composed per
// recipient: base is what Compose returned for it, unsigned, and each Copy
// puts fields (a marketing copy's List-Unsubscribe pair) and a DKIM
// signature covering them and base in front of base, whose HTML part it
// first replaces with the recipient's own for tracked mail (docs/api.md
// "Engagement tracking").
//
// The copies are deterministic: t= is the message's Date (when it was
// composed), not the time of the call, and neither RSASSA-PKCS1-v1_5 nor
// Ed25519 has randomness, so a retry sends the very bytes the first
// attempt sent and the log's raw view shows what the recipient got, as
// for mail signed once (docs/design.md "How a message travels").
// go-msgauth's signer stamps t= with the clock and hashes the whole
// message on every call, hence this one, which signs as sign.go does
// (relaxed/relaxed, From over-signed) and is held to the same verifiers
// in the tests (go-msgauth, dkimpy).
//
// The body is hashed once, here, for every copy with the common HTML:
// only the header hash and the signature are per recipient. A copy with
// its own HTML has a body hash of its own, but the part of the body
// before the HTML part is hashed once, here, too.
func (c Composer) Copies(base []byte, key mailroom.DKIMKey) (mailroom.CopyMaker, error) {
	signers, err := signersFor(key)
	if err != nil {
		return nil, err
	}
	if mailroom.IsSigned(base) {
		return nil, fmt.Errorf("compose: copies of a message that is signed already")
	}
	end := bytes.Index(base, []byte("\r\n\r\n"))
	if end < 0 {
		return nil, fmt.Errorf("compose: message has no end of header")
	}
	header, err := readFields(base[:end+4])
	if err != nil {
		return nil, err
	}
	cm := &copyMaker{signers: signers, header: header, base: base, tags: make([]string, len(signers))}
	body := end + 4
	before := newRelaxedBody()
	if start, stop, ok := htmlPart(base[body:]); ok {
		cm.htmlStart, cm.htmlEnd = body+start, body+stop
		before.write(base[body:cm.htmlStart])
		if cm.beforeHTML, err = before.clone(); err != nil {
			return nil, err
		}
		before.write(base[cm.htmlStart:])
	} else {
		before.write(base[body:])
	}
	bh := before.sum()
	cm.bh = base64.StdEncoding.EncodeToString(bh[:])

	stamp := ""
	for _, f := range header {
		if strings.EqualFold(f.name, "Date") {
			if t, err := mail.ParseDate(f.value); err == nil {
				stamp = strconv.FormatInt(t.Unix(), 10)
			}
		}
	}
	for i, ks := range signers {
		cm.tags[i] = "v=1; a=" + algorithm(ks.signer) + "; c=relaxed/relaxed; d=" + ks.key.Domain + "; s=" + ks.key.Selector
		if stamp != "" {
			cm.tags[i] += "; t=" + stamp
		}
	}
	return cm, nil
}

// copyMaker is the mailroom.CopyMaker of one common part. It is not
// changed by its calls, so copies can be made concurrently.
type copyMaker struct {
	signers []keySigner
	header  []rawField
	base    []byte
	// tags are each signature's tags before bh=.
	tags []string
	// bh is the body hash of a copy with the common HTML.
	bh string
	// base[htmlStart:htmlEnd] is the HTML part's encoded body (htmlPart),
	// both 0 when there is none; beforeHTML is the body hashed up to it.
	htmlStart, htmlEnd int
	beforeHTML         *relaxedBody
}

func (cm *copyMaker) HTML() string {
	if cm.htmlEnd == 0 {
		return ""
	}
	html, err := decodeHTML(cm.base[cm.htmlStart:cm.htmlEnd])
	if err != nil {
		// Compose wrote it: quoted-printable it reads back.
		return ""
	}
	return html
}

func (cm *copyMaker) Copy(extra []mailroom.Header, html string) ([]byte, error) {
	bh, tail := cm.bh, cm.base
	var enc []byte
	if html != "" {
		if cm.htmlEnd == 0 {
			return nil, fmt.Errorf("compose: a copy with its own HTML of a message without an HTML part")
		}
		enc = encodeHTML(html)
		r, err := cm.beforeHTML.clone()
		if err != nil {
			return nil, err
		}
		r.write(enc)
		r.write(cm.base[cm.htmlEnd:])
		sum := r.sum()
		bh = base64.StdEncoding.EncodeToString(sum[:])
		tail = cm.base[:cm.htmlStart]
	}

	var head []byte
	own := make([]rawField, 0, len(extra)+len(cm.header))
	for _, h := range extra {
		f, err := formatField(field{h.Name, h.Value})
		if err != nil {
			return nil, fmt.Errorf("compose: %w", err)
		}
		head = append(head, f...)
		own = append(own, rawField{name: h.Name, value: h.Value, raw: string(f[:len(f)-2])})
	}
	all := append(own, cm.header...)
	names := signedNamesOf(all)
	var sigs []byte
	for i, ks := range cm.signers {
		sig, err := signFields(all, names, cm.tags[i]+"; bh="+bh, ks.signer)
		if err != nil {
			return nil, err
		}
		sigs = append(sigs, sig...)
	}
	size := len(sigs) + len(head) + len(cm.base)
	if enc != nil {
		size += len(enc) - (cm.htmlEnd - cm.htmlStart)
	}
	out := append(append(append(make([]byte, 0, size), sigs...), head...), tail...)
	if enc != nil {
		out = append(append(out, enc...), cm.base[cm.htmlEnd:]...)
	}
	return out, nil
}

// rawField is one field of a header as written: its name, its value
// unfolded, and the whole field ("Name: value", folded) without its last
// CRLF.
type rawField struct{ name, value, raw string }

// readFields reads a header block, through its blank line, with
// go-message's textproto: each field's Raw is its bytes as written,
// continuation lines (RFC 5322 §2.2.3) and final CRLF included, which is
// what DKIM signs.
func readFields(block []byte) ([]rawField, error) {
	h, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(block)))
	if err != nil {
		return nil, fmt.Errorf("compose: %w", err)
	}
	out := make([]rawField, 0, h.Len())
	for fs := h.Fields(); fs.Next(); {
		raw, err := fs.Raw()
		if err != nil {
			return nil, fmt.Errorf("compose: %w", err)
		}
		out = append(out, rawField{name: fs.Key(), value: fs.Value(), raw: string(bytes.TrimSuffix(raw, []byte("\r\n")))})
	}
	return out, nil
}

// signedNamesOf is signedNames for a header given as rawFields.
func signedNamesOf(fs []rawField) []string {
	var names []string
	for _, n := range signedHeaders {
		for _, f := range fs {
			if strings.EqualFold(f.name, n) {
				names = append(names, n)
				break
			}
		}
	}
	return append(names, "From")
}

// signFields returns the DKIM-Signature field (RFC 6376 §3.5),
// CRLF-terminated, over the fields of a header that names lists, with tags
// (everything before h= and b=) given.
//
// §5.4.2: for each name in h=, the last instance not yet signed, from the
// bottom up; a name with no instance left signs nothing (and so signs its
// absence). §3.7: the hash takes those fields, relaxed, then the signature
// field itself with an empty b= and without its final CRLF.
func signFields(fs []rawField, names []string, tags string, signer crypto.Signer) (string, error) {
	h := sha256.New()
	used := make([]bool, len(fs))
	for _, n := range names {
		for i := len(fs) - 1; i >= 0; i-- {
			if !used[i] && strings.EqualFold(fs[i].name, n) {
				used[i] = true
				h.Write([]byte(relaxedField(fs[i].raw)))
				h.Write([]byte("\r\n"))
				break
			}
		}
	}
	unsigned := foldSignature("DKIM-Signature: " + tags + "; h=" + strings.Join(names, ":") + "; b=")
	h.Write([]byte(relaxedField(unsigned)))
	b, err := signDigest(signer, h.Sum(nil))
	if err != nil {
		return "", fmt.Errorf("compose: DKIM: %w", err)
	}
	// b= on lines of its own, folded where its base64 may be (§3.5: FWS
	// in it is ignored): the verifier removes the value, folds and all,
	// and finds unsigned again.
	sig := base64.StdEncoding.EncodeToString(b)
	var out strings.Builder
	out.WriteString(unsigned)
	for len(sig) > 0 {
		n := min(len(sig), 72)
		out.WriteString("\r\n ")
		out.WriteString(sig[:n])
		sig = sig[n:]
	}
	out.WriteString("\r\n")
	return out.String(), nil
}

// foldSignature folds the signature field's tags after their ";"
// separators, and a long h= list after its colons (RFC 6376 §3.5 allows
// FWS around them), keeping lines under 78 characters where a tag allows.
func foldSignature(s string) string {
	var out strings.Builder
	line := ""
	add := func(sep, word string) {
		// One more for the separator that may end the line.
		if line != "" && len(line)+len(sep)+len(word)+1 > foldAt {
			out.WriteString(line + strings.TrimRight(sep, " ") + "\r\n")
			line = " " + word
			return
		}
		line += sep + word
	}
	for i, tag := range strings.Split(s, "; ") {
		sep := "; "
		if i == 0 {
			sep = ""
		}
		if !strings.HasPrefix(tag, "h=") || len(tag) <= foldAt {
			add(sep, tag)
			continue
		}
		for j, name := range strings.Split(tag, ":") {
			if j > 0 {
				sep = ":"
			}
			add(sep, name)
		}
	}
	out.WriteString(line)
	return out.String()
}

// relaxedField is the "relaxed" header canonicalization of RFC 6376
// §3.4.2 of a field without its final CRLF: the name in lower case, the
// value unfolded, every run of whitespace one space, none at the end, and
// none around the colon.
func relaxedField(raw string) string {
	name, value, _ := strings.Cut(raw, ":")
	value = strings.ReplaceAll(value, "\r\n", "")
	var b strings.Builder
	b.Grow(len(name) + 1 + len(value))
	b.WriteString(strings.ToLower(strings.TrimRight(name, " \t")))
	b.WriteByte(':')
	start, space := b.Len(), false
	for i := 0; i < len(value); i++ {
		c := value[i]
		if c == ' ' || c == '\t' {
			space = true
			continue
		}
		if space && b.Len() > start {
			b.WriteByte(' ')
		}
		space = false
		b.WriteByte(c)
	}
	return b.String()
}
