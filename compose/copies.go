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

// Copies prepares the per-recipient copies of marketing mail: base is what
// Compose returned for it, unsigned, and each call of the function it
// returns puts fields (the recipient's List-Unsubscribe pair) and a DKIM
// signature covering them and base in front of base.
//
// The body hash is computed once, here, for every copy: only the header
// hash and the RSA signature are per recipient. And the copies are
// deterministic: t= is the message's Date (when it was composed), not the
// time of the call, and RSASSA-PKCS1-v1_5 has no randomness, so a retry
// sends the very bytes the first attempt sent and the log's raw view shows
// what the recipient got, as for mail signed once (docs/design.md "How a
// message travels"). go-msgauth's signer stamps t= with the clock and
// hashes the whole message on every call, hence this one, which signs as
// sign.go does (rsa-sha256, relaxed/relaxed, From over-signed) and is held
// to the same verifiers in the tests (go-msgauth, dkimpy).
func (c Composer) Copies(base []byte, key mailroom.DKIMKey) (mailroom.CopyMaker, error) {
	f, err := c.fieldCopies(base, key)
	if err != nil {
		return nil, err
	}
	return fieldCopier(f), nil
}

// fieldCopier is a CopyMaker whose copies differ in their fields alone.
// SHIM until issue 33's per-recipient HTML lands.
type fieldCopier func(fields []mailroom.Header) ([]byte, error)

func (f fieldCopier) HTML() string { return "" }

func (f fieldCopier) Copy(fields []mailroom.Header, html string) ([]byte, error) {
	if html != "" {
		return nil, fmt.Errorf("compose: copies with their own HTML are not made yet")
	}
	return f(fields)
}

func (c Composer) fieldCopies(base []byte, key mailroom.DKIMKey) (func(fields []mailroom.Header) ([]byte, error), error) {
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
	bh := relaxedBodyHash(base[end+4:])
	stamp := ""
	for _, f := range header {
		if strings.EqualFold(f.name, "Date") {
			if t, err := mail.ParseDate(f.value); err == nil {
				stamp = strconv.FormatInt(t.Unix(), 10)
			}
		}
	}
	tags := make([]string, len(signers))
	for i, ks := range signers {
		tags[i] = "v=1; a=" + algorithm(ks.signer) + "; c=relaxed/relaxed; d=" + ks.key.Domain + "; s=" + ks.key.Selector
		if stamp != "" {
			tags[i] += "; t=" + stamp
		}
		tags[i] += "; bh=" + base64.StdEncoding.EncodeToString(bh[:])
	}

	return func(extra []mailroom.Header) ([]byte, error) {
		var head []byte
		own := make([]rawField, 0, len(extra)+len(header))
		for _, h := range extra {
			f, err := formatField(field{h.Name, h.Value})
			if err != nil {
				return nil, fmt.Errorf("compose: %w", err)
			}
			head = append(head, f...)
			own = append(own, rawField{name: h.Name, value: h.Value, raw: string(f[:len(f)-2])})
		}
		all := append(own, header...)
		names := signedNamesOf(all)
		var sigs []byte
		for i, ks := range signers {
			sig, err := signFields(all, names, tags[i], ks.signer)
			if err != nil {
				return nil, err
			}
			sigs = append(sigs, sig...)
		}
		out := make([]byte, 0, len(sigs)+len(head)+len(base))
		return append(append(append(out, sigs...), head...), base...), nil
	}, nil
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

// relaxedBodyHash is the SHA-256 of body under the "relaxed" body
// canonicalization of RFC 6376 §3.4.4: whitespace at the ends of lines
// removed, other runs of it one space, empty lines at the end removed,
// and a final CRLF for a body that is not empty. Line by line, so that a
// large attachment costs no copy.
func relaxedBodyHash(body []byte) [sha256.Size]byte {
	h := sha256.New()
	var line []byte
	empties := 0
	for len(body) > 0 {
		l := body
		if i := bytes.Index(body, []byte("\r\n")); i >= 0 {
			l, body = body[:i], body[i+2:]
		} else {
			body = nil
		}
		l = bytes.TrimRight(l, " \t")
		if len(l) == 0 {
			empties++
			continue
		}
		for ; empties > 0; empties-- {
			h.Write([]byte("\r\n"))
		}
		line = line[:0]
		space := false
		for _, c := range l {
			if c == ' ' || c == '\t' {
				space = true
				continue
			}
			if space {
				line = append(line, ' ')
			}
			space = false
			line = append(line, c)
		}
		line = append(line, '\r', '\n')
		h.Write(line)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
