package mailroom

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// MaxIdempotencyKeyLength is the longest idempotency key (docs/api.md "Sending").
const MaxIdempotencyKeyLength = 256

// digestVersion starts the digested text, so that a future change of the
// canonical form can never make an old digest equal a new one by chance.
const digestVersion = "mailroom.send.v1\n"

// sourceDigestVersion starts the digest of a request digested as another
// surface received it (SendRequest.SourceDigest).
const sourceDigestVersion = "mailroom.send.source.v1\n"

// ResolveIdempotencyKey returns the request's idempotency key from the body
// field and the Idempotency-Key header, either or both (then equal). An
// empty key is an error in either place: a header sent empty is a client
// that meant to send a key and lost it, and taking it as "no key" would
// turn its retries into duplicates. The header is a single value (RFC 9110
// §5.3): given on several lines, they must all be the same key.
func ResolveIdempotencyKey(v *Validator, body *string, header []string) string {
	ok := true
	if body != nil {
		if msg := CheckIdempotencyKey(*body); msg != "" {
			v.Add("idempotencyKey", "%s", msg)
			ok = false
		}
	}
	var fromHeader *string
	for i, h := range header {
		if h != header[0] {
			v.Add("idempotencyKey", "the Idempotency-Key header is given %d times with different values; give it once", len(header))
			ok = false
			break
		}
		if i == 0 {
			if msg := CheckIdempotencyKey(h); msg != "" {
				v.Add("idempotencyKey", "the Idempotency-Key header %s", msg)
				ok = false
			}
			fromHeader = &header[0]
		}
	}
	switch {
	case !ok:
		return ""
	case body != nil && fromHeader != nil && *body != *fromHeader:
		v.Add("idempotencyKey", "differs from the Idempotency-Key header; give the key once, or the same key in both places")
		return ""
	case body != nil:
		return *body
	case fromHeader != nil:
		return *fromHeader
	}
	return ""
}

// CheckIdempotencyKey allows 1..256 printable ASCII characters (0x20..0x7E),
// which fit in an HTTP header and in any log as they are.
func CheckIdempotencyKey(k string) string {
	if k == "" {
		return "must not be empty; leave it out if you do not need one"
	}
	if len(k) > MaxIdempotencyKeyLength {
		return fmt.Sprintf("has %d characters; at most %d are allowed", len(k), MaxIdempotencyKeyLength)
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c > 0x7e {
			return "may contain only printable ASCII characters (space to \"~\"); a UUID is a good key"
		}
	}
	return ""
}

// Digest is the SHA-256 of the request in a canonical form, to tell a retry
// of a request (same digest: answer duplicate) from another request under
// the same idempotency key (409 idempotency_key_reused).
//
// The canonical form is the request's JSON encoding with every object's
// keys sorted and arrays in order, the idempotency key left out (it names
// the request, it is not part of it). Absent fields and their empty values
// are one, and "to": "a@x" is the same as "to": ["a@x"], as they are to
// Validate. Variables are canonicalized as RFC 8785 says for their objects
// and strings, but numbers keep the text they were sent with, every digit
// of it (RFC 8785 would round them to float64).
//
// Digest returns nil only for a request that cannot be encoded as JSON
// (variables that are not valid JSON, say), which a request decoded from
// JSON never is.
//
// A request with a SourceDigest is digested from it alone (under its own
// prefix, so that it never equals a canonical form's digest).
func (r *SendRequest) Digest() []byte {
	if r.SourceDigest != nil {
		h := sha256.New()
		h.Write([]byte(sourceDigestVersion))
		h.Write(r.SourceDigest)
		return h.Sum(nil)
	}
	if r.Variables.Present() && !jsontext.Value(r.Variables).IsValid() {
		return nil
	}
	h := sha256.New()
	h.Write([]byte(digestVersion))
	// encoding/json writes map keys sorted, at every depth; the struct is
	// spelt out as a map so that the order of its fields does not matter.
	if err := json.NewEncoder(h).Encode(r.canonical()); err != nil {
		return nil
	}
	return h.Sum(nil)
}

// canonical returns the request as maps, slices and scalars, without the
// idempotency key and without empty fields.
func (r *SendRequest) canonical() map[string]any {
	m := map[string]any{}
	put := func(name string, value any, present bool) {
		if present {
			m[name] = value
		}
	}
	put("from", r.From, r.From != "")
	put("to", []string(r.To), len(r.To) > 0)
	put("cc", []string(r.Cc), len(r.Cc) > 0)
	put("bcc", []string(r.Bcc), len(r.Bcc) > 0)
	put("replyTo", []string(r.ReplyTo), len(r.ReplyTo) > 0)
	put("subject", r.Subject, r.Subject != "")
	put("category", r.Category, r.Category != nil)
	put("html", r.HTML, r.HTML != "")
	put("text", r.Text, r.Text != "")
	put("template", r.Template, r.Template != nil)
	if r.Variables.Present() {
		v := jsontext.Value(bytes.Clone(r.Variables))
		// Cannot fail: Digest checked that the value is valid.
		_ = v.Canonicalize(jsontext.CanonicalizeRawInts(false), jsontext.CanonicalizeRawFloats(false))
		m["variables"] = json.RawMessage(v)
	}
	put("headers", r.Headers, len(r.Headers) > 0)
	put("tags", r.Tags, len(r.Tags) > 0)
	put("scheduledAt", r.ScheduledAt, r.ScheduledAt != nil)
	// Absent when false, so that the digests of requests made before
	// requireTls existed are unchanged.
	put("requireTls", true, r.RequireTLS)
	// Absent when not given, for the same reason; each of its fields only
	// when given, since a field left out (or null) follows the domain, and
	// so absent too when it gives none: {} means what no tracking means.
	if t := r.Tracking; t != nil {
		o := map[string]bool{}
		if t.Opens != nil {
			o["opens"] = *t.Opens
		}
		if t.Clicks != nil {
			o["clicks"] = *t.Clicks
		}
		put("tracking", o, len(o) > 0)
	}
	if len(r.Attachments) > 0 {
		list := make([]map[string]string, len(r.Attachments))
		for i, a := range r.Attachments {
			list[i] = map[string]string{"filename": a.Filename, "content": a.Content, "contentType": a.ContentType, "contentId": a.ContentID}
		}
		m["attachments"] = list
	}
	return m
}
