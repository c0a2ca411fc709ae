package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites,
		suite{"Templates", testTemplates},
		suite{"TemplateIsolation", testTemplateIsolation},
		suite{"TemplateLimit", testTemplateLimit},
		suite{"TemplateVersions", testTemplateVersions},
		suite{"TemplateConcurrentUpdates", testTemplateConcurrentUpdates},
		suite{"TemplatePaging", testTemplatePaging},
		suite{"TemplateDelete", testTemplateDelete},
	)
}

// NewTemplate returns an unsaved template of acct named name, created at
// at, as template.Service hands it to CreateTemplate: version 1, with
// its Variables already worked out.
func NewTemplate(acct *mailroom.Account, name string, at time.Time) *mailroom.Template {
	return &mailroom.Template{
		ID: mailroom.NewID(mailroom.PrefixTemplate, at), AccountID: acct.ID, Name: name,
		Description: "Sent when " + name + " happens",
		Subject:     "Welcome, {{user.name}}",
		HTML:        "<p>Hi {{user.name}}, start at <a href=\"{{url}}\">{{url}}</a></p>",
		Text:        "Hi {{user.name}}, start at {{url}}",
		From:        "Acme <hello@acme.example>",
		Version:     1,
		Variables:   []string{"url", "user.name"},
		CreatedAt:   at, UpdatedAt: at,
	}
}

// revision returns the content of a new version of the account's template
// id, saved at at; its Name and CreatedAt are left for UpdateTemplate to
// fill in, as template.Service leaves them.
func revision(accountID, id, subject string, at time.Time) *mailroom.Template {
	return &mailroom.Template{
		ID: id, AccountID: accountID,
		Description: "revised: " + subject,
		Subject:     subject,
		HTML:        "<p>" + subject + " {{order.id}}</p>",
		Text:        subject + " {{order.id}}",
		Variables:   []string{"order.id"},
		UpdatedAt:   at,
	}
}

// wantTemplate fails unless got has every field of want. Times are compared
// with Equal: the engines hand them back in UTC at microsecond precision,
// which is what the suite stores, so any difference is a real one.
// listed is a template as lists return it: without its HTML and Text,
// which may be a megabyte each.
func listed(t mailroom.Template) mailroom.Template {
	t.HTML, t.Text = "", ""
	return t
}

func wantTemplate(t *testing.T, what string, got, want *mailroom.Template) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: got no template, want %+v", what, want)
	}
	if got.ID != want.ID || got.AccountID != want.AccountID || got.Name != want.Name ||
		got.Description != want.Description || got.Subject != want.Subject || got.HTML != want.HTML ||
		got.Text != want.Text || got.From != want.From || got.Version != want.Version ||
		!slices.Equal(got.Variables, want.Variables) ||
		!got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

// testTemplates: what is created is read back whole, by id and by name, and
// names are unique per account, not across accounts.
func testTemplates(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")

	// Odd microseconds, so that an engine that kept only milliseconds or
	// seconds is caught.
	created := t0.Add(1234567 * time.Microsecond)
	tpl := NewTemplate(acme, "welcome", created)
	if err := s.CreateTemplate(ctx, tpl, 10); err != nil {
		t.Fatal(err)
	}
	want := *tpl
	wantTemplate(t, "by id", Try(s.Template(ctx, acme.ID, tpl.ID)).Must(t), &want)
	wantTemplate(t, "by name", Try(s.Template(ctx, acme.ID, "welcome")).Must(t), &want)
	wantTemplate(t, "version 1", Try(s.TemplateVersion(ctx, acme.ID, tpl.ID, 1)).Must(t), &want)
	for _, key := range []string{tpl.ID, "welcome"} {
		ref := Try(s.CurrentTemplateVersion(ctx, acme.ID, key)).Must(t)
		if *ref != (mailroom.TemplateRef{ID: tpl.ID, Name: "welcome", Version: 1}) {
			t.Fatalf("current version by %s: %+v", key, ref)
		}
	}

	// No variables and no sender must come back as none, not as an error or
	// a stray value.
	bare := NewTemplate(acme, "bare", created)
	bare.From, bare.Variables, bare.Subject, bare.HTML, bare.Text = "", nil, "Hello", "<p>Hello</p>", "Hello"
	if err := s.CreateTemplate(ctx, bare, 10); err != nil {
		t.Fatal(err)
	}
	if got := Try(s.Template(ctx, acme.ID, "bare")).Must(t); got.From != "" || len(got.Variables) != 0 {
		t.Fatalf("bare template came back with from %q, variables %q", got.From, got.Variables)
	}

	wantCode(t, s.CreateTemplate(ctx, NewTemplate(acme, "welcome", t0), 10), mailroom.ECodeAlreadyExists)
	if got := Try(s.Template(ctx, acme.ID, "welcome")).Must(t); got.ID != tpl.ID {
		t.Fatalf("the refused duplicate replaced the template: %s", got.ID)
	}

	theirs := NewTemplate(globex, "welcome", t0)
	theirs.Subject = "Globex says hi"
	if err := s.CreateTemplate(ctx, theirs, 10); err != nil {
		t.Fatalf("another account could not use the name: %v", err)
	}
	// The name is looked up in the caller's account only.
	if got := Try(s.Template(ctx, globex.ID, "welcome")).Must(t); got.ID != theirs.ID || got.Subject != "Globex says hi" {
		t.Fatalf("globex's welcome: %+v", got)
	}
	if got := Try(s.Template(ctx, acme.ID, "welcome")).Must(t); got.ID != tpl.ID {
		t.Fatalf("acme's welcome is now %s", got.ID)
	}
	_, err := s.Template(ctx, acme.ID, "nothing")
	wantCode(t, err, mailroom.ECodeNotFound)
	_, err = s.Template(ctx, acme.ID, mailroom.NewID(mailroom.PrefixTemplate, t0))
	wantCode(t, err, mailroom.ECodeNotFound)
}

// testTemplateIsolation: one account can neither read, probe, change nor
// delete another's template, whether it names it by id or by name, and the
// failed attempts leave it as it was.
func testTemplateIsolation(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	tpl := NewTemplate(acme, "welcome", t0)
	if err := s.CreateTemplate(ctx, tpl, 10); err != nil {
		t.Fatal(err)
	}
	want := *tpl

	for _, key := range []string{tpl.ID, "welcome"} {
		_, err := s.Template(ctx, globex.ID, key)
		wantCode(t, err, mailroom.ECodeNotFound)
		_, err = s.CurrentTemplateVersion(ctx, globex.ID, key)
		wantCode(t, err, mailroom.ECodeNotFound)
		_, _, err = s.ListTemplateVersions(ctx, globex.ID, key, mailroom.Page{})
		wantCode(t, err, mailroom.ECodeNotFound)
		wantCode(t, s.DeleteTemplate(ctx, globex.ID, key), mailroom.ECodeNotFound)
	}
	_, err := s.TemplateVersion(ctx, globex.ID, tpl.ID, 1)
	wantCode(t, err, mailroom.ECodeNotFound)

	hijack := revision(globex.ID, tpl.ID, "Pwned", t0.Add(time.Hour))
	wantCode(t, s.UpdateTemplate(ctx, hijack, mailroom.DefaultMaxTemplateVersions), mailroom.ECodeNotFound)
	// A refused update must not have left a version behind, even one that
	// the current-version pointer does not reach.
	_, err = s.TemplateVersion(ctx, acme.ID, tpl.ID, 2)
	wantCode(t, err, mailroom.ECodeNotFound)
	wantTemplate(t, "after another account's attempts", Try(s.Template(ctx, acme.ID, tpl.ID)).Must(t), &want)
	if versions, _ := Try2(s.ListTemplateVersions(ctx, acme.ID, tpl.ID, mailroom.Page{})).Must(t); len(versions) != 1 {
		t.Fatalf("acme's template has %d versions, want 1", len(versions))
	}
	if list, _ := Try2(s.ListTemplates(ctx, globex.ID, mailroom.Page{})).Must(t); len(list) != 0 {
		t.Fatalf("globex lists %d templates, want none", len(list))
	}
}

// testTemplateLimit: max caps the templates of one account, and only of that
// account; deleting one makes room again.
func testTemplateLimit(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	first := NewTemplate(acme, "one", t0)
	for _, tpl := range []*mailroom.Template{first, NewTemplate(acme, "two", t0)} {
		if err := s.CreateTemplate(ctx, tpl, 2); err != nil {
			t.Fatal(err)
		}
	}
	wantCode(t, s.CreateTemplate(ctx, NewTemplate(acme, "three", t0), 2), mailroom.ECodeValidation)
	_, err := s.Template(ctx, acme.ID, "three")
	wantCode(t, err, mailroom.ECodeNotFound)
	if list, _ := Try2(s.ListTemplates(ctx, acme.ID, mailroom.Page{})).Must(t); len(list) != 2 {
		t.Fatalf("acme has %d templates, want 2", len(list))
	}

	for _, name := range []string{"one", "two"} {
		if err := s.CreateTemplate(ctx, NewTemplate(globex, name, t0), 2); err != nil {
			t.Fatalf("acme's templates counted against globex: %v", err)
		}
	}

	if err := s.DeleteTemplate(ctx, acme.ID, first.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTemplate(ctx, NewTemplate(acme, "three", t0), 2); err != nil {
		t.Fatalf("after a delete, the account still counts as full: %v", err)
	}

	// Creates racing for the last places must not all see room: the count
	// and the insert have to be one step.
	initech := NewAccount(t, s, "initech")
	const racers, limit = 8, 3
	var mu sync.Mutex
	var created, refused int
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			err := s.CreateTemplate(ctx, NewTemplate(initech, fmt.Sprintf("r%d", i), t0), limit)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				created++
			case mailroom.ErrorCode(err) == mailroom.ECodeValidation:
				refused++
			default:
				t.Errorf("racer %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if created != limit || refused != racers-limit {
		t.Fatalf("%d racing creates with max %d: %d created, %d refused", racers, limit, created, refused)
	}
	if list, _ := Try2(s.ListTemplates(ctx, initech.ID, mailroom.Page{})).Must(t); len(list) != limit {
		t.Fatalf("initech has %d templates, want %d", len(list), limit)
	}
}

// testTemplateVersions: every update is a new version, the earlier ones stay
// readable as they were saved (messages name the version they were rendered
// from), and the newest is what Template and CurrentTemplateVersion see.
func testTemplateVersions(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	v1 := NewTemplate(acme, "receipt", t0)
	if err := s.CreateTemplate(ctx, v1, 10); err != nil {
		t.Fatal(err)
	}
	saved := map[int]mailroom.Template{1: *v1}

	for version := 2; version <= 3; version++ {
		at := t0.Add(time.Duration(version) * time.Hour).Add(time.Duration(version) * time.Microsecond)
		next := revision(acme.ID, v1.ID, fmt.Sprintf("Receipt v%d", version), at)
		if version == 3 {
			// A version may drop the sender an earlier one had, and the
			// description with it.
			next.From, next.Description = "", ""
		} else {
			next.From = "Billing <billing@acme.example>"
		}
		if err := s.UpdateTemplate(ctx, next, mailroom.DefaultMaxTemplateVersions); err != nil {
			t.Fatalf("update to version %d: %v", version, err)
		}
		// The caller learns what was stored without reading it back.
		if next.Version != version || next.Name != "receipt" || !next.CreatedAt.Equal(t0) || !next.UpdatedAt.Equal(at) {
			t.Fatalf("update set version %d, name %q, created %v, updated %v; want %d, receipt, %v, %v",
				next.Version, next.Name, next.CreatedAt, next.UpdatedAt, version, t0, at)
		}
		saved[version] = *next
	}

	newest := saved[3]
	wantTemplate(t, "current by id", Try(s.Template(ctx, acme.ID, v1.ID)).Must(t), &newest)
	wantTemplate(t, "current by name", Try(s.Template(ctx, acme.ID, "receipt")).Must(t), &newest)
	for version := 1; version <= 3; version++ {
		want := saved[version]
		// Overwriting a version in place instead of adding one would fail
		// here: version 1 would come back with v3's subject.
		wantTemplate(t, fmt.Sprintf("version %d", version), Try(s.TemplateVersion(ctx, acme.ID, v1.ID, version)).Must(t), &want)
	}
	for _, missing := range []int{0, 4} {
		_, err := s.TemplateVersion(ctx, acme.ID, v1.ID, missing)
		wantCode(t, err, mailroom.ECodeNotFound)
	}
	for _, key := range []string{v1.ID, "receipt"} {
		ref := Try(s.CurrentTemplateVersion(ctx, acme.ID, key)).Must(t)
		if *ref != (mailroom.TemplateRef{ID: v1.ID, Name: "receipt", Version: 3}) {
			t.Fatalf("current version by %s: %+v", key, ref)
		}
	}

	// Paged two at a time, by id and by name alike: 3, 2 then 1, each
	// with its own content.
	for _, key := range []string{v1.ID, "receipt"} {
		var got []*mailroom.Template
		cursor, pages := "", 0
		for {
			page, next := Try2(s.ListTemplateVersions(ctx, acme.ID, key, mailroom.Page{Limit: 2, Cursor: cursor})).Must(t)
			got = append(got, page...)
			if pages++; next == "" || pages > 3 {
				break
			}
			cursor = next
		}
		if pages != 2 || len(got) != 3 {
			t.Fatalf("by %s: %d versions in %d pages, want 3 in 2", key, len(got), pages)
		}
		for i, v := range got {
			want := listed(saved[3-i])
			wantTemplate(t, fmt.Sprintf("by %s, listed version %d", key, i), v, &want)
		}
	}

	// A version saved while a client pages must not shift the pages it has
	// not read yet: the cursor counts down from where the client was.
	first, cursor := Try2(s.ListTemplateVersions(ctx, acme.ID, v1.ID, mailroom.Page{Limit: 2})).Must(t)
	if err := s.UpdateTemplate(ctx, revision(acme.ID, v1.ID, "Receipt v4", t0.Add(4*time.Hour)), mailroom.DefaultMaxTemplateVersions); err != nil {
		t.Fatal(err)
	}
	rest, next := Try2(s.ListTemplateVersions(ctx, acme.ID, v1.ID, mailroom.Page{Limit: 2, Cursor: cursor})).Must(t)
	if len(first) != 2 || first[0].Version != 3 || len(rest) != 1 || rest[0].Version != 1 || next != "" {
		t.Fatalf("paging across an update: first page %d versions, then %d (next %q), want 3,2 then 1", len(first), len(rest), next)
	}

	_, _, err := s.ListTemplateVersions(ctx, acme.ID, v1.ID, mailroom.Page{Cursor: "not-a-cursor!"})
	wantCode(t, err, mailroom.ECodeValidation)
}

// testTemplateConcurrentUpdates: updates racing on one template each get a
// version of their own, none lost and none shared, and the content of each
// version is that of the update that got it. On SQLite the writes queue
// behind the one writer; on PostgreSQL they contend for the row's lock.
func testTemplateConcurrentUpdates(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	tpl := NewTemplate(acme, "digest", t0)
	if err := s.CreateTemplate(ctx, tpl, 10); err != nil {
		t.Fatal(err)
	}

	const n = 8
	subjectOf := make([]string, n+2) // by version
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			u := revision(acme.ID, tpl.ID, fmt.Sprintf("writer %d", i), t0.Add(time.Duration(i+1)*time.Second))
			<-start // all at once, to make the race real
			if err := s.UpdateTemplate(ctx, u, mailroom.DefaultMaxTemplateVersions); err != nil {
				t.Errorf("writer %d: %v", i, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if u.Version < 2 || u.Version > n+1 {
				t.Errorf("writer %d got version %d, want one of 2..%d", i, u.Version, n+1)
				return
			}
			if prev := subjectOf[u.Version]; prev != "" {
				t.Errorf("writer %d got version %d, which %q got too", i, u.Version, prev)
				return
			}
			subjectOf[u.Version] = u.Subject
		})
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	if ref := Try(s.CurrentTemplateVersion(ctx, acme.ID, tpl.ID)).Must(t); ref.Version != 1+n {
		t.Fatalf("after %d updates the current version is %d, want %d", n, ref.Version, 1+n)
	}
	for version := 2; version <= n+1; version++ {
		if got := Try(s.TemplateVersion(ctx, acme.ID, tpl.ID, version)).Must(t); got.Subject != subjectOf[version] {
			t.Fatalf("version %d holds %q, but %q was told it got that version", version, got.Subject, subjectOf[version])
		}
	}
	if got := Try(s.Template(ctx, acme.ID, tpl.ID)).Must(t); got.Version != 1+n || got.Subject != subjectOf[1+n] {
		t.Fatalf("Template returns version %d (%q), want %d (%q)", got.Version, got.Subject, 1+n, subjectOf[1+n])
	}
}

// testTemplatePaging: ListTemplates pages an account's templates newest
// created first (an update does not move a template up), each in its
// current version, and never shows another account's.
func testTemplatePaging(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	var made []*mailroom.Template
	for i := range 5 {
		// Two templates share each creation time, so that the tie between
		// them must be broken the same way on every page.
		tpl := NewTemplate(acme, fmt.Sprintf("t%d", i), t0.Add(time.Duration(i/2)*time.Second))
		if err := s.CreateTemplate(ctx, tpl, 10); err != nil {
			t.Fatal(err)
		}
		made = append(made, tpl)
	}
	for _, name := range []string{"t0", "g1"} {
		if err := s.CreateTemplate(ctx, NewTemplate(globex, name, t0.Add(time.Minute)), 10); err != nil {
			t.Fatal(err)
		}
	}
	oldest := revision(acme.ID, made[0].ID, "Updated", t0.Add(time.Hour))
	if err := s.UpdateTemplate(ctx, oldest, mailroom.DefaultMaxTemplateVersions); err != nil {
		t.Fatal(err)
	}

	var got []*mailroom.Template
	cursor, pages := "", 0
	for {
		page, next := Try2(s.ListTemplates(ctx, acme.ID, mailroom.Page{Limit: 2, Cursor: cursor})).Must(t)
		got = append(got, page...)
		if pages++; next == "" || pages > 5 {
			break
		}
		cursor = next
	}
	if pages != 3 || len(got) != 5 {
		t.Fatalf("%d templates in %d pages, want 5 in 3", len(got), pages)
	}
	for i, tpl := range got {
		want := *made[len(made)-1-i]
		if want.ID == oldest.ID {
			want = *oldest
		}
		want = listed(want)
		wantTemplate(t, fmt.Sprintf("listed template %d", i), tpl, &want)
	}
	_, _, err := s.ListTemplates(ctx, acme.ID, mailroom.Page{Cursor: "not-a-cursor!"})
	wantCode(t, err, mailroom.ECodeValidation)
}

// testTemplateDelete: a deleted template is gone in every version and by
// every way of reading it, its name is free for a new template (a new id,
// starting again at version 1), and the old id stays gone.
func testTemplateDelete(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	old := NewTemplate(acme, "welcome", t0)
	if err := s.CreateTemplate(ctx, old, 10); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateTemplate(ctx, revision(acme.ID, old.ID, "Welcome v2", t0.Add(time.Hour)), mailroom.DefaultMaxTemplateVersions); err != nil {
		t.Fatal(err)
	}
	keep := NewTemplate(acme, "keep", t0)
	if err := s.CreateTemplate(ctx, keep, 10); err != nil {
		t.Fatal(err)
	}

	if err := s.DeleteTemplate(ctx, acme.ID, "welcome"); err != nil {
		t.Fatal(err)
	}
	// gone checks every read of the deleted template through keys (its
	// id, and its name while no other template has it).
	gone := func(when string, keys ...string) {
		t.Helper()
		for _, key := range keys {
			if _, err := s.Template(ctx, acme.ID, key); mailroom.ErrorCode(err) != mailroom.ECodeNotFound {
				t.Fatalf("%s, Template(%s): %v, want not_found", when, key, err)
			}
			if _, err := s.CurrentTemplateVersion(ctx, acme.ID, key); mailroom.ErrorCode(err) != mailroom.ECodeNotFound {
				t.Fatalf("%s, CurrentTemplateVersion(%s): %v, want not_found", when, key, err)
			}
		}
		for _, version := range []int{1, 2} {
			if _, err := s.TemplateVersion(ctx, acme.ID, old.ID, version); mailroom.ErrorCode(err) != mailroom.ECodeNotFound {
				t.Fatalf("%s, version %d of the deleted template: %v, want not_found", when, version, err)
			}
		}
		if _, _, err := s.ListTemplateVersions(ctx, acme.ID, old.ID, mailroom.Page{}); mailroom.ErrorCode(err) != mailroom.ECodeNotFound {
			t.Fatalf("%s, versions of the deleted template: %v, want not_found", when, err)
		}
	}
	gone("after the delete", old.ID, "welcome")
	wantCode(t, s.DeleteTemplate(ctx, acme.ID, "welcome"), mailroom.ECodeNotFound)
	wantCode(t, s.DeleteTemplate(ctx, acme.ID, old.ID), mailroom.ECodeNotFound)
	// An update that read the template just before it was deleted.
	wantCode(t, s.UpdateTemplate(ctx, revision(acme.ID, old.ID, "Too late", t0.Add(2*time.Hour)), mailroom.DefaultMaxTemplateVersions), mailroom.ECodeNotFound)

	again := NewTemplate(acme, "welcome", t0.Add(3*time.Hour))
	again.Subject = "Welcome back"
	if err := s.CreateTemplate(ctx, again, 10); err != nil {
		t.Fatalf("the name of a deleted template cannot be used again: %v", err)
	}
	if again.ID == old.ID {
		t.Fatal("NewID returned the deleted template's id") // the test itself would be wrong
	}
	wantAgain := *again
	wantTemplate(t, "recreated, by name", Try(s.Template(ctx, acme.ID, "welcome")).Must(t), &wantAgain)
	// None of the deleted template's versions may leak into the new one.
	if versions, _ := Try2(s.ListTemplateVersions(ctx, acme.ID, "welcome", mailroom.Page{})).Must(t); len(versions) != 1 || versions[0].Subject != "Welcome back" {
		t.Fatalf("the recreated template has %d versions, want only its own", len(versions))
	}
	gone("after recreating the name", old.ID)

	// The other template is untouched, and deleting by id works too.
	wantTemplate(t, "the template not deleted", Try(s.Template(ctx, acme.ID, "keep")).Must(t), keep)
	if err := s.DeleteTemplate(ctx, acme.ID, keep.ID); err != nil {
		t.Fatal(err)
	}
	list, _ := Try2(s.ListTemplates(ctx, acme.ID, mailroom.Page{})).Must(t)
	if len(list) != 1 || list[0].ID != again.ID {
		t.Fatalf("after the deletes the account lists %d templates, want only the recreated one", len(list))
	}
}
