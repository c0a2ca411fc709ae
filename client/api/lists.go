package api

// List is one page of every list route (docs/api.md "Conventions", OpenAPI
// schemas ApiKeyList, DomainList, MessageList, …): newest first (GET
// /v1/scheduled: soonest first), at most the limit asked for (1..100,
// default 20).
type List[T any] struct {
	// Data holds the page's items; never null, [] when there are none.
	Data []T `json:"data"`
	// NextCursor continues the list after Data's last item (pass it as
	// ?cursor= with the same filters); null on the last page.
	NextCursor *string `json:"nextCursor"`
}

// Cursor returns NextCursor, "" on the last page.
func (l *List[T]) Cursor() string {
	if l == nil || l.NextCursor == nil {
		return ""
	}
	return *l.NextCursor
}
