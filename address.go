package mailroom

import (
	"fmt"
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Length limits of an address, in octets of its ASCII form.
const (
	maxLocalPartLength = 64  // RFC 5321 §4.5.3.1.1
	maxAddressLength   = 254 // RFC 5321 §4.5.3.1.3 (a 256-octet path less its angle brackets), RFC 3696 errata 1690
)

// ParseAddress parses one mailbox, "addr" or "Name <addr>", strictly
// enough that what it accepts can be put in a header and an SMTP command
// as it is:
//
//   - The display name may be quoted ("Doe, John" <j@example.com>) and may
//     hold any Unicode text, but no control characters (CR and LF above
//     all: they would end the header line and start another).
//   - The local part may be a dot-atom or a quoted string ("john doe"@…);
//     it is kept in its canonical form, quoted only when it must be. It must
//     be ASCII: non-ASCII local parts need SMTPUTF8 (RFC 6531), which
//     Mailroom does not offer its relays.
//   - The domain must be a host name (RFC 1035 §2.3.1 letters, digits,
//     hyphens, at least two labels); internationalised names are converted
//     to lower-case A-labels (RFC 5891), so "user@Bücher.example" becomes
//     "user@xn--bcher-kva.example". IP address literals are refused. The
//     public-suffix rule of NormalizeDomainName is not applied: it is about
//     owning a sending domain, not about whether a mailbox can exist.
//   - Comments ("j@example.com (John)"), group syntax ("Team: a@x, b@y;"),
//     source routes and several addresses in one string are refused,
//     although RFC 5322 allows some of them: net/mail would quietly turn a
//     comment into a display name and a one-member group into its member,
//     which is not what a client that wrote them meant.
//
// The error is a validation *Error whose Message says what is wrong, written
// to follow the name of the field that held the address.
func ParseAddress(s string) (Address, error) {
	a, problem := parseAddress(s)
	if problem != "" {
		return Address{}, &Error{Code: ECodeValidation, Message: problem}
	}
	return a, nil
}

// AddressKey is the identity of an address for finding duplicates: the
// whole address lower-cased. RFC 5321 §2.4 lets a server treat local parts
// case-sensitively, but hardly any does, and sending one person the same
// message twice is a worse mistake than refusing "Bob@x" next to "bob@x".
func AddressKey(addr string) string { return strings.ToLower(addr) }

// parseAddress returns the address, or a message saying what is wrong.
func parseAddress(s string) (Address, string) {
	s = strings.Trim(s, " ")
	if s == "" {
		return Address{}, `is empty; give an address such as "name@example.com" or "Name <name@example.com>"`
	}
	if !utf8.ValidString(s) {
		return Address{}, "is not valid UTF-8"
	}
	if msg := checkControlCharacters(s, false); msg != "" {
		return Address{}, msg
	}
	if msg := checkAddressSyntax(s); msg != "" {
		return Address{}, msg
	}
	if !strings.Contains(s, "@") {
		return Address{}, fmt.Sprintf(`%q has no "@"; an address looks like "name@example.com"`, Excerpt(s, MaxQuoted))
	}
	parsed, err := mail.ParseAddress(s)
	if err != nil {
		return Address{}, fmt.Sprintf(`%q is not a valid address; write "name@example.com" or "Name <name@example.com>", and put a display name with special characters in double quotes ("Doe, John" <john@example.com>)`, Excerpt(s, MaxQuoted))
	}
	// net/mail decodes RFC 2047 encoded-words in display names, which can
	// smuggle in the very line breaks checked for above, and turns bytes
	// that are not valid in their charset into U+FFFD: the name stored and
	// sent would not be the one the client wrote.
	if msg := checkControlCharacters(parsed.Name, true); msg != "" {
		return Address{}, msg
	}
	if strings.ContainsRune(parsed.Name, utf8.RuneError) && !strings.ContainsRune(s, utf8.RuneError) {
		return Address{}, "has an encoded word (=?…?=) in its display name that does not decode to valid text in its charset"
	}
	addr, msg := CanonicalAddrSpec(parsed.Address)
	if msg != "" {
		return Address{}, msg
	}
	return Address{Name: parsed.Name, Address: addr}, ""
}

// checkControlCharacters refuses control characters, CR and LF with the
// reason spelled out because they are the way headers get injected.
func checkControlCharacters(s string, inName bool) string {
	where := ""
	if inName {
		where = "display name "
	}
	for _, r := range s {
		switch {
		case r == '\r' || r == '\n':
			return "has a line break (CR or LF) in its " + where + "text; line breaks would end the header and let the rest be read as new headers"
		case unicode.IsControl(r):
			return fmt.Sprintf("has a control character (%U) in its %stext", r, where)
		}
	}
	return ""
}

// checkAddressSyntax looks outside quoted strings for the RFC 5322
// constructs Mailroom does not accept in one address.
func checkAddressSyntax(s string) string {
	inQuote, escaped := false, false
	for _, r := range s {
		if inQuote {
			switch {
			case escaped:
				escaped = false
			case r == '\\':
				escaped = true
			case r == '"':
				inQuote = false
			}
			continue
		}
		switch r {
		case '"':
			inQuote = true
		case ',':
			return `has a comma outside double quotes: give each address as its own array element, and quote a display name that contains a comma ("Doe, John" <john@example.com>)`
		case ';', ':':
			return `uses group or route syntax ("Team: a@example.com;"), which is not accepted; give each address as its own array element`
		case '(', ')':
			return `has a comment in parentheses, which is not accepted; put the name in front of the address instead ("John <john@example.com>")`
		}
	}
	return ""
}

// CanonicalAddrSpec checks the local part and the domain of an address as
// net/mail returns it (local part unquoted) and returns it in canonical
// form: local part quoted only if it must be, domain in lower-case A-labels.
func CanonicalAddrSpec(addrSpec string) (string, string) {
	at := strings.LastIndexByte(addrSpec, '@')
	if at < 0 {
		return "", fmt.Sprintf(`%q has no "@"`, Excerpt(addrSpec, MaxQuoted))
	}
	local, domain := addrSpec[:at], addrSpec[at+1:]
	if local == "" {
		return "", fmt.Sprintf(`%q has nothing before the "@"`, Excerpt(addrSpec, MaxQuoted))
	}
	for _, r := range local {
		if r >= utf8.RuneSelf {
			return "", fmt.Sprintf(`%q has non-ASCII characters before the "@"; such addresses need SMTPUTF8, which is not supported (internationalised domains after the "@" are fine)`, Excerpt(addrSpec, MaxQuoted))
		}
	}
	local = QuoteLocalPart(local)
	if strings.ContainsAny(local, "<>") {
		// RFC 5321 §4.1.2 allows them quoted, but they close the path
		// <local@domain> in MAIL and RCPT, and few servers parse them.
		return "", fmt.Sprintf(`%q has "<" or ">" before the "@", which mail servers do not accept`, Excerpt(addrSpec, MaxQuoted))
	}
	if len(local) > maxLocalPartLength {
		return "", fmt.Sprintf(`%q has %d characters before the "@"; at most %d are allowed`, Excerpt(addrSpec, MaxQuoted), len(local), maxLocalPartLength)
	}
	ascii, msg := normalizeMailDomain(domain)
	if msg != "" {
		return "", fmt.Sprintf("%q: the domain %s", Excerpt(addrSpec, MaxQuoted), msg)
	}
	addr := local + "@" + ascii
	if len(addr) > maxAddressLength {
		return "", fmt.Sprintf("%q is %d characters long (after IDNA encoding); an address may have at most %d", Excerpt(addrSpec, MaxQuoted), len(addr), maxAddressLength)
	}
	return addr, ""
}

// QuoteLocalPart returns local as a dot-atom when it is one, else as a
// quoted string (RFC 5321 §4.1.2), so that `"john"@x` and `john@x` are one
// address and `"john doe"@x` survives into RCPT TO.
func QuoteLocalPart(local string) string {
	if isDotAtom(local) {
		return local
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(local); i++ {
		if c := local[i]; c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(local[i])
	}
	b.WriteByte('"')
	return b.String()
}

// isDotAtom reports whether s is an RFC 5322 §3.2.3 dot-atom-text.
func isDotAtom(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '.' && !isAtext(c) {
			return false
		}
	}
	return true
}

// isAtext reports whether c is an RFC 5322 §3.2.3 atext character.
func isAtext(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0
}

// normalizeMailDomain returns the domain of a mailbox in lower-case
// A-labels, or a message that completes "the domain …".
func normalizeMailDomain(domain string) (string, string) {
	if strings.HasPrefix(domain, "[") {
		return "", "is an address literal; use a domain name, not an IP address"
	}
	name := strings.ToLower(domain)
	// Explain ASCII mistakes before IDNA gives a vaguer answer.
	for _, r := range name {
		if r < utf8.RuneSelf && r != '.' && r != '-' && !('a' <= r && r <= 'z') && !('0' <= r && r <= '9') {
			return "", fmt.Sprintf("%q may contain only letters, digits, hyphens and dots, not %q", Excerpt(domain, MaxQuoted), r)
		}
	}
	// The lookup profile maps and validates as resolvers do (UTS #46 §4,
	// RFC 5891 §5.4), so the name kept is the one DNS answers for.
	ascii, err := idna.Lookup.ToASCII(name)
	if err != nil {
		// Explain a structural mistake if there is one; the IDNA
		// library's own text is not written for customers. Lengths are
		// left out: they count only after encoding.
		if msg := checkHostLabels(name, false); msg != "" {
			return "", fmt.Sprintf("%q %s", Excerpt(domain, MaxQuoted), msg)
		}
		return "", fmt.Sprintf("%q is not a valid internationalised domain name", Excerpt(domain, MaxQuoted))
	}
	if msg := checkHostLabels(ascii, true); msg != "" {
		return "", fmt.Sprintf("%q %s", Excerpt(domain, MaxQuoted), msg)
	}
	return ascii, ""
}

// checkHostLabels applies RFC 1035 §2.3.1 and §2.3.4 to a host name. It
// lets non-ASCII through so that it can explain a name IDNA refused; the
// length limits apply only when lengths is set (to the encoded name).
func checkHostLabels(name string, lengths bool) string {
	labels := strings.Split(name, ".")
	if len(labels) < 2 {
		return `must have at least two labels, such as "example.com"`
	}
	for _, l := range labels {
		switch {
		case l == "":
			return "has an empty label (two dots in a row, or a dot at an end)"
		case lengths && len(l) > 63:
			return fmt.Sprintf("has a label of %d characters; at most 63 are allowed (after IDNA encoding)", len(l))
		case l[0] == '-' || l[len(l)-1] == '-':
			return fmt.Sprintf("has a label that starts or ends with a hyphen: %q", Excerpt(l, MaxQuoted))
		}
	}
	if lengths && len(name) > 253 {
		return fmt.Sprintf("is %d characters long; at most 253 are allowed (after IDNA encoding)", len(name))
	}
	// RFC 3696 §2: an all-numeric top-level label means an IP address.
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return "must be a domain name, not an IP address"
	}
	return ""
}
