package receiving

import (
	"bytes"
	"context"
	"strings"

	"github.com/emersion/go-msgauth/dkim"

	"github.com/mailroom/mailroom"
)

// maxSignatures bounds the DKIM signatures verified, each a DNS lookup
// and a hash of the body: a message with more is checked on its first
// ones (RFC 6376 §6.1 lets a verifier limit them).
const maxSignatures = 5

// checkDKIM verifies each DKIM-Signature of data (RFC 6376 §6) and says
// the best result, with each signature's domain, selector and result:
// pass; fail when the signature or body hash does not match; temperror
// when the key could not be looked up now; permerror for a signature
// that can never verify (malformed, no key, the key revoked). A message
// without a signature is none.
func checkDKIM(ctx context.Context, r Resolver, data []byte) (mailroom.AuthResult, []mailroom.DKIMSignatureResult) {
	selectors := signatureSelectors(data)
	if len(selectors) == 0 {
		return mailroom.AuthNone, []mailroom.DKIMSignatureResult{}
	}
	verifs, err := dkim.VerifyWithOptions(bytes.NewReader(data), &dkim.VerifyOptions{
		LookupTXT:        func(name string) ([]string, error) { return r.LookupTXT(ctx, name) },
		MaxVerifications: maxSignatures,
	})
	if err != nil && len(verifs) == 0 {
		return mailroom.AuthPermError, []mailroom.DKIMSignatureResult{}
	}
	best := mailroom.AuthNone
	out := make([]mailroom.DKIMSignatureResult, 0, len(verifs))
	for i, v := range verifs {
		res := mailroom.DKIMSignatureResult{Domain: strings.ToLower(v.Domain), Result: dkimResult(v.Err)}
		// Verifications come in the order of the signatures.
		if i < len(selectors) {
			res.Selector = selectors[i]
		}
		out = append(out, res)
		if rank[res.Result] > rank[best] {
			best = res.Result
		}
	}
	return best, out
}

func dkimResult(err error) mailroom.AuthResult {
	switch {
	case err == nil:
		return mailroom.AuthPass
	case dkim.IsTempFail(err):
		return mailroom.AuthTempError
	case dkim.IsPermFail(err):
		return mailroom.AuthPermError
	}
	return mailroom.AuthFail
}

// signatureSelectors are the s= tags of the DKIM-Signature fields, in
// order ("" for one without), which go-msgauth does not report.
func signatureSelectors(data []byte) []string {
	fields, _, _ := splitHeader(data, maxScanFields)
	var out []string
	for _, f := range fields {
		if !strings.EqualFold(f.Name, "DKIM-Signature") {
			continue
		}
		sel := ""
		for _, tag := range strings.Split(f.value(), ";") {
			k, v, ok := strings.Cut(tag, "=")
			if ok && strings.TrimSpace(k) == "s" {
				sel = strings.Join(strings.Fields(v), "")
			}
		}
		out = append(out, sel)
	}
	return out
}
