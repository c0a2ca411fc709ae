package mailroom

import (
	"testing"
	"time"
)

func TestCursorScope(t *testing.T) {
	c := BindCursor("api-keys", "MTIz.abc")
	if got, err := OpenCursor("api-keys", c); err != nil || got != "MTIz.abc" {
		t.Fatalf("round trip: %q %v", got, err)
	}
	for _, scope := range []string{"domains", "suppressions", MessageFilter{}.CursorScope()} {
		if _, err := OpenCursor(scope, c); !IsCode(err, ECodeValidation) || err.(*Error).Details[0].Field != "cursor" {
			t.Errorf("%s accepted a cursor of api-keys: %v", scope, err)
		}
	}
	for _, bad := range []string{"zzz", "!!", "YQ"} {
		if _, err := OpenCursor("api-keys", bad); !IsCode(err, ECodeValidation) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if got, err := OpenCursor("x", ""); got != "" || err != nil || BindCursor("x", "") != "" {
		t.Fatal("the first page has no cursor")
	}

	// Equal selections have equal scopes, whatever the case of addresses,
	// the order of tags or the zone of times; any other filter differs.
	var v Validator
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	inParis := at.In(time.FixedZone("CET", 3600))
	a := MessageFilter{From: "A@X.example", Since: &at, Tags: ParseTagFilters(&v, "tag", []string{"k:1", "j:2"})}
	b := MessageFilter{From: "a@x.EXAMPLE", Since: &inParis, Tags: ParseTagFilters(&v, "tag", []string{"j:2", "k:1", "k:1"})}
	if v.Err() != nil || a.CursorScope() != b.CursorScope() {
		t.Fatalf("equal filters, different scopes: %q %q (%v)", a.CursorScope(), b.CursorScope(), v.Err())
	}
	for _, other := range []MessageFilter{{From: "A@X.example", Since: &at}, {To: "A@X.example", Since: &at, Tags: a.Tags}, {From: "A@X.example", Until: &at, Tags: a.Tags}} {
		if other.CursorScope() == a.CursorScope() {
			t.Errorf("%+v has the scope of %+v", other, a)
		}
	}
}

func TestParseTagFilters(t *testing.T) {
	var v Validator
	tags := make([]string, MaxTagFilters+1)
	for i := range tags {
		tags[i] = "k:v"
	}
	ParseTagFilters(&v, "tag", tags)
	if err := v.Err(); !IsCode(err, ECodeValidation) {
		t.Fatalf("%d tag filters: %v", len(tags), err)
	}
	v = Validator{}
	if got := ParseTagFilters(&v, "tag", tags[:MaxTagFilters]); v.Err() != nil || len(got) != 1 {
		t.Fatalf("%d equal filters: %v %v", MaxTagFilters, got, v.Err())
	}
	for _, bad := range []string{"", "nokey", ":v"} {
		v = Validator{}
		if ParseTagFilters(&v, "tag", []string{bad}); v.Err() == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
