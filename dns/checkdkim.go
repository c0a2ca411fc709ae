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

// checkDKIM verifies that the selector's TXT record publishes the key of
// rec (RFC 6376 §3.6.2.2): some TXT record at the name must be a valid key
// record whose k= and p= are those of rec's value. A domain has several
// DKIM records during a rotation and with Ed25519 (RFC 8463 §4.2), each
// checked against its own key; d's active key stands in for a record
// value without p=.
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
	want, wantK := d.DKIMPublicKey, "rsa"
	if tags, err := parseTags(rec.Value); err == nil {
		if p, ok := lookupTag(tags, "p"); ok && p != "" {
			want = p
		}
		if k, ok := lookupTag(tags, "k"); ok {
			wantK = k
		}
	}

	problem := ""
	for _, txt := range txts {
		p, isKeyRecord := dkimProblem(txt, want, wantK)
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

// dkimProblem returns why txt is not the key record publishing want, a key
// of type wantK ("rsa" or "ed25519"), or "" when it is; keyRecord says
// whether txt is meant as a key record at all.
func dkimProblem(txt, want, wantK string) (problem string, keyRecord bool) {
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
	// k= defaults to rsa (RFC 6376 §3.6.1); an Ed25519 record must say
	// k=ed25519 (RFC 8463 §4.2).
	if k, _ := lookupTag(tags, "k"); k != wantK && (k != "" || wantK != "rsa") {
		if k == "" {
			k = "rsa (the default)"
		}
		return fmt.Sprintf("The DKIM record says k=%s, but this key is k=%s.", k, wantK), true
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
