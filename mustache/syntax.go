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

// locate finds the last "{{" followed by the pattern after on line (from 1;
// 0 means the first line that has one) and returns its line and column,
// counted in characters from 1; line and column 1 if there is none.
func locate(source string, line int, after string) (int, int) {
	re := regexp.MustCompile(`\{\{` + after)
	lines := strings.Split(source, "\n")
	for i, text := range lines {
		if line != 0 && i+1 != line {
			continue
		}
		if all := re.FindAllStringIndex(text, -1); len(all) > 0 {
			start := all[len(all)-1][0]
			if line == 0 {
				start = all[0][0]
			}
			return i + 1, utf8.RuneCountInString(text[:start]) + 1
		}
		if line != 0 {
			return line, 1
		}
	}
	return max(line, 1), 1
}

func regexpQuote(s string) string { return regexp.QuoteMeta(s) }
