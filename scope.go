package mailroom

import (
	"slices"
	"strings"
)

// Scope is a permission an API key holds (docs/api.md "Authentication").
type Scope string

const (
	ScopeSend      Scope = "send"
	ScopeDomains   Scope = "domains"
	ScopeTemplates Scope = "templates"
	ScopeWebhooks  Scope = "webhooks"
	// ScopeReceive, received mail's scope, is in received.go.
	// ScopeKeys manages the account's keys: the account administrator's scope.
	ScopeKeys Scope = "keys"
	// ScopeAny is what a route that any valid key may call requires (the
	// calling key itself). It is no scope a key can be given, and not the
	// zero value: a route whose scope was left unset fails closed.
	ScopeAny Scope = "*"
)

// AllScopes lists every scope, in the order they are documented.
var AllScopes = []Scope{ScopeSend, ScopeDomains, ScopeTemplates, ScopeWebhooks, ScopeReceive, ScopeKeys}

// Valid reports whether s is a known scope.
func (s Scope) Valid() bool { return slices.Contains(AllScopes, s) }

// Scopes is a set of scopes kept in documented order without repeats.
type Scopes []Scope

// Has reports whether the set holds s.
func (ss Scopes) Has(s Scope) bool { return slices.Contains(ss, s) }

// String joins the scopes with commas, the form the CLI takes and storage keeps.
func (ss Scopes) String() string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = string(s)
	}
	return strings.Join(parts, ",")
}

// ParseScopes validates names, recording problems in v, and returns them as
// a set in documented order. An empty list is a problem: a key that can do
// nothing is a mistake.
func ParseScopes(v *Validator, field string, names []string) Scopes {
	seen := map[Scope]bool{}
	for i, n := range names {
		s := Scope(strings.TrimSpace(n))
		switch {
		case !s.Valid():
			v.AddAt(field, i, "unknown scope %q; scopes are send, domains, templates, webhooks, receive, keys", n)
		case seen[s]:
			v.AddAt(field, i, "scope %q is listed twice", s)
		}
		seen[s] = true
	}
	if len(names) == 0 {
		v.Add(field, "at least one scope is required")
	}
	var out Scopes
	for _, s := range AllScopes {
		if seen[s] {
			out = append(out, s)
		}
	}
	return out
}

// RequireScope returns ECodeInsufficientScope unless key holds scope;
// every key holds ScopeAny.
func RequireScope(key *APIKey, scope Scope) error {
	if scope == ScopeAny || key.Scopes.Has(scope) {
		return nil
	}
	return Errorf(ECodeInsufficientScope, "This API key lacks the %q scope.", scope)
}
