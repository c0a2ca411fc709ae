package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites, suite{"TemplateVersionsKept", testTemplateVersionsKept})
}

// testTemplateVersionsKept: a template keeps its newest versions up to the
// limit (serve --max-template-versions); saving one more removes the
// oldest, unless another template's version is wrapped in it as its
// layout, which keeps it for as long as that version exists. Lowering the
// limit takes the next save down to it.
func testTemplateVersionsKept(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	tpl := NewTemplate(acme, "receipt", t0)
	if err := s.CreateTemplate(ctx, tpl, 10); err != nil {
		t.Fatal(err)
	}
	update := func(id string, n, keep int) {
		t.Helper()
		if err := s.UpdateTemplate(ctx, revision(acme.ID, id, fmt.Sprintf("v%d", n), t0.Add(time.Duration(n)*time.Minute)), keep); err != nil {
			t.Fatalf("update to version %d: %v", n, err)
		}
	}
	versions := func(id string) []int {
		t.Helper()
		var out []int
		page, _ := Try2(s.ListTemplateVersions(ctx, acme.ID, id, mailroom.Page{Limit: 100})).Must(t)
		for _, v := range page {
			out = append(out, v.Version)
		}
		return out
	}
	want := func(id string, w ...int) {
		t.Helper()
		if got := versions(id); fmt.Sprint(got) != fmt.Sprint(w) {
			t.Fatalf("versions kept %v, want %v", got, w)
		}
	}

	update(tpl.ID, 2, 3)
	update(tpl.ID, 3, 3)
	want(tpl.ID, 3, 2, 1)
	update(tpl.ID, 4, 3)
	want(tpl.ID, 4, 3, 2)
	_, err := s.TemplateVersion(ctx, acme.ID, tpl.ID, 1)
	wantCode(t, err, mailroom.ECodeNotFound)

	// Version 4 becomes another template's layout: it stays past the limit.
	page := NewTemplate(acme, "page", t0)
	page.Layout = &mailroom.TemplateRef{ID: tpl.ID, Name: "receipt", Version: 4}
	if err := s.CreateTemplate(ctx, page, 10); err != nil {
		t.Fatal(err)
	}
	for n := 5; n <= 8; n++ {
		update(tpl.ID, n, 3)
	}
	want(tpl.ID, 8, 7, 6, 4)
	Try(s.TemplateVersion(ctx, acme.ID, tpl.ID, 4)).Must(t)

	// Once no version names it any more, the next save removes it.
	for n := 2; n <= 4; n++ {
		update(page.ID, n, 3)
	}
	want(page.ID, 4, 3, 2)
	update(tpl.ID, 9, 3)
	want(tpl.ID, 9, 8, 7)

	// A lower limit applies from the next save.
	update(tpl.ID, 10, 1)
	want(tpl.ID, 10)
	if cur := Try(s.Template(ctx, acme.ID, tpl.ID)).Must(t); cur.Version != 10 || cur.Subject != "v10" {
		t.Fatalf("current version %d %q, want 10 \"v10\"", cur.Version, cur.Subject)
	}
}
