package main

import (
	"strings"
	"unicode"
)

// Text that a server chose (an error's message, a cursor, a message's
// subject, an SMTP reply it relayed) reaches a terminal, which obeys the
// escape sequences in it: a broken or hostile server could clear the
// screen, rewrite the window's title or hide what came before. Every such
// string goes through clean before the CLI writes it, except in --json
// output, whose encoder escapes control characters itself.

// clean makes remote text safe for a terminal, and for one cell of a
// table: control characters (a tab, a line break, the escape that starts
// a sequence) become spaces.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}
