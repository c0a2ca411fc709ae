package compose

import (
	"bytes"
	"crypto/sha256"
	"hash"
)

// relaxedBody hashes a body under the "relaxed" body canonicalization of
// RFC 6376 §3.4.4: whitespace at the ends of lines removed, other runs of
// it one space, empty lines at the end removed, and a final CRLF for a
// body that is not empty. It takes the body in pieces, line by line, so
// that a large attachment costs no copy, and its state can be cloned: a
// tracked message's copies differ only in their HTML part, so the part of
// the body before it is hashed once and each copy goes on from there
// (copies.go).
type relaxedBody struct {
	h hash.Hash
	// empties counts the empty lines seen and not hashed yet: they are
	// hashed when a line that is not empty follows, and dropped at the
	// end.
	empties int
	// partial is the last line written, while its CRLF has not come.
	partial []byte
	scratch []byte
}

var crlf = []byte("\r\n")

func newRelaxedBody() *relaxedBody { return &relaxedBody{h: sha256.New()} }

// relaxedBodyHash is the SHA-256 of body, relaxed.
func relaxedBodyHash(body []byte) [sha256.Size]byte {
	r := newRelaxedBody()
	r.write(body)
	return r.sum()
}

// write hashes the next piece of the body. Lines end at CRLF only, as in
// the bytes compose writes; a CRLF may be split between two pieces.
func (r *relaxedBody) write(p []byte) {
	if len(r.partial) > 0 {
		if r.partial[len(r.partial)-1] == '\r' && len(p) > 0 && p[0] == '\n' {
			r.line(r.partial[:len(r.partial)-1])
			r.partial, p = r.partial[:0], p[1:]
		} else {
			i := bytes.Index(p, crlf)
			if i < 0 {
				r.partial = append(r.partial, p...)
				return
			}
			r.partial = append(r.partial, p[:i]...)
			r.line(r.partial)
			r.partial, p = r.partial[:0], p[i+2:]
		}
	}
	for len(p) > 0 {
		i := bytes.Index(p, crlf)
		if i < 0 {
			r.partial = append(r.partial, p...)
			return
		}
		r.line(p[:i])
		p = p[i+2:]
	}
}

// line hashes one line, without its CRLF.
func (r *relaxedBody) line(l []byte) {
	l = bytes.TrimRight(l, " \t")
	if len(l) == 0 {
		r.empties++
		return
	}
	for ; r.empties > 0; r.empties-- {
		r.h.Write(crlf)
	}
	out := r.scratch[:0]
	space := false
	for _, c := range l {
		if c == ' ' || c == '\t' {
			space = true
			continue
		}
		if space {
			out = append(out, ' ')
		}
		space = false
		out = append(out, c)
	}
	out = append(out, '\r', '\n')
	r.h.Write(out)
	r.scratch = out
}

// sum ends the body: a last line without CRLF is a line all the same.
func (r *relaxedBody) sum() [sha256.Size]byte {
	if len(r.partial) > 0 {
		r.line(r.partial)
		r.partial = r.partial[:0]
	}
	var s [sha256.Size]byte
	r.h.Sum(s[:0])
	return s
}

// clone returns a hasher that goes on from r's state; r is not changed.
func (r *relaxedBody) clone() (*relaxedBody, error) {
	h, err := r.h.(hash.Cloner).Clone()
	if err != nil {
		return nil, err
	}
	return &relaxedBody{h: h, empties: r.empties, partial: bytes.Clone(r.partial)}, nil
}
