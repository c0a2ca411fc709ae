package receiving

import (
	"bytes"
	"strings"
)

// headerField is one field of a message's header as it arrived: its name
// and its raw bytes, continuation lines and line ending included.
type headerField struct {
	Name string
	Raw  []byte
}

// value is the field's unfolded value (RFC 5322 §2.2.3), not decoded.
func (f headerField) value() string {
	v := f.Raw[len(f.Name)+1:]
	v = bytes.ReplaceAll(v, []byte("\r\n"), nil)
	v = bytes.ReplaceAll(v, []byte("\n"), nil)
	return strings.TrimSpace(string(v))
}

// splitHeader cuts data into its header fields and the rest (the empty
// line and the body), keeping every byte: joining the fields' Raw and the
// rest gives data back. It reads at most maxFields fields; a line that is
// neither a field nor a continuation ends the header there (RFC 5322 §2.2:
// what follows is taken as the body, as receivers do with a malformed
// header). It is the one place the service reads a header byte for byte,
// to remove fields (RFC 8601 §5) without touching any other.
func splitHeader(data []byte, maxFields int) (fields []headerField, rest []byte, truncated bool) {
	for len(data) > 0 {
		line := nextLine(data)
		if isBlank(line) || !isFieldStart(line) {
			return fields, data, false
		}
		if len(fields) == maxFields {
			return fields, data, true
		}
		end := len(line)
		for end < len(data) {
			next := nextLine(data[end:])
			// RFC 5322 §2.2.3: a line starting with white space
			// continues the field.
			if next[0] != ' ' && next[0] != '\t' {
				break
			}
			end += len(next)
		}
		colon := bytes.IndexByte(line, ':')
		fields = append(fields, headerField{Name: string(bytes.TrimRight(line[:colon], " \t")), Raw: data[:end:end]})
		data = data[end:]
	}
	return fields, data, false
}

// nextLine is data's first line with its line ending.
func nextLine(data []byte) []byte {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[:i+1]
	}
	return data
}

func isBlank(line []byte) bool {
	return len(bytes.TrimRight(line, "\r\n")) == 0
}

// isFieldStart: a field name is printable ASCII but the colon, followed by
// a colon (RFC 5322 §2.2, §3.6.8); white space before the colon is
// tolerated as RFC 5322 §4.5.1's obsolete syntax.
func isFieldStart(line []byte) bool {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return false
	}
	name := bytes.TrimRight(line[:colon], " \t")
	if len(name) == 0 {
		return false
	}
	for _, c := range name {
		if c < 33 || c > 126 {
			return false
		}
	}
	return true
}
