package http_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/storetest"
)

// resendEmail is a valid email of Resend's shape to rcpt.
func resendEmail(rcpt string) map[string]any {
	return map[string]any{"from": "orders@shop.example", "to": rcpt, "subject": "Hi " + rcpt, "text": "Hello"}
}

// batchIDs is the data of a 200 batch answer, which has want errors.
func batchIDs(t *testing.T, r *apitest.Response, wantErrors int) ([]string, []map[string]any) {
	t.Helper()
	var body struct {
		Data   []map[string]string `json:"data"`
		Errors []map[string]any    `json:"errors"`
	}
	if err := json.Unmarshal(r.Body, &body); r.Status != 200 || err != nil || len(body.Errors) != wantErrors {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	var ids []string
	for _, d := range body.Data {
		ids = append(ids, d["id"])
	}
	return ids, body.Errors
}

func TestResendBatchStrictAndPermissive(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newResendEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		bad := resendEmail("not an address")
		batch := []any{resendEmail("a@example.net"), bad, resendEmail("c@example.net"), `{"to": 5}`}
		batch[3] = map[string]any{"from": "orders@shop.example", "to": 5}

		// Strict, the default: nothing stored, the first refused item named.
		for _, h := range []map[string]string{nil, {"x-batch-validation": "strict"}} {
			wantResendError(t, e.resendPost(t, "/emails/batch", batch, h), 422, "validation_error", "Item 1 of the batch", "2 items were refused", "none of its 4 items was sent", "to")
		}
		if n := e.messageCount(t); n != 0 {
			t.Fatalf("a refused strict batch stored %d messages", n)
		}

		// Permissive: the accepted ones, in order, and the refused ones by index.
		ids, errs := batchIDs(t, e.resendPost(t, "/emails/batch", batch, map[string]string{"x-batch-validation": "permissive"}), 2)
		if len(ids) != 2 || errs[0]["index"] != float64(1) || errs[1]["index"] != float64(3) {
			t.Fatalf("ids %v errors %v", ids, errs)
		}
		for i, rcpt := range []string{"a@example.net", "c@example.net"} {
			if m := e.stored(t, ids[i]); m.To[0].Address != rcpt {
				t.Errorf("data[%d] is the message to %s", i, m.To[0].Address)
			}
		}
		if msg, _ := errs[0]["message"].(string); msg == "" {
			t.Errorf("error without a message: %v", errs[0])
		}

		// Strict and valid: every id.
		ids, _ = batchIDs(t, e.resendPost(t, "/emails/batch", []any{resendEmail("x@example.net"), resendEmail("y@example.net")}, nil), 0)
		if len(ids) != 2 || ids[0] == ids[1] {
			t.Fatalf("ids %v", ids)
		}

		wantResendError(t, e.resendPost(t, "/emails/batch", batch, map[string]string{"x-batch-validation": "lenient"}), 422, "validation_error", "strict", "permissive")
		wantResendError(t, e.resendPost(t, "/emails/batch", []any{}, nil), 422, "validation_error", "empty")
		many := make([]any, 101)
		for i := range many {
			many[i] = resendEmail(fmt.Sprintf("r%d@example.net", i))
		}
		wantResendError(t, e.resendPost(t, "/emails/batch", many, nil), 422, "validation_error", "more than 100")
		wantResendError(t, e.resendPost(t, "/emails/batch", map[string]any{"messages": many[:1]}, nil), 400, "validation_error", "array")
		if n := e.messageCount(t); n != 4 {
			t.Fatalf("%d messages, want the 4 accepted", n)
		}
	})
}

// The Idempotency-Key header on a single send, as on /v1: a retry is the
// first answer, another body under the key 409. A relative scheduled_at
// read again later is the same request.
func TestResendSendIdempotency(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newResendEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		key := map[string]string{"Idempotency-Key": "order-42"}
		body := resendEmail("a@example.net")
		body["scheduled_at"] = "in 1 hour"
		first := resendID(t, e.resendPost(t, "/emails", body, key))
		e.clock.Advance(time.Minute)
		if again := resendID(t, e.resendPost(t, "/emails", body, key)); again != first {
			t.Fatalf("retry answered %s, want %s", again, first)
		}
		body["subject"] = "Another"
		wantResendError(t, e.resendPost(t, "/emails", body, key), 409, "invalid_idempotent_request")
		if n := e.messageCount(t); n != 1 {
			t.Fatalf("%d messages, want 1", n)
		}
	})
}

// A batch's key covers its items: a retry answers the same ids and sends
// nothing twice; another batch under the key, or the same one grown or
// cut, is 409 and sends nothing.
func TestResendBatchIdempotency(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newResendEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		key := map[string]string{"Idempotency-Key": "batch-7"}
		batch := []any{resendEmail("a@example.net"), resendEmail("b@example.net")}
		first, _ := batchIDs(t, e.resendPost(t, "/emails/batch", batch, key), 0)
		for _, mode := range []string{"strict", "permissive"} {
			again, _ := batchIDs(t, e.resendPost(t, "/emails/batch", batch, map[string]string{"Idempotency-Key": "batch-7", "x-batch-validation": mode}), 0)
			if fmt.Sprint(again) != fmt.Sprint(first) {
				t.Fatalf("retry (%s) answered %v, want %v", mode, again, first)
			}
		}
		for name, other := range map[string][]any{
			"changed": {resendEmail("a@example.net"), resendEmail("z@example.net")},
			"grown":   {resendEmail("a@example.net"), resendEmail("b@example.net"), resendEmail("c@example.net")},
			"cut":     {resendEmail("a@example.net")},
		} {
			for _, mode := range []string{"strict", "permissive"} {
				t.Run(name+" "+mode, func(t *testing.T) {
					wantResendError(t, e.resendPost(t, "/emails/batch", other, map[string]string{"Idempotency-Key": "batch-7", "x-batch-validation": mode}),
						409, "invalid_idempotent_request", "different batch")
				})
			}
		}
		if n := e.messageCount(t); n != 2 {
			t.Fatalf("%d messages, want 2", n)
		}
		// Each other item is keyed by the batch's key and its place.
		if m := e.stored(t, first[1]); m.IdempotencyKey != "batch-7/1" {
			t.Errorf("item 1's key is %q", m.IdempotencyKey)
		}
		// The first item holds the batch's key itself, so a single send
		// under it is another request, and so is a batch under a single
		// send's key: refused, never sent twice.
		if m := e.stored(t, first[0]); m.IdempotencyKey != "batch-7" {
			t.Errorf("item 0's key is %q", m.IdempotencyKey)
		}
		wantResendError(t, e.resendPost(t, "/emails", resendEmail("a@example.net"), key), 409, "invalid_idempotent_request")
		resendID(t, e.resendPost(t, "/emails", resendEmail("a@example.net"), map[string]string{"Idempotency-Key": "single-8"}))
		wantResendError(t, e.resendPost(t, "/emails/batch", []any{resendEmail("a@example.net")}, map[string]string{"Idempotency-Key": "single-8"}), 409, "invalid_idempotent_request")
		if n := e.messageCount(t); n != 3 {
			t.Fatalf("%d messages, want 3", n)
		}
		// A key with no room for the items' suffix is refused.
		wantResendError(t, e.resendPost(t, "/emails/batch", batch, map[string]string{"Idempotency-Key": strings.Repeat("k", 255)}), 400, "invalid_idempotency_key", "at most 254")
	})
}
