package sites

import (
	"strings"
)

// keyLines finds where each key of a policy file is, for errors that name
// the line: the TOML library reports the lines of syntax errors only, and
// keeps one position per key path, so the keys of the second [[site]]
// would point at the last one's. The file has parsed when this runs; the
// scan follows table headers and `key =` lines, skipping multi-line
// strings.
type keyLines map[lineKey]int

// lineKey names a key: its table ("" for the top level, "default",
// "site"), the table's index among its [[...]] repeats, and the key ("" for
// the table's header).
type lineKey struct {
	table string
	index int
	key   string
}

func scanKeyLines(data []byte) keyLines {
	lines := keyLines{}
	repeats := map[string]int{}
	table, index := "", 0
	inString := "" // the delimiter of the multi-line string the scan is in
	for n, line := range strings.Split(string(data), "\n") {
		n++
		s := strings.TrimSpace(line)
		if inString != "" {
			if strings.Count(s, inString)%2 == 1 {
				inString = ""
			}
			continue
		}
		switch {
		case s == "" || s[0] == '#':
			continue
		case strings.HasPrefix(s, "[["):
			table = headerName(s[2:], "]]")
			index = repeats[table]
			repeats[table]++
			lines.set(table, index, "", n)
			continue
		case s[0] == '[':
			table, index = headerName(s[1:], "]"), 0
			lines.set(table, index, "", n)
			continue
		}
		path, rest, ok := keyPath(s)
		if !ok {
			continue
		}
		t := table
		if t == "" && len(path) > 1 {
			// A dotted key at the top level ("default.max_rate = 1")
			// names its table.
			t, path = path[0], path[1:]
		}
		lines.set(t, index, path[0], n)
		for _, delim := range []string{`"""`, `'''`} {
			if strings.Count(rest, delim)%2 == 1 {
				inString = delim
			}
		}
	}
	return lines
}

func (l keyLines) set(table string, index int, key string, n int) {
	k := lineKey{table, index, key}
	if _, ok := l[k]; !ok {
		l[k] = n
	}
}

// line is where key of the index'th table is, else that table's header,
// else the line of the top-level key that holds it (an inline table), else 0.
func (l keyLines) line(table string, index int, key string) int {
	for _, k := range []lineKey{{table, index, key}, {table, index, ""}, {"", 0, table}} {
		if n, ok := l[k]; ok {
			return n
		}
	}
	return 0
}

// headerName is the table name in a header's text after its opening
// bracket(s).
func headerName(s, closing string) string {
	s, _, _ = strings.Cut(s, closing)
	path, _, _ := keyPath(strings.TrimSpace(s) + "=")
	return strings.Join(path, ".")
}

// keyPath reads a TOML key (bare, "basic" or 'literal' parts joined by
// dots) and the "=" after it, returning the parts and what follows.
func keyPath(s string) (path []string, rest string, ok bool) {
	for {
		s = strings.TrimLeft(s, " \t")
		var part string
		switch {
		case strings.HasPrefix(s, `"`) || strings.HasPrefix(s, `'`):
			end := strings.IndexByte(s[1:], s[0])
			if end < 0 {
				return nil, "", false
			}
			part, s = s[1:1+end], s[2+end:]
		default:
			i := 0
			for i < len(s) && isBareKeyChar(s[i]) {
				i++
			}
			if i == 0 {
				return nil, "", false
			}
			part, s = s[:i], s[i:]
		}
		path = append(path, part)
		s = strings.TrimLeft(s, " \t")
		switch {
		case strings.HasPrefix(s, "."):
			s = s[1:]
		case strings.HasPrefix(s, "="):
			return path, s[1:], true
		default:
			return nil, "", false
		}
	}
}

func isBareKeyChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}
