package mailroom

import (
	"fmt"
	"strings"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// Length limits of a domain name in its A-label (ASCII) form.
const (
	maxLabelLength  = 63  // RFC 1035 §2.3.4
	maxDomainLength = 253 // RFC 1035 §2.3.4: 255 octets on the wire, less the length octet and the root
)

// NormalizeDomainName returns the canonical form of a sending domain: lower
// case, without a trailing dot, internationalised labels converted to
// A-labels ("bücher.example" → "xn--bcher-kva.example"). Canonical names are
// what the store compares, so "Example.COM." and "example.com" are one domain.
//
// A name that no customer could publish DNS records for is refused with a
// validation *Error on the field "name": fewer than two labels, labels that
// are not letters, digits and hyphens (RFC 1035 §2.3.1, RFC 5891 §4.2.3),
// labels over 63 or names over 253 octets (RFC 1035 §2.3.4), an all-numeric
// top-level label (an IP address, RFC 3696 §2), and bare public suffixes such
// as "com" or "co.uk", under which anyone may register and nobody "owns".
func NormalizeDomainName(s string) (string, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	name = strings.TrimSuffix(name, ".")
	if name == "" {
		return "", domainNameError("is required, for example \"example.com\"")
	}
	if msg := checkASCIICharacters(name); msg != "" {
		return "", domainNameError(msg)
	}
	// The lookup profile maps (UTS #46 §4) and validates (IDNA2008,
	// RFC 5891 §5.4) the way resolvers will, so the name stored is the name
	// that DNS answers for.
	ascii, err := idna.Lookup.ToASCII(name)
	if err != nil {
		// Explain a structural mistake in the input if there is one; the
		// IDNA library's own text is not written for customers.
		if msg := checkLabels(name); msg != "" {
			return "", domainNameError(msg)
		}
		return "", domainNameError(fmt.Sprintf("%q is not a valid internationalised domain name", strings.TrimSpace(s)))
	}
	if msg := checkLabels(ascii); msg != "" {
		return "", domainNameError(msg)
	}
	if suffix, _ := publicsuffix.PublicSuffix(ascii); suffix == ascii {
		// The advice is the service's own words: passed whole, not cut as a
		// quoted value would be.
		var v Validator
		v.Add("name", "%q is a public suffix, under which anyone can register names; add a domain you own, such as %s", ascii, OwnText(`"yourcompany.`+ascii+`"`))
		return "", v.Err()
	}
	return ascii, nil
}

// checkASCIICharacters refuses ASCII that can never be part of a host name
// (spaces, underscores, "@", "/"), before IDNA gives a vaguer answer.
// RFC 1035 §2.3.1 (letters, digits, hyphen); non-ASCII is left to IDNA.
func checkASCIICharacters(name string) string {
	if strings.Contains(name, "://") || strings.Contains(name, "/") || strings.Contains(name, "@") {
		return `must be the domain name alone, such as "example.com": no "https://", path or address`
	}
	for _, r := range name {
		if r >= 0x80 || r == '.' || r == '-' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			continue
		}
		if r == ' ' || r == '\t' {
			return "must not contain spaces"
		}
		return fmt.Sprintf("may contain only letters, digits, hyphens and dots, not %q", r)
	}
	return ""
}

// checkLabels applies the label rules of RFC 1035 §2.3.1 and §2.3.4 to a
// dot-separated name. Non-ASCII characters are let through so that it can
// also explain mistakes in a name IDNA refused.
func checkLabels(name string) string {
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" {
			return "has an empty label: two dots in a row, or a leading dot"
		}
	}
	if len(labels) < 2 {
		return fmt.Sprintf("must have at least two labels, such as \"%s.com\"", name)
	}
	for _, l := range labels {
		if len(l) > maxLabelLength {
			return fmt.Sprintf("has a label of %d characters; each part between dots may have at most %d (after IDNA encoding)", len(l), maxLabelLength)
		}
		if strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") {
			return fmt.Sprintf("has a label that starts or ends with a hyphen: %q", l)
		}
	}
	if len(name) > maxDomainLength {
		return fmt.Sprintf("is %d characters long; a domain name may have at most %d (after IDNA encoding)", len(name), maxDomainLength)
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return "must be a domain name, not an IP address"
	}
	return ""
}

func domainNameError(msg string) error {
	var v Validator
	v.Add("name", "%s", msg)
	return v.Err()
}
