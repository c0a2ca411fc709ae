package http_test

import (
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/delivery"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/membudget"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
)

// heldSend is a send whose body the client holds back after some of its
// bytes: the server has reserved what arrived (its memory is reserved as
// the body is read) and waits for the rest.
type heldSend struct {
	rest      []byte
	w         *io.PipeWriter
	done      chan *http.Response
	abandoned atomic.Bool
}

// holdSend starts a send of body with key and writes all of it but its
// last KiB: it holds about its whole cost.
func (e *env) holdSend(t *testing.T, key string, body []byte) *heldSend {
	t.Helper()
	return e.holdSendAfter(t, key, body, len(body)-1024)
}

// heldCost is what the budget holds for a body of which sent bytes were
// read: whole steps of membudget.MeterStep, BodyExpansion bytes a byte.
func heldCost(sent int) int64 {
	steps := (int64(sent) + membudget.MeterStep - 1) / membudget.MeterStep
	return steps * membudget.MeterStep * mhttp.BodyExpansion
}

// holdSendAfter starts a send of body with key, declaring its whole
// length, and writes its first sent bytes.
func (e *env) holdSendAfter(t *testing.T, key string, body []byte, sent int) *heldSend {
	t.Helper()
	pr, pw := io.Pipe()
	req, err := http.NewRequest("POST", e.Base+"/v1/send", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	h := &heldSend{rest: body[sent:], w: pw, done: make(chan *http.Response, 1)}
	go func() {
		resp, err := e.HTTP.Do(req)
		if err != nil {
			if !h.abandoned.Load() {
				t.Errorf("held send: %v", err)
			}
			close(h.done)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		h.done <- resp
	}()
	if _, err := pw.Write(body[:sent]); err != nil {
		t.Fatal(err)
	}
	return h
}

// abandon ends the send without the rest of its body, as a client that
// goes away does, and waits for its end.
func (h *heldSend) abandon() {
	h.abandoned.Store(true)
	h.w.CloseWithError(io.ErrUnexpectedEOF)
	<-h.done
}

// finish sends the rest of the body and returns the status.
func (h *heldSend) finish(t *testing.T) int {
	t.Helper()
	if _, err := h.w.Write(h.rest); err != nil {
		t.Fatal(err)
	}
	h.w.Close()
	resp := <-h.done
	if resp == nil {
		t.FailNow()
	}
	return resp.StatusCode
}

// wantMemoryRefusal checks a 503 service_unavailable with Retry-After.
func wantMemoryRefusal(t *testing.T, r *apitest.Response, what string) {
	t.Helper()
	if r.Status != 503 || r.Code() != "service_unavailable" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("%s: got %d %s (Retry-After %q), want 503 service_unavailable with Retry-After; body %s",
			what, r.Status, r.Code(), r.Header.Get("Retry-After"), r.Body)
	}
}

// TestLargeSendsBeyondTheMemoryBudgetAre503 fills a small memory budget
// with large sends held in flight: the next one is refused 503 with
// Retry-After before its body is read, an account cannot take more than
// its share while another account's send still gets through, and the
// sends that were admitted succeed.
func TestLargeSendsBeyondTheMemoryBudgetAre503(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		body := largeSend("orders@shop.example", 1<<20, 0)
		cost := int64(len(body)) * mhttp.BodyExpansion
		// Room for three such sends, one account holding at most two.
		budget := membudget.New(3*cost+cost/2, 2*cost+cost/2)
		e := newEnvWithStore(t, eng.Open(t), func(s *mhttp.Server, d *delivery.Deliverer) {
			s.Memory = budget
			d.Healthy = func() bool { return false } // accept only
		})
		e.verifiedDomain(t, "shop.example")
		other := storetest.NewAccount(t, e.store, "other")
		otherKey := e.newKey(t, other, mailroom.Scopes{mailroom.ScopeSend, mailroom.ScopeDomains})
		d := decodeDomain(e.domainCall(t, "POST", "/v1/domains", otherKey, map[string]string{"name": "other.example"}))
		e.publish(d)
		if d = decodeDomain(e.domainCall(t, "POST", "/v1/domains/other.example/verify", otherKey, nil)); d.Status != api.DomainVerified {
			t.Fatalf("other.example did not verify: %+v", d)
		}
		otherBody := largeSend("orders@other.example", 1<<20, 0)
		inUse := func(want int64) {
			t.Helper()
			poll.Until(t, 10*time.Second, "the budget to hold the sends in flight", func() bool { return budget.InUse() == want })
		}

		// acme holds two sends, all but the last KiB of each read: its
		// share.
		held := heldCost(len(body) - 1024)
		a1 := e.holdSend(t, e.admin, body)
		inUse(held)
		a2 := e.holdSend(t, e.admin, body)
		inUse(2 * held)
		third := e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: e.admin, Body: body})
		wantMemoryRefusal(t, third, "acme's third send, past its share")
		// A body of unknown length is refused as it is read.
		pr, pw := io.Pipe()
		go func() { _, _ = pw.Write(body); pw.Close() }()
		req, _ := http.NewRequest("POST", e.Base+"/v1/send", pr)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+e.admin)
		resp, err := e.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("acme's chunked send past its share: %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
		}

		// Another account still gets through, and fills the node.
		if r := e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: otherKey, Body: otherBody}); r.Status != 200 {
			t.Fatalf("the other account's send while acme holds its share: %d %s", r.Status, r.Body)
		}
		inUse(2 * held)
		b1 := e.holdSend(t, otherKey, otherBody)
		inUse(2*held + heldCost(len(otherBody)-1024))
		wantMemoryRefusal(t, e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: otherKey, Body: otherBody}),
			"the other account's send with the node's budget taken")

		// Small requests without a body are not held back.
		if r := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages", Key: e.admin}); r.Status != 200 {
			t.Fatalf("listing with the budget taken: %d %s", r.Status, r.Body)
		}

		// The admitted sends succeed, and give their memory back.
		for i, h := range []*heldSend{a1, a2, b1} {
			if status := h.finish(t); status != 200 {
				t.Fatalf("held send %d: %d, want 200", i, status)
			}
		}
		inUse(0)
		if r := e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: e.admin, Body: body}); r.Status != 200 {
			t.Fatalf("a send once the budget is free: %d %s", r.Status, r.Body)
		}
		inUse(0)
		if m := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages?limit=100", Key: e.admin}); len(apitest.Decode[api.List[api.Message]](m).Data) != 3 {
			t.Fatalf("acme's log: %s, want its three sends that were admitted", m.Body)
		}
	})
}

// TestStalledBodiesHoldOnlyWhatTheySent is the outside probe's finding
// (issue 27): sends that declare a large Content-Length and then send
// next to nothing held their whole cost from the budget until the read
// timeout, so that a few idle connections refused every other send. A
// body is now reserved as it arrives: eight stalled sends hold a step
// each, and a send of the same size still fits beside them.
func TestStalledBodiesHoldOnlyWhatTheySent(t *testing.T) {
	body := largeSend("orders@shop.example", 8<<20, 0)
	cost := int64(len(body)) * mhttp.BodyExpansion
	// Room for two such sends, whoever makes them.
	budget := membudget.New(2*cost, 2*cost)
	e := newEnvWithStore(t, storetest.SQLite.Open(t), func(s *mhttp.Server, d *delivery.Deliverer) {
		s.Memory = budget
		d.Healthy = func() bool { return false } // accept only
	})
	e.verifiedDomain(t, "shop.example")

	var stalled []*heldSend
	for range 8 {
		stalled = append(stalled, e.holdSendAfter(t, e.admin, body, 1024))
	}
	poll.Until(t, 10*time.Second, "eight stalled sends to hold a step each", func() bool {
		return budget.InUse() == 8*heldCost(1024)
	})
	if r := e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: e.admin, Body: body}); r.Status != 200 {
		t.Fatalf("a send beside eight stalled ones: %d %s", r.Status, r.Body)
	}
	for _, h := range stalled {
		h.abandon()
	}
	poll.Until(t, 10*time.Second, "the budget to be free", func() bool { return budget.InUse() == 0 })
}
