package mailroom

import (
	"regexp"
	"time"
)

// Account owns every resource: keys, domains, messages, templates, webhooks.
// One account's resources are invisible to every other account.
type Account struct {
	ID        string
	Name      string
	CreatedAt time.Time
	// RateLimit is what the operator set; its zero parts mean the
	// defaults (use Limits for the limit in force).
	RateLimit RateLimit
}

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// ValidSlug reports whether s is a name of the form accounts and templates
// use: lower case letters, digits, '_' and '-', 1 to 64 characters, not
// starting with a punctuation mark.
func ValidSlug(s string) bool { return slugPattern.MatchString(s) }

// ValidateAccountName checks the name given to `mailroom accounts create`.
func ValidateAccountName(name string) error {
	if !ValidSlug(name) {
		return Errorf(ECodeValidation, "account name %q: use 1 to 64 characters of a-z, 0-9, '_' and '-', starting with a letter or digit", name)
	}
	return nil
}
