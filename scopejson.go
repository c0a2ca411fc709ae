package mailroom

import "github.com/go-json-experiment/json/jsontext"

// maxScopeNames bounds the scopes list of a key request as it is decoded:
// there are six scopes, so twice that leaves room to report duplicates
// and typos, and a body of two million names costs no more than ten.
const maxScopeNames = 2 * 6 // len(AllScopes) is 6

// ScopeNames is the scopes field of a key request, as sent.
type ScopeNames []string

// UnmarshalJSONFrom reads an array of at most maxScopeNames strings.
func (n *ScopeNames) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	field := dec.StackPointer().LastToken()
	list, err := decodeArray[string](dec, maxScopeNames, '"', func() error {
		return validationError(field, "has more than %d scopes; the scopes are send, domains, templates, webhooks, receive, keys", maxScopeNames)
	})
	*n = list
	return err
}
