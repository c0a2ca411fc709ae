package tracking

import "strings"

// attrSpan is where one attribute of a start tag's bytes is: its name,
// lower case, and its value's bytes (inside the quotes of a quoted one);
// start is -1 for an attribute without a value.
type attrSpan struct {
	name       string
	start, end int
	quoted     bool
}

// scanAttrs finds the attributes of a start tag's bytes, "<name ...>", as
// the attribute states of WHATWG HTML §13.2.5.32 to §13.2.5.40 read them,
// so that one value can be replaced and every other byte kept. The
// tokenizer gives the decoded values but not where they are; linkEdit
// checks that the two readings agree before anything is changed.
func scanAttrs(tag string) []attrSpan {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }
	i := 1
	for i < len(tag) && !isSpace(tag[i]) && tag[i] != '/' && tag[i] != '>' {
		i++
	}
	var attrs []attrSpan
	for {
		// Before attribute name: a "/" not before ">" is skipped
		// (§13.2.5.40 reconsumes it here).
		for i < len(tag) && (isSpace(tag[i]) || tag[i] == '/') {
			i++
		}
		if i >= len(tag) || tag[i] == '>' {
			return attrs
		}
		// An "=" may start a name (§13.2.5.32).
		ns := i
		i++
		for i < len(tag) && !isSpace(tag[i]) && tag[i] != '/' && tag[i] != '>' && tag[i] != '=' {
			i++
		}
		a := attrSpan{name: strings.ToLower(tag[ns:i]), start: -1, end: -1}
		j := i
		for j < len(tag) && isSpace(tag[j]) {
			j++
		}
		if j < len(tag) && tag[j] == '=' {
			j++
			for j < len(tag) && isSpace(tag[j]) {
				j++
			}
			switch {
			case j < len(tag) && (tag[j] == '"' || tag[j] == '\''):
				k := strings.IndexByte(tag[j+1:], tag[j])
				if k < 0 {
					return nil
				}
				a.start, a.end, a.quoted = j+1, j+1+k, true
				i = j + 1 + k + 1
			case j < len(tag) && tag[j] != '>':
				k := j
				for k < len(tag) && !isSpace(tag[k]) && tag[k] != '>' {
					k++
				}
				a.start, a.end = j, k
				i = k
			default:
				a.start, a.end = j, j
				i = j
			}
		}
		attrs = append(attrs, a)
	}
}
