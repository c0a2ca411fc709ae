package http_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/delivery"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/storetest"
)

// TestTemplateVersionLimit: with serve --max-template-versions 3, a
// template takes its versions up to 3, the next PUT is a 400
// validation_error on name that names the limit and what to do and stores
// nothing, every version stays readable, and PUTs racing on another
// template cannot pass the limit together.
func TestTemplateVersionLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnvWithStore(t, eng.Open(t), func(srv *mhttp.Server, _ *delivery.Deliverer) { srv.Templates.MaxVersions = 3 })
		body := map[string]any{"name": "receipt", "subject": "v1", "text": "Thanks"}
		e.createTemplate(t, e.admin, body)
		put := func(key, name, subject string) *apitest.Response {
			return e.Do(apitest.Request{Method: "PUT", Path: "/v1/templates/" + name, Key: key,
				Body: map[string]any{"subject": subject, "text": "Thanks"}})
		}
		for v := 2; v <= 3; v++ {
			if r := put(e.admin, "receipt", fmt.Sprintf("v%d", v)); r.Status != 200 {
				t.Fatalf("PUT version %d, within the limit: %d %s", v, r.Status, r.Body)
			}
		}
		r := put(e.admin, "receipt", "v4")
		wantError(t, r, 400, mailroom.ECodeValidation)
		if body := string(r.Body); !strings.Contains(body, `"field":"name"`) || !strings.Contains(body, "(3)") ||
			!strings.Contains(body, "--max-template-versions") || !strings.Contains(body, "new template") {
			t.Errorf("the refusal does not name the field, the limit and what to do: %s", body)
		}

		r = e.Do(apitest.Request{Method: "GET", Path: "/v1/templates/receipt/versions", Key: e.admin})
		var listed []any
		for _, v := range r.Map()["data"].([]any) {
			listed = append(listed, v.(map[string]any)["version"])
		}
		if fmt.Sprint(listed) != "[3 2 1]" {
			t.Fatalf("versions listed %v, want [3 2 1]", listed)
		}
		for v := 1; v <= 3; v++ {
			r := e.Do(apitest.Request{Method: "GET", Path: fmt.Sprintf("/v1/templates/receipt/versions/%d", v), Key: e.admin})
			if r.Status != 200 || r.Map()["subject"] != fmt.Sprintf("v%d", v) {
				t.Errorf("version %d: %d %s", v, r.Status, r.Body)
			}
		}
		if r := e.Do(apitest.Request{Method: "GET", Path: "/v1/templates/receipt/versions/4", Key: e.admin}); r.Status != 404 {
			t.Errorf("the refused version: %d %s", r.Status, r.Body)
		}
		if r := e.Do(apitest.Request{Method: "GET", Path: "/v1/templates/receipt", Key: e.admin}); r.Map()["version"] != 3.0 || r.Map()["subject"] != "v3" {
			t.Errorf("the current version after the refusal: %s", r.Body)
		}

		// Eight PUTs race on a new template (version 1) for a limit of three.
		e.createTemplate(t, e.admin, map[string]any{"name": "digest", "subject": "v1", "text": "Thanks"})
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			statuses = map[int]int{}
		)
		start := make(chan struct{})
		for i := range 8 {
			wg.Go(func() {
				<-start
				r := put(e.admin, "digest", fmt.Sprintf("racer %d", i))
				mu.Lock()
				statuses[r.Status]++
				mu.Unlock()
			})
		}
		close(start)
		wg.Wait()
		if statuses[200] != 2 || statuses[400] != 6 {
			t.Fatalf("racing PUTs answered %v, want two 200 and six 400", statuses)
		}
	})
}
