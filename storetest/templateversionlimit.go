package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites,
		suite{"TemplateVersionLimit", testTemplateVersionLimit},
		suite{"TemplateVersionLimitConcurrent", testTemplateVersionLimitConcurrent},
	)
}

// testTemplateVersionLimit: a template takes versions up to the limit
// (serve --max-template-versions), the save past it is refused naming the
// limit and stores nothing, and every version before it stays readable
// (messages and the log name the version they used). The limit is per
// template, a higher one lets saves go on, and a lower one removes
// nothing.
func testTemplateVersionLimit(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	tpl := NewTemplate(acme, "receipt", t0)
	if err := s.CreateTemplate(ctx, tpl, 10); err != nil {
		t.Fatal(err)
	}
	subjects := map[int]string{1: tpl.Subject} // by version
	update := func(n, max int) error {
		t.Helper()
		u := revision(acme.ID, tpl.ID, fmt.Sprintf("v%d", n), t0.Add(time.Duration(n)*time.Minute))
		err := s.UpdateTemplate(ctx, u, max)
		if err == nil {
			if u.Version != n {
				t.Fatalf("saved as version %d, want %d", u.Version, n)
			}
			subjects[n] = u.Subject
		}
		return err
	}
	// Every version saved is listed and readable with its content, and
	// the current one is the newest.
	wantAll := func(newest int) {
		t.Helper()
		page, _ := Try2(s.ListTemplateVersions(ctx, acme.ID, tpl.ID, mailroom.Page{Limit: 100})).Must(t)
		var listed []int
		for _, v := range page {
			listed = append(listed, v.Version)
		}
		var want []int
		for v := newest; v >= 1; v-- {
			want = append(want, v)
		}
		if fmt.Sprint(listed) != fmt.Sprint(want) {
			t.Fatalf("versions listed %v, want %v", listed, want)
		}
		for v := 1; v <= newest; v++ {
			if got := Try(s.TemplateVersion(ctx, acme.ID, tpl.ID, v)).Must(t); got.Subject != subjects[v] {
				t.Fatalf("version %d holds %q, want %q", v, got.Subject, subjects[v])
			}
		}
		if cur := Try(s.Template(ctx, acme.ID, tpl.ID)).Must(t); cur.Version != newest || cur.Subject != subjects[newest] {
			t.Fatalf("current version %d %q, want %d %q", cur.Version, cur.Subject, newest, subjects[newest])
		}
	}

	for n := 2; n <= 3; n++ {
		if err := update(n, 3); err != nil {
			t.Fatalf("version %d, within the limit: %v", n, err)
		}
	}
	wantAll(3)
	err := update(4, 3)
	wantCode(t, err, mailroom.ECodeValidation)
	if msg := err.Error(); !strings.Contains(msg, "(3)") || !strings.Contains(msg, "--max-template-versions") || !strings.Contains(msg, "new template") {
		t.Errorf("the refusal does not name the limit and what to do: %v", err)
	}
	_, err = s.TemplateVersion(ctx, acme.ID, tpl.ID, 4)
	wantCode(t, err, mailroom.ECodeNotFound)
	wantAll(3)

	// The limit is per template: another one of the account is not full.
	other := NewTemplate(acme, "invoice", t0)
	if err := s.CreateTemplate(ctx, other, 10); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateTemplate(ctx, revision(acme.ID, other.ID, "invoice v2", t0.Add(time.Hour)), 3); err != nil {
		t.Fatalf("receipt's versions counted against invoice: %v", err)
	}

	// The operator raises the limit: the next save is version 4.
	if err := update(4, 4); err != nil {
		t.Fatalf("under a higher limit: %v", err)
	}
	wantAll(4)
	// The operator lowers it: saves are refused, nothing is removed.
	wantCode(t, update(5, 2), mailroom.ECodeValidation)
	wantAll(4)
}

// testTemplateVersionLimitConcurrent: saves racing on one template cannot
// pass the limit together (each counts under the template's lock), exactly
// the limit's worth of versions are stored, and each saver that was told
// it got a version holds it. The racers start together, on several
// templates in turn, so that without the lock two of them would count the
// same number nearly every time.
func testTemplateVersionLimitConcurrent(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	const max, racers = 3, 16
	acme := NewAccount(t, s, "acme")
	for round := range 4 {
		tpl := NewTemplate(acme, fmt.Sprintf("digest%d", round), t0)
		if err := s.CreateTemplate(ctx, tpl, 10); err != nil {
			t.Fatal(err)
		}
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			saved  = map[int]string{} // subject by version
			others []error
		)
		start := make(chan struct{})
		for i := range racers {
			wg.Go(func() {
				u := revision(acme.ID, tpl.ID, fmt.Sprintf("writer %d", i), t0.Add(time.Duration(i+1)*time.Second))
				<-start
				err := s.UpdateTemplate(ctx, u, max)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					if prev, ok := saved[u.Version]; ok {
						others = append(others, fmt.Errorf("%q and %q both got version %d", prev, u.Subject, u.Version))
					}
					saved[u.Version] = u.Subject
				case !mailroom.IsCode(err, mailroom.ECodeValidation):
					others = append(others, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if len(others) > 0 {
			t.Fatalf("saves failed otherwise than by the limit: %v", others)
		}
		page, _ := Try2(s.ListTemplateVersions(ctx, acme.ID, tpl.ID, mailroom.Page{Limit: 100})).Must(t)
		if len(saved) != max-1 || len(page) != max {
			t.Fatalf("round %d: %d concurrent saves succeeded and %d versions are stored, want %d and %d", round, len(saved), len(page), max-1, max)
		}
		for v, subject := range saved {
			if got := Try(s.TemplateVersion(ctx, acme.ID, tpl.ID, v)).Must(t); got.Subject != subject {
				t.Fatalf("round %d: version %d holds %q, but %q was told it got that version", round, v, got.Subject, subject)
			}
		}
	}
}
