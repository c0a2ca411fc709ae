package mailroom

import "unicode/utf8"

// Error messages repeat what the client sent, so that it sees what was
// wrong ("unknown scope \"sned\""), but only an excerpt of it: a message
// must cost what the limits allow, not what the request holds. A 15 MiB
// value quoted whole (twice: in message and in details) made a 31 MiB
// answer and held hundreds of MiB while it was formatted.
const (
	// MaxQuoted is the most of one value of the client's that a message
	// quotes.
	MaxQuoted = 100
	// MaxFieldName bounds a detail's field, which names what the client
	// sent (an unknown field, a header, a tag key).
	MaxFieldName = 200
)

// Excerpt returns s cut to at most n bytes at a character boundary, with
// "…" in place of what was cut.
func Excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// OwnText is a message of the service's own that quotes the client only in
// excerpts (address problems): Validator.Add passes it whole, where it
// would cut a plain string argument to MaxQuoted bytes, guidance and all.
type OwnText string

// excerptArgs cuts the string arguments of a message to MaxQuoted bytes
// before they are formatted, so that formatting costs no more than that.
func excerptArgs(args []any) []any {
	var out []any
	for i, a := range args {
		if s, ok := a.(string); ok && len(s) > MaxQuoted {
			if out == nil {
				out = append([]any(nil), args...)
			}
			out[i] = Excerpt(s, MaxQuoted)
		}
	}
	if out == nil {
		return args
	}
	return out
}
