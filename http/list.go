package http

import (
	"net/http"
	"strconv"

	"github.com/mailroom/mailroom"
)

// listBody is the shape of every list (API.md conventions).
type listBody[T any] struct {
	Data       []T     `json:"data"`
	NextCursor *string `json:"nextCursor"`
}

func newList[T any](data []T, next string) listBody[T] {
	b := listBody[T]{Data: data}
	if b.Data == nil {
		b.Data = []T{}
	}
	if next != "" {
		b.NextCursor = &next
	}
	return b
}

// pageParams reads ?limit= (1..100, default 20) and ?cursor=.
func pageParams(r *http.Request) (mailroom.Page, error) {
	p := mailroom.Page{Limit: mailroom.DefaultPageLimit, Cursor: r.URL.Query().Get("cursor")}
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > mailroom.MaxPageLimit {
			var v mailroom.Validator
			v.Add("limit", "must be a whole number from 1 to 100")
			return p, v.Err()
		}
		p.Limit = n
	}
	return p, nil
}
