package mustache

import (
	"regexp"
	"strings"
	"unicode/utf8"

	cbmustache "github.com/cbroglie/mustache"

	"github.com/mailroom/mailroom"
)

// syntaxError says, in the service's words, where and why a source does not
// parse. The library gives the line; the column is that of the tag the
// error is about, found on that line (for sources with the default
// delimiters; with others the column is that of the line's start).
func syntaxError(source string, pe cbmustache.ParseError) *mailroom.TemplateSyntaxError {
	name := pe.Reason
	var problem, tag string
	switch pe.Code {
	case cbmustache.ErrUnmatchedOpenTag:
		problem, tag = `a tag opened with "{{" is never closed with "}}"`, ``
	case cbmustache.ErrEmptyTag:
		problem, tag = `a tag has no name ("{{}}")`, `\s*\}\}`
	case cbmustache.ErrSectionNoClosingTag:
		problem, tag = `the section "`+name+`" opened here is never closed with {{/`+name+`}}`, `[#^]\s*`+regexpQuote(name)
	case cbmustache.ErrInterleavedClosingTag:
		problem, tag = `{{/`+name+`}} closes a section that is not the innermost one open here`, `/\s*`+regexpQuote(name)
	case cbmustache.ErrUnmatchedCloseTag:
		problem, tag = `a closing tag {{/…}} closes no open section`, `/`
	case cbmustache.ErrNestingTooDeep:
		problem, tag = "sections are nested too deeply", `[#^]`
	default:
		problem, tag = pe.Error(), ``
	}
	line, col := locate(source, pe.Line, tag)
	return &mailroom.TemplateSyntaxError{Line: line, Column: col, Problem: problem}
}

// locate finds the last "{{" followed by the pattern after on line (from
// 1), or on the nearest line above it that has one (a standalone tag's line
// break is read with the tag, so the library may count the next line), and
// returns its line and column, counted in characters from 1. Line 0 means
// the first line that has one; line and column 1 if none has.
func locate(source string, line int, after string) (int, int) {
	re := regexp.MustCompile(`\{\{` + after)
	lines := strings.Split(source, "\n")
	if line == 0 {
		for i, text := range lines {
			if loc := re.FindStringIndex(text); loc != nil {
				return i + 1, utf8.RuneCountInString(text[:loc[0]]) + 1
			}
		}
		return 1, 1
	}
	for i := min(line, len(lines)) - 1; i >= 0; i-- {
		if all := re.FindAllStringIndex(lines[i], -1); len(all) > 0 {
			start := all[len(all)-1][0]
			return i + 1, utf8.RuneCountInString(lines[i][:start]) + 1
		}
	}
	return line, 1
}

func regexpQuote(s string) string { return regexp.QuoteMeta(s) }
