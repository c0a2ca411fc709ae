package http_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/storetest"
)

func (e *env) batch(t *testing.T, body any) *apitest.Response {
	t.Helper()
	return e.Do(apitest.Request{Method: "POST", Path: "/v1/send/batch", Key: e.admin, Body: body})
}

// batchData returns the items of a 200 batch answer, checking its counts.
func batchData(t *testing.T, r *apitest.Response, accepted, failed int) []map[string]any {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	m := r.Map()
	if m["accepted"] != float64(accepted) || m["failed"] != float64(failed) {
		t.Fatalf("accepted %v failed %v, want %d and %d: %s", m["accepted"], m["failed"], accepted, failed, r.Body)
	}
	var out []map[string]any
	for _, d := range m["data"].([]any) {
		out = append(out, d.(map[string]any))
	}
	if len(out) != accepted+failed {
		t.Fatalf("%d items answered, want %d", len(out), accepted+failed)
	}
	return out
}

func TestBatchAnswersEachItem(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")
		good := func(to, key string) map[string]any {
			return map[string]any{"from": "orders@shop.example", "to": to, "subject": "Receipt for " + to,
				"text": "Thanks", "idempotencyKey": key}
		}
		body := map[string]any{"messages": []any{
			good("ann@example.net", "k-ann"),
			map[string]any{"from": "orders@shop.example", "to": "x@example.net", "subjct": "typo", "text": "t"},
			map[string]any{"from": "orders@shop.example", "to": 5, "subject": "s", "text": "t"},
			map[string]any{"from": "orders@elsewhere.example", "to": "x@example.net", "subject": "s", "text": "t"},
			good("bob@example.net", "k-bob"),
			good("ann@example.net", "k-ann"), // the same item again: the first's duplicate
			"not an object",
			map[string]any{"from": "orders@shop.example", "to": "x@example.net", "subject": "s", "text": "t", "template": "nope"},
			map[string]any{"from": "orders@shop.example", "to": "bad-address", "subject": "s", "text": "t"},
		}}
		data := batchData(t, e.batch(t, body), 3, 6)
		if data[0]["status"] != "queued" || data[4]["status"] != "queued" {
			t.Fatalf("good items: %v, %v", data[0], data[4])
		}
		if data[5]["status"] != "duplicate" || data[5]["messageId"] != data[0]["messageId"] {
			t.Errorf("the repeated item: %v, want a duplicate of %v", data[5], data[0]["messageId"])
		}
		for i, code := range map[int]string{1: "validation_error", 2: "invalid_json", 3: "domain_not_verified",
			6: "invalid_json", 7: "not_found", 8: "validation_error"} {
			if data[i]["error"] != code || data[i]["message"] == "" {
				t.Errorf("item %d: %v, want %s", i, data[i], code)
			}
		}
		if d, _ := data[1]["details"].([]any); len(d) != 1 || !strings.Contains(fmt.Sprint(d[0]), "subjct") {
			t.Errorf("unknown field item: details %v", data[1]["details"])
		}
		if !strings.Contains(data[2]["message"].(string), `"to"`) {
			t.Errorf("wrong type item: %v", data[2]["message"])
		}

		got := e.mx.WaitMessages(t, 2, 20*time.Second)
		e.waitStatus(t, data[0]["messageId"].(string), "delivered")
		e.waitStatus(t, data[4]["messageId"].(string), "delivered")

		// The same batch again: every accepted item is a duplicate of its
		// first id; nothing new is stored or sent.
		again := batchData(t, e.batch(t, body), 3, 6)
		for _, i := range []int{0, 4, 5} {
			if again[i]["status"] != "duplicate" || again[i]["messageId"] != data[i]["messageId"] {
				t.Errorf("retried item %d: %v, want duplicate of %v", i, again[i], data[i]["messageId"])
			}
		}
		list := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages", Key: e.admin}).Map()["data"].([]any)
		if len(list) != 2 || len(got) != 2 || len(e.mx.Messages()) != 2 {
			t.Errorf("%d messages logged and %d received, want 2 each", len(list), len(e.mx.Messages()))
		}

		// An item without a key is a new message each time.
		keyless := map[string]any{"messages": []any{map[string]any{"from": "orders@shop.example", "to": "cat@example.net", "subject": "s", "text": "t"}}}
		first := batchData(t, e.batch(t, keyless), 1, 0)
		second := batchData(t, e.batch(t, keyless), 1, 0)
		if first[0]["status"] != "queued" || second[0]["status"] != "queued" || first[0]["messageId"] == second[0]["messageId"] {
			t.Errorf("keyless items: %v then %v, want two new messages", first[0], second[0])
		}
	})
}

func TestBatchEnvelopeRefusals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		item := map[string]any{"from": "orders@shop.example", "to": "x@example.net", "subject": "s", "text": "t"}
		many := make([]any, mailroom.MaxBatchMessages+1)
		for i := range many {
			many[i] = item
		}
		for _, tc := range []struct {
			name  string
			body  any
			code  string
			field string
		}{
			{"no messages", map[string]any{}, "validation_error", "messages"},
			{"empty", map[string]any{"messages": []any{}}, "validation_error", "messages"},
			{"null", `{"messages": null}`, "validation_error", "messages"},
			{"not an array", map[string]any{"messages": item}, "invalid_json", ""},
			{"501 items", map[string]any{"messages": many}, "validation_error", "messages"},
			{"a member beside messages", map[string]any{"messages": []any{item}, "from": "x@shop.example"}, "validation_error", "from"},
			{"not an object", `[{"from": "a@shop.example"}]`, "invalid_json", ""},
			{"two values", `{"messages": []} {}`, "invalid_json", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.batch(t, tc.body)
				wantError(t, r, 400, tc.code)
				if tc.field != "" && !hasField(r, tc.field) {
					t.Errorf("details do not name %s: %s", tc.field, r.Body)
				}
			})
		}
		r := e.Do(apitest.Request{Method: "POST", Path: "/v1/send/batch", Key: e.admin,
			Body: map[string]any{"messages": []any{item}}, Header: map[string]string{"Idempotency-Key": "k1"}})
		wantError(t, r, 400, "validation_error")
		if !hasField(r, "Idempotency-Key") || !strings.Contains(r.Str("message"), "idempotencyKey") {
			t.Errorf("header refusal does not say what to do: %s", r.Body)
		}
		noSend := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeDomains})
		r = e.Do(apitest.Request{Method: "POST", Path: "/v1/send/batch", Key: noSend, Body: map[string]any{"messages": []any{item}}})
		wantError(t, r, 403, "insufficient_scope")
		e.noMessages(t)
	})
}

func TestBatchOf500IsDelivered(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")
		items := make([]any, mailroom.MaxBatchMessages)
		for i := range items {
			items[i] = map[string]any{"from": "orders@shop.example", "to": fmt.Sprintf("r%03d@example.net", i),
				"subject": fmt.Sprintf("Order %d", i), "html": "<p>Thanks</p>", "tags": map[string]string{"n": fmt.Sprint(i)},
				"idempotencyKey": fmt.Sprintf("order-%d", i)}
		}
		data := batchData(t, e.batch(t, map[string]any{"messages": items}), 500, 0)
		ids := map[any]bool{}
		for _, d := range data {
			ids[d["messageId"]] = true
		}
		if len(ids) != 500 {
			t.Fatalf("%d distinct ids for 500 items", len(ids))
		}
		got := e.mx.WaitMessages(t, 500, 60*time.Second)
		seen := map[string]int{}
		for _, m := range got {
			for _, r := range m.Rcpts {
				seen[r]++
			}
		}
		for i := range items {
			if rc := fmt.Sprintf("r%03d@example.net", i); seen[rc] != 1 {
				t.Errorf("%s received %d times", rc, seen[rc])
			}
		}
	})
}

// A batch's rendering is bounded as a whole: twelve items whose template
// takes the most a message may (1 s) each would hold the request for 12 s;
// once the batch's 5 s are spent, the rest fail at once, each saying why.
func TestBatchRenderingIsBoundedAsAWhole(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	e.verifiedDomain(t, "shop.example")
	// Sections over a long blank string: little text, much work.
	e.createTemplate(t, e.admin, map[string]any{"name": "blank", "subject": "s", "text": "x" + strings.Repeat("{{#b}}{{/b}}", 80000)})
	items := make([]any, 12)
	for i := range items {
		items[i] = map[string]any{"template": "blank", "to": "a@example.com", "from": "a@shop.example",
			"variables": map[string]any{"b": strings.Repeat(" ", 250000)}}
	}
	start := time.Now()
	data := batchData(t, e.batch(t, map[string]any{"messages": items}), 0, 12)
	took := time.Since(start)
	for i, d := range data {
		if d["error"] != "validation_error" || !strings.Contains(fmt.Sprint(d["details"]), "too long to render") {
			t.Errorf("item %d: %v", i, d)
		}
	}
	// A bound, not a speed: without the batch's budget this takes 12 s.
	if limit := mailroom.MaxBatchRenderTime + 4*time.Second; took > limit {
		t.Errorf("the batch took %v to answer, more than its render budget allows (%v)", took, limit)
	}
	t.Logf("answered after %v", took)
}

// A flaw inside one item fails that item: a name given twice, bytes that
// are not UTF-8. Only what makes the body as a whole unreadable is a 400.
func TestBatchItemFlawsStayInTheirItem(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	e.verifiedDomain(t, "shop.example")
	good := `{"from": "orders@shop.example", "to": "a@example.net", "subject": "s", "text": "t"}`
	body := `{"messages": [` + good + `,
		{"from": "orders@shop.example", "to": "a@example.net", "to": "b@example.net", "subject": "s", "text": "t"},
		{"from": "orders@shop.example", "to": "a@example.net", "subject": "s` + "\xff" + `", "text": "t"},
		` + good + `]}`
	data := batchData(t, e.batch(t, body), 2, 2)
	if data[1]["error"] != "invalid_json" || !strings.Contains(data[1]["message"].(string), "given twice") {
		t.Errorf("repeated name: %v", data[1])
	}
	if data[2]["error"] != "invalid_json" || !strings.Contains(data[2]["message"].(string), "UTF-8") {
		t.Errorf("invalid UTF-8: %v", data[2])
	}
	for _, bad := range []string{`{"messages": [` + good + `,]}`, `{"messages": [` + good + `], "messages": []}`, `{"messages": [` + good + `]`} {
		wantError(t, e.Do(apitest.Request{Method: "POST", Path: "/v1/send/batch", Key: e.admin, Body: bad, NoCheck: true}), 400, "invalid_json")
	}
}

// An item of a million header members costs what the same send costs
// alone: decoding stops at the 101st header, instead of first holding a
// set of every name in the item.
func TestBatchItemCostIsBounded(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	e.verifiedDomain(t, "shop.example")
	var b strings.Builder
	b.WriteString(`{"from": "orders@shop.example", "to": "a@example.net", "subject": "s", "text": "t", "headers": {`)
	for i := 0; b.Len() < 15<<20; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"X-%d": "v"`, i)
	}
	b.WriteString("}}")
	item := b.String()
	allocated := func(path, body string) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := e.Do(apitest.Request{Method: "POST", Path: path, Key: e.admin, Body: body})
		runtime.ReadMemStats(&after)
		if r.Status != 200 && r.Status != 400 {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	single := allocated("/v1/send", item)
	batch := allocated("/v1/send/batch", `{"messages": [`+item+`]}`)
	t.Logf("allocated %d MiB for the send, %d MiB for the batch of it", single>>20, batch>>20)
	if batch > 2*single+(32<<20) {
		t.Errorf("the batch allocated %d MiB, the same send alone %d MiB", batch>>20, single>>20)
	}
}

// A batch holds at most 16 MiB of bodies as rendered: a small request of
// items whose template renders a megabyte each is not a gigabyte held in
// memory and written in one transaction. A retry is answered from what was
// stored, without rendering those items again, so the items that did not
// fit go through then.
func TestBatchRenderedContentIsBounded(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.createTemplate(t, e.admin, map[string]any{"name": "big", "from": "orders@shop.example", "subject": "big",
			"text": "{{#a}}" + strings.Repeat("x", 1_000_000) + "{{/a}}"})
		items := make([]any, 20)
		for i := range items {
			items[i] = map[string]any{"template": "big", "to": fmt.Sprintf("b%d@example.net", i),
				"variables": map[string]any{"a": []int{0}}, "idempotencyKey": fmt.Sprint("big-", i)}
		}
		body := map[string]any{"messages": items}
		first := batchData(t, e.batch(t, body), 16, 4)
		for i, d := range first[16:] {
			if d["error"] != "validation_error" || !strings.Contains(fmt.Sprint(d["details"]), "16 MiB") {
				t.Errorf("item %d past the budget: %v", 16+i, d)
			}
		}
		again := batchData(t, e.batch(t, body), 20, 0)
		for i, d := range again {
			want := "queued"
			if i < 16 {
				want = "duplicate"
			}
			if d["status"] != want || (i < 16 && d["messageId"] != first[i]["messageId"]) {
				t.Errorf("retried item %d: %v, want %s", i, d, want)
			}
		}
	})
}
