package http_test

import (
	"fmt"
	"testing"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/delivery"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/storetest"
)

// TestTemplateVersionsKept: with serve --max-template-versions 2, a
// template edited three times lists its two newest versions, and the
// older ones answer 404 where they were readable before.
func TestTemplateVersionsKept(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnvWithStore(t, eng.Open(t), func(srv *mhttp.Server, _ *delivery.Deliverer) { srv.Templates.Versions = 2 })
		body := map[string]any{"name": "receipt", "subject": "v1", "text": "Thanks"}
		e.createTemplate(t, e.admin, body)
		for v := 2; v <= 4; v++ {
			body["subject"] = fmt.Sprintf("v%d", v)
			if r := e.Do(apitest.Request{Method: "PUT", Path: "/v1/templates/receipt", Key: e.admin, Body: body}); r.Status != 200 {
				t.Fatalf("PUT: %d %s", r.Status, r.Body)
			}
		}
		r := e.Do(apitest.Request{Method: "GET", Path: "/v1/templates/receipt/versions", Key: e.admin})
		var got []any
		for _, v := range r.Map()["data"].([]any) {
			got = append(got, v.(map[string]any)["version"])
		}
		if fmt.Sprint(got) != "[4 3]" {
			t.Fatalf("versions listed %v, want [4 3]", got)
		}
		for v, status := range map[int]int{1: 404, 2: 404, 3: 200, 4: 200} {
			if r := e.Do(apitest.Request{Method: "GET", Path: fmt.Sprintf("/v1/templates/receipt/versions/%d", v), Key: e.admin}); r.Status != status {
				t.Errorf("version %d: %d, want %d", v, r.Status, status)
			}
		}
	})
}
