package http

import (
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func TestCursorScope(t *testing.T) {
	c := bindCursor("api-keys", "MTIz.abc")
	if got, err := openCursor("api-keys", c); err != nil || got != "MTIz.abc" {
		t.Fatalf("round trip: %q %v", got, err)
	}
	for _, scope := range []string{"domains", "suppressions", mailroom.MessageFilter{}.CursorScope()} {
		if _, err := openCursor(scope, c); !mailroom.IsCode(err, mailroom.ECodeValidation) || err.(*mailroom.Error).Details[0].Field != "cursor" {
			t.Errorf("%s accepted a cursor of api-keys: %v", scope, err)
		}
	}
	for _, bad := range []string{"zzz", "!!", "YQ"} {
		if _, err := openCursor("api-keys", bad); !mailroom.IsCode(err, mailroom.ECodeValidation) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if got, err := openCursor("x", ""); got != "" || err != nil || bindCursor("x", "") != "" {
		t.Fatal("the first page has no cursor")
	}

	// Equal selections have equal scopes, whatever the case of addresses,
	// the order of tags or the zone of times; any other filter differs.
	var v mailroom.Validator
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	inParis := at.In(time.FixedZone("CET", 3600))
	a := mailroom.MessageFilter{From: "A@X.example", Since: &at, Tags: mailroom.ParseTagFilters(&v, "tag", []string{"k:1", "j:2"})}
	b := mailroom.MessageFilter{From: "a@x.EXAMPLE", Since: &inParis, Tags: mailroom.ParseTagFilters(&v, "tag", []string{"j:2", "k:1", "k:1"})}
	if v.Err() != nil || a.CursorScope() != b.CursorScope() {
		t.Fatalf("equal filters, different scopes: %q %q (%v)", a.CursorScope(), b.CursorScope(), v.Err())
	}
	for _, other := range []mailroom.MessageFilter{{From: "A@X.example", Since: &at}, {To: "A@X.example", Since: &at, Tags: a.Tags}, {From: "A@X.example", Until: &at, Tags: a.Tags}} {
		if other.CursorScope() == a.CursorScope() {
			t.Errorf("%+v has the scope of %+v", other, a)
		}
	}
}

func TestParseTagFilters(t *testing.T) {
	var v mailroom.Validator
	tags := make([]string, mailroom.MaxTagFilters+1)
	for i := range tags {
		tags[i] = "k:v"
	}
	mailroom.ParseTagFilters(&v, "tag", tags)
	if err := v.Err(); !mailroom.IsCode(err, mailroom.ECodeValidation) {
		t.Fatalf("%d tag filters: %v", len(tags), err)
	}
	v = mailroom.Validator{}
	if got := mailroom.ParseTagFilters(&v, "tag", tags[:mailroom.MaxTagFilters]); v.Err() != nil || len(got) != 1 {
		t.Fatalf("%d equal filters: %v %v", mailroom.MaxTagFilters, got, v.Err())
	}
	for _, bad := range []string{"", "nokey", ":v"} {
		v = mailroom.Validator{}
		if mailroom.ParseTagFilters(&v, "tag", []string{bad}); v.Err() == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
