package dns

import (
	"fmt"
	"strings"
)

// tag is one tag=value pair of a DKIM or DMARC record.
type tag struct{ name, value string }

// parseTags splits a tag list (RFC 6376 §3.2, which DMARC reuses, RFC 7489
// §6.4): "name=value" pairs separated by ";", with optional whitespace around
// names, "=" and values, and an optional trailing ";". Tag names are case
// sensitive. A name that occurs twice makes the whole list invalid (§3.2).
// Empty pairs (";;") are skipped, as receivers do.
func parseTags(s string) ([]tag, error) {
	var tags []tag
	seen := map[string]bool{}
	for spec := range strings.SplitSeq(s, ";") {
		if strings.TrimSpace(spec) == "" {
			continue
		}
		name, value, ok := strings.Cut(spec, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not a tag=value pair", strings.TrimSpace(spec))
		}
		name = strings.TrimSpace(name)
		if !validTagName(name) {
			return nil, fmt.Errorf("%q is not a valid tag name", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("the tag %s= appears twice", name)
		}
		seen[name] = true
		tags = append(tags, tag{name: name, value: strings.TrimSpace(value)})
	}
	return tags, nil
}

// validTagName: ALPHA *ALNUMPUNC, where ALNUMPUNC is a letter, digit or "_"
// (RFC 6376 §3.2).
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alpha := ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
		if !alpha && (i == 0 || !(('0' <= c && c <= '9') || c == '_')) {
			return false
		}
	}
	return true
}

// lookupTag returns the value of the tag called name, and whether it is there.
func lookupTag(tags []tag, name string) (string, bool) {
	for _, t := range tags {
		if t.name == name {
			return t.value, true
		}
	}
	return "", false
}

// removeWhitespace drops the folding whitespace that base64 values and
// colon-separated lists may contain (RFC 6376 §3.2, §3.6.1).
func removeWhitespace(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, s)
}
