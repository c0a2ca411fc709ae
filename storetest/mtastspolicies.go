package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites, suite{"MTASTSPolicies", testMTASTSPolicies})
}

// MTA-STS policies are kept per domain, whole (mx patterns in order, the
// text as served, both times to the microsecond), replaced by the next
// one, and forgotten on delete, so that every node applies the policy one
// of them fetched (RFC 8461 §5.1).
func testMTASTSPolicies(t *testing.T, store mailroom.Store) {
	ctx := context.Background()
	s, ok := store.(mailroom.MTASTSPolicyStore)
	if !ok {
		t.Fatalf("%T does not keep MTA-STS policies (mailroom.MTASTSPolicyStore)", store)
	}
	get := func(domain string) *mailroom.MTASTSPolicy {
		t.Helper()
		return Try(s.MTASTSPolicy(ctx, domain)).Must(t)
	}
	if p := get("example.com"); p != nil {
		t.Fatalf("a new store has a policy: %+v", p)
	}
	put := func(p *mailroom.MTASTSPolicy) {
		t.Helper()
		if err := s.PutMTASTSPolicy(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	same := func(how string, got, want *mailroom.MTASTSPolicy) {
		t.Helper()
		if got == nil || got.Domain != want.Domain || got.ID != want.ID || got.Mode != want.Mode ||
			!slices.Equal(got.MX, want.MX) || got.MaxAge != want.MaxAge || got.Text != want.Text ||
			!got.FetchedAt.Equal(want.FetchedAt) || !got.CheckedAt.Equal(want.CheckedAt) {
			t.Fatalf("%s: got %+v, want %+v", how, got, want)
		}
	}
	text := "version: STSv1\r\nmode: enforce\r\nmx: mx1.example.com\r\nmx: *.example.net\r\nmax_age: 604800\r\n"
	example := &mailroom.MTASTSPolicy{Domain: "example.com", ID: "20261122T100000", Mode: mailroom.MTASTSEnforce,
		MX: []string{"mx1.example.com", "*.example.net"}, MaxAge: 604800 * time.Second, Text: text,
		FetchedAt: t0.Add(123456 * time.Microsecond), CheckedAt: t0.Add(time.Hour + time.Microsecond)}
	other := &mailroom.MTASTSPolicy{Domain: "other.example", ID: "1", Mode: mailroom.MTASTSTesting,
		MX: []string{"mail.other.example"}, MaxAge: 86400 * time.Second, Text: "version: STSv1\nmode: testing\n",
		FetchedAt: t0, CheckedAt: t0}
	put(example)
	put(other)
	same("example.com", get("example.com"), example)
	same("other.example", get("other.example"), other)

	// The next policy replaces the domain's, every field of it; a policy
	// whose TXT record was looked up again only moves checked_at.
	renewed := *example
	renewed.CheckedAt = t0.Add(2 * time.Hour)
	put(&renewed)
	same("checked again", get("example.com"), &renewed)
	changed := &mailroom.MTASTSPolicy{Domain: "example.com", ID: "20261123", Mode: mailroom.MTASTSTesting,
		MX: []string{"mx.example.org"}, MaxAge: 31557600 * time.Second, Text: "version: STSv1\nmode: testing\nmx: mx.example.org\nmax_age: 31557600\n",
		FetchedAt: t0.Add(24 * time.Hour), CheckedAt: t0.Add(24 * time.Hour)}
	put(changed)
	same("a new id", get("example.com"), changed)
	same("the other domain untouched", get("other.example"), other)

	// Deleting forgets the one domain; deleting what is not there is no
	// error (two nodes may both see mode "none").
	for range 2 {
		if err := s.DeleteMTASTSPolicy(ctx, "example.com"); err != nil {
			t.Fatal(err)
		}
	}
	if p := get("example.com"); p != nil {
		t.Fatalf("deleted, example.com still has %+v", p)
	}
	same("the other domain after the delete", get("other.example"), other)
	put(example)
	same("cached again after the delete", get("example.com"), example)
}
