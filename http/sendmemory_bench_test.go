package http_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/delivery"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/storetest"
)

// largeSend is the body of a send of about size bytes: an attachment
// filling size less html bytes of base64, and html of that many bytes.
func largeSend(from string, size, html int) []byte {
	raw := make([]byte, (size-html-4096)/4*3)
	_, _ = rand.Read(raw)
	body := map[string]any{"from": from, "to": "ann@example.com", "subject": "Your report",
		"attachments": []map[string]any{{"filename": "report.bin", "content": base64.StdEncoding.EncodeToString(raw)}}}
	if html > 0 {
		body["html"] = "<p>" + strings.Repeat("Your report is attached. <b>Thanks</b> ", html/40) + "</p>"
	} else {
		body["text"] = "Your report is attached."
	}
	b, _ := json.Marshal(body)
	return b
}

// BenchmarkSendMemory measures BodyExpansion: the bytes allocated by one
// large send (or batch) through the whole API on each engine (PostgreSQL
// when MAILROOM_TEST_DATABASE_URL is set), client and server in this
// process, divided by its body's size (alloc/body). What a
// request allocates bounds what it can hold at once, so the largest ratio,
// rounded up, is what a request reserves per byte of body:
//
//	go test ./http -run '^$' -bench BenchmarkSendMemory -benchtime 10x
func BenchmarkSendMemory(b *testing.B) {
	for _, c := range []struct {
		name       string
		size, html int
		batch      int
	}{{"attachment-13MiB", 13 << 20, 0, 0}, {"html-5MiB-attachment-8MiB", 13 << 20, 5<<20 - 100, 0},
		{"batch-10x1.3MiB", 13 << 19, 0, 10}, {"batch-10x1.3MiB-html", 13 << 19, 1 << 19, 10}} {
		for _, engine := range []storetest.Engine{storetest.SQLite, storetest.Postgres} {
			b.Run(engine.Name+"/"+c.name, func(b *testing.B) {
				if engine.Name == storetest.Postgres.Name {
					storetest.RequirePostgres(b)
				}
				e := newEnvWithStore(b, engine.Open(b), func(_ *mhttp.Server, d *delivery.Deliverer) { d.Healthy = func() bool { return false } })
				e.verifiedDomain(b, "shop.example")
				body := largeSend("orders@shop.example", c.size, c.html)
				path := "/v1/send"
				if c.batch > 0 {
					path = "/v1/send/batch"
					items := make([]json.RawMessage, c.batch)
					for i := range items {
						items[i] = largeSend("orders@shop.example", c.size/c.batch, c.html/c.batch)
					}
					body, _ = json.Marshal(map[string]any{"messages": items})
				}
				var ms0, ms1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms0)
				n := 0
				for b.Loop() {
					req, _ := http.NewRequest("POST", e.Base+path, bytes.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+e.admin)
					req.Header.Set("Content-Type", "application/json")
					resp, err := e.HTTP.Do(req)
					if err != nil || resp.StatusCode != 200 {
						b.Fatal(err, resp.StatusCode)
					}
					resp.Body.Close()
					n++
				}
				runtime.ReadMemStats(&ms1)
				b.ReportMetric(float64(len(body))/(1<<20), "body-MiB")
				b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(n)/float64(len(body)), "alloc/body")
			})
		}
	}
}
