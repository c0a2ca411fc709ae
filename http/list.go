package http

import (
	"net/http"
	"strconv"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client/api"
)

// newList answers a page in the shape of every list (docs/api.md
// "Conventions"): data never null; next is the store's cursor, handed out
// bound to scope (bindCursor), and null on the last page.
func newList[T any](data []T, scope, next string) api.List[T] {
	b := api.List[T]{Data: data}
	if b.Data == nil {
		b.Data = []T{}
	}
	if next != "" {
		bound := bindCursor(scope, next)
		b.NextCursor = &bound
	}
	return b
}

// Scopes of the lists without filters; the log's is its filter's.
const (
	scopeAPIKeys      = "api-keys"
	scopeDomains      = "domains"
	scopeSuppressions = "suppressions"
	scopeTemplates    = "templates"
	scopeScheduled    = "scheduled"
	scopeWebhooks     = "webhooks"
)

// pageParams reads ?limit= (1..100, default 20) and ?cursor=, which must
// be a cursor that newList handed out under the same scope.
func pageParams(r *http.Request, scope string) (mailroom.Page, error) {
	var v mailroom.Validator
	p := mailroom.Page{Limit: mailroom.DefaultPageLimit}
	if err := onceEach(r, "limit", "cursor"); err != nil {
		return p, err
	}
	cursor, err := openCursor(scope, r.URL.Query().Get("cursor"))
	if err != nil {
		return p, err
	}
	p.Cursor = cursor
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > mailroom.MaxPageLimit {
			v.Add("limit", "must be a whole number from 1 to 100")
			return p, v.Err()
		}
		p.Limit = n
	}
	return p, nil
}

// onceEach refuses a query parameter given more than once among names:
// "?status=a&status=b" has no one meaning, and taking the first value
// would make a proxy that takes the last see another request.
func onceEach(r *http.Request, names ...string) error {
	var v mailroom.Validator
	q := r.URL.Query()
	for _, name := range names {
		if n := len(q[name]); n > 1 {
			v.Add(name, "is given %d times; give it once", n)
		}
	}
	return v.Err()
}
