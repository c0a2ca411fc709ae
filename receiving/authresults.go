package receiving

import (
	"bytes"
	"strings"

	"github.com/emersion/go-msgauth/authres"

	"github.com/mailroom/mailroom"
)

// authResultsField is the Authentication-Results field (RFC 8601 §2.2)
// that states the verdicts, under the service's authserv-id, folded one
// method a line, with its CRLF.
func authResultsField(authservID string, v Verdicts) string {
	results := []authres.Result{
		&authres.SPFResult{Value: authres.ResultValue(v.Auth.SPF), From: v.MailFrom, Helo: v.Helo},
	}
	if len(v.Auth.DKIMSignatures) == 0 {
		results = append(results, &authres.DKIMResult{Value: authres.ResultNone})
	}
	for _, s := range v.Auth.DKIMSignatures {
		results = append(results, &authres.DKIMResult{Value: authres.ResultValue(s.Result), Domain: s.Domain})
	}
	results = append(results, &authres.DMARCResult{Value: authres.ResultValue(v.Auth.DMARC), From: v.FromDomain})
	// Format writes "id; method=result params; …" on one line; no value
	// written here holds a ";" (domains, addresses, result words), so
	// the line is folded after each.
	line := authres.Format(authservID, results)
	parts := strings.Split(line, "; ")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return "Authentication-Results: " + strings.Join(parts, ";\r\n\t") + "\r\n"
}

// withoutOwnAuthResults removes every Authentication-Results field that
// claims authservID: such a field did not come from this service's check
// of this message, and RFC 8601 §5 has a receiver remove it before adding
// its own, so that no one downstream trusts it. Fields of other authserv-
// ids are kept, and never read. The rest of the message is untouched.
func withoutOwnAuthResults(data []byte, authservID string) []byte {
	fields, rest, _ := splitHeader(data, maxScanFields)
	var out bytes.Buffer
	removed := false
	for _, f := range fields {
		if strings.EqualFold(f.Name, "Authentication-Results") && claims(f.value(), authservID) {
			removed = true
			continue
		}
		out.Write(f.Raw)
	}
	if !removed {
		return data
	}
	out.Write(rest)
	return out.Bytes()
}

// claims says whether an Authentication-Results value names authservID
// as its authserv-id (RFC 8601 §2.2: the first token, before an optional
// version and the first ";", comments and white space around it
// ignored). One the library cannot parse is read by hand, so that a
// malformed forgery is removed too.
func claims(value, authservID string) bool {
	if id, _, err := authres.Parse(value); err == nil && sameID(id, authservID) {
		return true
	}
	value = stripComments(value)
	if i := strings.IndexByte(value, ';'); i >= 0 {
		value = value[:i]
	}
	f := strings.Fields(value)
	return len(f) > 0 && sameID(f[0], authservID)
}

// sameID compares an authserv-id as a reader may take it: a value, so a
// quoted-string too (RFC 8601 §2.2, RFC 2045 §5.1), in any case, and a
// host name with or without its root's final dot.
func sameID(id, authservID string) bool {
	id = strings.TrimSpace(id)
	if len(id) >= 2 && id[0] == '"' && id[len(id)-1] == '"' {
		id = strings.ReplaceAll(id[1:len(id)-1], "\\", "")
	}
	return strings.EqualFold(strings.TrimSuffix(id, "."), strings.TrimSuffix(authservID, "."))
}

// stripComments removes RFC 5322 §3.2.2 comments, nested or not.
func stripComments(s string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && depth > 0:
			i++
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// rank orders result words for "the best of the signatures": a pass
// above all, then a signature that verified and failed, then one that
// could not be checked now, then one that never could.
var rank = map[mailroom.AuthResult]int{
	mailroom.AuthPass: 5, mailroom.AuthFail: 4, mailroom.AuthTempError: 3,
	mailroom.AuthPermError: 2, mailroom.AuthNeutral: 1, mailroom.AuthNone: 0,
}
