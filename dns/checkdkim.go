package dns

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"github.com/mailroom/mailroom"
)

// checkDKIM verifies that the selector's TXT record publishes this domain's
// key (RFC 6376 §3.6.2.2): some TXT record at the name must be a valid key
// record whose p= is d's public key.
func (c *Checker) checkDKIM(ctx context.Context, d *mailroom.Domain, rec mailroom.DNSRecord) outcome {
	txts, err := c.resolver().LookupTXT(ctx, rec.Name)
	if err != nil {
		if notFound, o := lookupFailed(err); !notFound {
			return o
		}
		return outcome{
			status:  mailroom.RecordFailed,
			problem: fmt.Sprintf("No TXT record was found at %s; publish the value shown.", rec.Name),
		}
	}
	want := d.DKIMPublicKey
	if want == "" {
		if tags, err := parseTags(rec.Value); err == nil {
			want, _ = lookupTag(tags, "p")
		}
	}

	problem := ""
	for _, txt := range txts {
		p, isKeyRecord := dkimProblem(txt, want)
		if p == "" {
			return outcome{status: mailroom.RecordVerified, found: txts}
		}
		// A record that looks like a DKIM key says more about what is
		// wrong than an unrelated TXT record at the same name.
		if problem == "" || isKeyRecord {
			problem = p
		}
	}
	return outcome{status: mailroom.RecordFailed, found: txts, problem: problem}
}

// dkimProblem returns why txt is not the key record publishing want, or ""
// when it is; keyRecord says whether txt is meant as a key record at all.
func dkimProblem(txt, want string) (problem string, keyRecord bool) {
	tags, err := parseTags(txt)
	if err != nil {
		return fmt.Sprintf("The TXT record is not a valid DKIM tag list: %v.", err), false
	}
	p, hasP := lookupTag(tags, "p")
	_, hasV := lookupTag(tags, "v")
	if !hasP && !hasV {
		return "The TXT record is not a DKIM key record: it has no p= tag.", false
	}
	// RFC 6376 §3.6.1: v= is optional, but when present it must be the
	// first tag and exactly "DKIM1".
	if v, ok := lookupTag(tags, "v"); ok && (tags[0].name != "v" || v != "DKIM1") {
		return "The DKIM record must begin with v=DKIM1.", true
	}
	if k, ok := lookupTag(tags, "k"); ok && k != "rsa" {
		return fmt.Sprintf("The DKIM record says k=%s, but this domain's key is an RSA key (k=rsa).", k), true
	}
	// h= and s=, when present, must allow what Mailroom signs: rsa-sha256
	// signatures of email (RFC 6376 §3.6.1).
	if h, ok := lookupTag(tags, "h"); ok && !slices.Contains(strings.Split(removeWhitespace(h), ":"), "sha256") {
		return fmt.Sprintf("The DKIM record says h=%s, which does not allow sha256.", h), true
	}
	if s, ok := lookupTag(tags, "s"); ok {
		services := strings.Split(removeWhitespace(s), ":")
		if !slices.Contains(services, "*") && !slices.Contains(services, "email") {
			return fmt.Sprintf("The DKIM record says s=%s, which does not allow email.", s), true
		}
	}
	if !hasP {
		return "The DKIM record has no p= tag.", true
	}
	p = removeWhitespace(p)
	if p == "" {
		return "The DKIM record has an empty p=, which means the key was revoked (RFC 6376 §3.6.1).", true
	}
	if !sameKey(p, want) {
		return "The published p= key is not this domain's key; publish the value shown.", true
	}
	return "", true
}

// sameKey compares two base64 keys by the bytes they encode, so that
// padding and line breaks do not matter.
func sameKey(a, b string) bool {
	da, errA := decodeBase64(a)
	db, errB := decodeBase64(removeWhitespace(b))
	if errA != nil || errB != nil {
		return a == removeWhitespace(b)
	}
	return bytes.Equal(da, db)
}

func decodeBase64(s string) ([]byte, error) {
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
}
