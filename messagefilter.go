package mailroom

import (
	"slices"
	"strings"
	"time"
)

// TagFilter is one tag=key:value filter of the email log.
type TagFilter struct {
	Key, Value string
}

// MaxTagFilters caps the tag= filters of one log query: a message holds
// at most MaxTags tags, so more filters could only match nothing, and each
// costs the store a lookup.
const MaxTagFilters = MaxTags

// ParseTagFilters reads repeated tag=key:value parameters (docs/api.md "The email log":
// repeatable, all must match) into field errors or filters, sorted and
// without repeats, so that equal queries are equal filters.
func ParseTagFilters(v *Validator, field string, raw []string) []TagFilter {
	if len(raw) > MaxTagFilters {
		v.Add(field, "given %d times; at most %d tag filters are allowed", len(raw), MaxTagFilters)
		return nil
	}
	var out []TagFilter
	for _, s := range raw {
		k, val, ok := strings.Cut(s, ":")
		if !ok || k == "" {
			v.Add(field, "use tag=key:value")
			continue
		}
		// A key no message can have would match nothing, silently.
		if msg := checkTagKey(k); msg != "" {
			v.Add(field, "%s", msg)
			continue
		}
		out = append(out, TagFilter{Key: k, Value: val})
	}
	slices.SortFunc(out, func(a, b TagFilter) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return strings.Compare(a.Value, b.Value)
	})
	return slices.Compact(out)
}

// CursorScope names the list and filters f selects, for the API's cursor
// binding (package http): two queries that select the same messages have
// the same scope.
func (f MessageFilter) CursorScope() string {
	var b strings.Builder
	b.WriteString("messages")
	field := func(name, value string) {
		if value != "" {
			b.WriteString("\x00" + name + "=" + value)
		}
	}
	at := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	field("status", string(f.Status))
	field("category", string(f.Category))
	field("template", f.Template)
	field("to", AddressKey(f.To))
	field("from", AddressKey(f.From))
	field("since", at(f.Since))
	field("until", at(f.Until))
	for _, t := range f.Tags {
		field("tag", t.Key+":"+t.Value)
	}
	field("event", string(f.Event))
	field("olderThan", f.OlderThan)
	field("newerThan", f.NewerThan)
	if f.OldestFirst {
		field("order", "oldestFirst")
	}
	return b.String()
}
