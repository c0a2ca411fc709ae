package http_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// TestDomainLimit: an account at its domain limit (serve --max-domains) is
// refused the next one with a 400 validation_error on name that names the
// limit, the domains before it were added, deleting one frees a slot, and
// adds racing through the API cannot pass the limit together.
func TestDomainLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.domains.Max = 3
		for _, name := range []string{"a.example", "b.example", "c.example"} {
			if r := e.domainCall(t, "POST", "/v1/domains", e.admin, map[string]string{"name": name}); r.Status != 201 {
				t.Fatalf("%s, within the limit: %d %s", name, r.Status, r.Body)
			}
		}
		r := e.domainCall(t, "POST", "/v1/domains", e.admin, map[string]string{"name": "d.example"})
		wantError(t, r, 400, mailroom.ECodeValidation)
		if body := string(r.Body); !strings.Contains(body, `"field":"name"`) || !strings.Contains(body, "(3)") || !strings.Contains(body, "--max-domains") {
			t.Errorf("the refusal does not name the field and the limit: %s", body)
		}
		if r := e.domainCall(t, "GET", "/v1/domains/d.example", e.admin, nil); r.Status != 404 {
			t.Fatalf("the refused domain: GET %d %s", r.Status, r.Body)
		}

		if r := e.domainCall(t, "DELETE", "/v1/domains/b.example", e.admin, nil); r.Status != 204 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		if r := e.domainCall(t, "POST", "/v1/domains", e.admin, map[string]string{"name": "d.example"}); r.Status != 201 {
			t.Fatalf("after a delete: %d %s", r.Status, r.Body)
		}

		// Another account, empty, races eight adds for a limit of three.
		other := storetest.NewAccount(t, e.store, "globex")
		key := e.newKey(t, other, mailroom.Scopes(mailroom.AllScopes))
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			statuses = map[int]int{}
		)
		start := make(chan struct{})
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r := e.domainCall(t, "POST", "/v1/domains", key, map[string]string{"name": fmt.Sprintf("r%d.example", i)})
				mu.Lock()
				statuses[r.Status]++
				mu.Unlock()
			}()
		}
		close(start)
		wg.Wait()
		if statuses[201] != 3 || statuses[400] != 5 {
			t.Fatalf("racing adds answered %v, want three 201 and five 400", statuses)
		}
	})
}
