package http_test

import (
	"testing"
	"time"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/delivery"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/storetest"
)

// BenchmarkSendWithTemplate compares sends that name a template with plain
// sends of the same message, through the whole API on SQLite, in one run:
//
//	go test -run '^$' -bench SendWithTemplate -benchtime 3000x ./http/
//
// The template is the receipt of templates_test.go (nested names, a
// section over two items, an inverted section); the plain send carries the
// html and text that template renders. The difference is the template's
// cost on the request path: one indexed read of its current version and
// the rendering, the parsed form coming from the cache.
func BenchmarkSendWithTemplate(b *testing.B) {
	// Accept only: delivery would share the CPU.
	e := newEnvWithStore(b, storetest.SQLite.Open(b), func(_ *mhttp.Server, d *delivery.Deliverer) { d.Healthy = func() bool { return false } })
	e.verifiedDomain(b, "shop.example")
	r := e.Do(apitest.Request{Method: "POST", Path: "/v1/templates", Key: e.admin, Body: receiptTemplate})
	if r.Status != 201 {
		b.Fatalf("create: %d %s", r.Status, r.Body)
	}
	vars := receiptVariables("Ann")
	rendered := e.Do(apitest.Request{Method: "POST", Path: "/v1/templates/receipt/render", Key: e.admin, Body: map[string]any{"variables": vars}}).Map()
	bodies := map[string]map[string]any{
		"plain": {"from": receiptTemplate["from"], "to": "ann@example.com", "subject": rendered["subject"],
			"html": rendered["html"], "text": rendered["text"]},
		"template": {"template": "receipt", "to": "ann@example.com", "variables": vars},
	}
	// Interleaved, one of each per iteration, so that both meet the same
	// store (it grows as the run goes) and the same noise.
	var spent [2]time.Duration
	for b.Loop() {
		for i, name := range []string{"plain", "template"} {
			start := time.Now()
			if r := e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: e.admin, Body: bodies[name]}); r.Status != 200 {
				b.Fatalf("send: %d %s", r.Status, r.Body)
			}
			spent[i] += time.Since(start)
		}
	}
	b.ReportMetric(float64(spent[0].Microseconds())/float64(b.N), "µs/plain-send")
	b.ReportMetric(float64(spent[1].Microseconds())/float64(b.N), "µs/template-send")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "template/plain")
}
