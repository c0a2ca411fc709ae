package mailroom

import (
	"fmt"
	"sort"
	"unicode"
	"unicode/utf8"
)

// Limits of tags (docs/api.md "Sending").
const (
	MaxTags           = 10
	maxTagKeyLength   = 64
	maxTagValueLength = 256 // characters
)

// validateTags checks the tags and returns a copy, or nil when there are
// none. Problems are reported on the field "tags", naming the key; keys
// are checked in sorted order so that the report is the same every time.
func validateTags(v *Validator, tags map[string]string) map[string]string {
	if len(tags) == 0 {
		return nil
	}
	if len(tags) > MaxTags {
		v.Add("tags", "has %d pairs; at most %d are allowed", len(tags), MaxTags)
	}
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]string, len(tags))
	for _, k := range keys {
		value := tags[k]
		if msg := checkTagKey(k); msg != "" {
			v.Add("tags", "%q: %s", k, msg)
			continue
		}
		if msg := checkTagValue(value); msg != "" {
			v.Add("tags", "%q: the value %s", k, msg)
			continue
		}
		out[k] = value
	}
	return out
}

// checkTagKey allows [A-Za-z0-9_-]{1,64}: keys appear in log filters
// (?tag=key:value) and in webhook payloads, where anything else is trouble.
func checkTagKey(k string) string {
	if k == "" {
		return "a tag key must not be empty"
	}
	if len(k) > maxTagKeyLength {
		return fmt.Sprintf("the key has %d characters; at most %d are allowed", len(k), maxTagKeyLength)
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return `the key may contain only letters A-Z and a-z, digits, "_" and "-"`
		}
	}
	return ""
}

// checkTagValue allows up to 256 characters of any text but control
// characters.
func checkTagValue(value string) string {
	if n := utf8.RuneCountInString(value); n > maxTagValueLength {
		return fmt.Sprintf("has %d characters; at most %d are allowed", n, maxTagValueLength)
	}
	for _, r := range value {
		if unicode.IsControl(r) {
			return fmt.Sprintf("must not contain control characters such as %U", r)
		}
	}
	return ""
}
