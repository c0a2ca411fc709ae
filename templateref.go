package mailroom

import (
	"fmt"
	"strings"
)

// Limits of a template (docs/api.md "Templates").
const (
	// MaxTemplatePartBytes bounds a template's html and its text, each.
	MaxTemplatePartBytes = 1 << 20
	// DefaultMaxTemplates is how many templates an account may have unless
	// the operator says otherwise (serve --max-templates).
	DefaultMaxTemplates = 1000
	// MaxVariablesBytes bounds the variables object of a send or render.
	MaxVariablesBytes = 256 << 10
	maxTemplateName   = 64
	MaxDescription    = 1000 // characters
)

// CheckTemplateName applies the slug rule of docs/api.md "Templates". A
// name may not look like an id: "tpl_…" names a template by its id.
func CheckTemplateName(name string) string {
	ok := name != "" && len(name) <= maxTemplateName
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '-' || c == '_') && i > 0:
		default:
			ok = false
		}
	}
	if !ok {
		return fmt.Sprintf("must be a slug: 1 to %d characters of a-z, 0-9, '-' and '_', starting with a letter or digit", maxTemplateName)
	}
	if strings.HasPrefix(name, PrefixTemplate) {
		return fmt.Sprintf("must not start with %q, which names a template by its id", PrefixTemplate)
	}
	return ""
}

// CheckTemplateRef says what is wrong with a template's id or name as a
// client gives it (a send's template, the log's ?template= filter), or ""
// when it could name a template.
func CheckTemplateRef(ref string) string {
	if id, ok := strings.CutPrefix(ref, PrefixTemplate); ok {
		// A ULID in lower case (NewID).
		if len(id) != 26 || strings.ContainsFunc(id, func(r rune) bool { return !('0' <= r && r <= '9' || 'a' <= r && r <= 'z') }) {
			return "is not a template id (tpl_ and 26 letters and digits)"
		}
		return ""
	}
	return CheckTemplateName(ref)
}
