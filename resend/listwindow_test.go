package resend

import (
	"net/url"
	"slices"
	"testing"

	"github.com/mailroom/mailroom"
)

func TestSelect(t *testing.T) {
	items := []string{"e", "d", "c", "b", "a"} // newest first
	id := func(s string) string { return s }
	for _, c := range []struct {
		query string
		want  []string
		more  bool
	}{
		{"", items, false},
		{"limit=2", []string{"e", "d"}, true},
		{"limit=5", items, false},
		{"limit=2&after=d", []string{"c", "b"}, true},
		{"limit=2&after=c", []string{"b", "a"}, false},
		{"after=a", []string{}, false},
		{"limit=2&before=b", []string{"d", "c"}, true},
		{"limit=2&before=c", []string{"e", "d"}, false},
		{"before=e", []string{}, false},
	} {
		q, _ := url.ParseQuery(c.query)
		w, err := ParseListWindow(q, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		got, more, err := Select(w, items, id)
		if err != nil || !slices.Equal(got, c.want) || more != c.more {
			t.Errorf("%s: %v more=%v %v, want %v more=%v", c.query, got, more, err, c.want, c.more)
		}
	}
	for _, bad := range []string{"limit=0", "limit=101", "limit=x", "after=a&before=b", "limit=1&limit=2"} {
		q, _ := url.ParseQuery(bad)
		if _, err := ParseListWindow(q, 0); !mailroom.IsCode(err, mailroom.ECodeValidation) {
			t.Errorf("%s: %v, want a validation error", bad, err)
		}
	}
	if _, _, err := Select(ListWindow{After: "zz"}, items, id); !mailroom.IsCode(err, mailroom.ECodeValidation) {
		t.Errorf("after an unknown id: %v", err)
	}
}
