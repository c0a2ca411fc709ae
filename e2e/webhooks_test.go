package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
)

// createHook makes an endpoint through the API and gives the receiver its
// secret.
func createHook(t *testing.T, c *apitest.Client, key string, h *hookReceiver, path string, events ...string) string {
	t.Helper()
	r := c.Do(apitest.Request{Method: "POST", Path: "/v1/webhooks", Key: key, Body: map[string]any{"url": h.url(path), "events": events}})
	if r.Status != 201 {
		t.Fatalf("create webhook: %d %s", r.Status, r.Body)
	}
	h.setSecret(t, path, r.Str("secret"))
	return r.Str("id")
}

// What a new user sees: a delivered mail produces a verified
// email.delivered with the message, recipient, tags and the receiver's
// reply; a bounce produces email.bounced (hard) to an endpoint that
// subscribes to bounces only and gets nothing else; an endpoint that
// answers 500 gets the event again with the same id, and its deliveries
// list shows both; test, rotate and replay work.
func TestWebhooksAsAUserSeesThem(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		h := startHookReceiver(t)
		w := newWorld(t)
		w.mx.Reply("gone@example.net", 550, "5.1.1", "No such user")
		node, key, _ := w.startAcmeNode(t, eng, "--webhooks-allow-private")
		c := node.client
		delivered := createHook(t, c, key, h, "/delivered", "email.delivered")
		bounced := createHook(t, c, key, h, "/bounced", "email.bounced")
		h.mu.Lock()
		h.failFirst["/delivered"] = 1
		h.mu.Unlock()

		r := c.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: key, Body: map[string]any{
			"from": "orders@shop.example", "to": []string{"ann@example.net", "gone@example.net"}, "subject": "Your order",
			"text": "Thanks", "tags": map[string]string{"kind": "receipt"}}})
		if r.Status != 200 {
			t.Fatalf("send: %d %s", r.Status, r.Body)
		}
		msgID := r.Str("messageId")

		// The first delivery of email.delivered is answered 500; the
		// retry, 5 s later, carries the same webhook-id.
		first := h.waitFor(t, "/delivered", 30*time.Second, "email.delivered arrives", func(q hookRequest) bool { return q.Type == "email.delivered" })
		again := h.waitFor(t, "/delivered", 60*time.Second, "email.delivered is retried after the 500", func(q hookRequest) bool { return q.Status == 200 })
		if !first.Verified || !again.Verified {
			t.Errorf("signatures did not verify: %+v %+v", first, again)
		}
		if first.Status != 500 || again.ID != first.ID || again.Type != "email.delivered" {
			t.Errorf("the retry is not the same event: first %+v, again %+v", first, again)
		}
		d := again.Data
		if d["messageId"] != msgID || d["recipient"] != "ann@example.net" || d["smtpResponse"] == "" || d["smtpCode"] != float64(250) {
			t.Errorf("email.delivered data = %v", d)
		}
		if tags, _ := d["tags"].(map[string]any); tags["kind"] != "receipt" {
			t.Errorf("email.delivered tags = %v", d["tags"])
		}

		b := h.waitFor(t, "/bounced", 30*time.Second, "email.bounced arrives", func(q hookRequest) bool { return q.Type == "email.bounced" })
		if !b.Verified || b.Data["bounceType"] != "hard" || b.Data["recipient"] != "gone@example.net" || b.Data["smtpCode"] != float64(550) {
			t.Errorf("email.bounced = %+v", b)
		}
		for _, q := range h.requests("/bounced") {
			if q.Type != "email.bounced" {
				t.Errorf("the bounces-only endpoint got %s", q.Type)
			}
		}
		for _, q := range h.requests("/delivered") {
			if q.Type != "email.delivered" {
				t.Errorf("the delivered-only endpoint got %s", q.Type)
			}
		}

		// The deliveries list shows the 500 and the 200 (the 200 is
		// recorded a moment after the receiver answers it).
		var codes []string
		poll.Until(t, 10*time.Second, "the deliveries list shows both attempts", func() bool {
			list := c.Do(apitest.Request{Method: "GET", Path: "/v1/webhooks/" + delivered + "/deliveries?eventId=" + first.ID, Key: key})
			codes = nil
			for _, a := range list.Map()["data"].([]any) {
				a := a.(map[string]any)
				codes = append(codes, fmt.Sprintf("%v:%v:%v", a["attempt"], a["statusCode"], a["status"]))
			}
			return len(codes) >= 2
		})
		if strings.Join(codes, " ") != "2:200:succeeded 1:500:failed" {
			t.Errorf("deliveries of %s: %v", first.ID, codes)
		}

		// Test: a webhook.test event now, to this endpoint alone.
		if r := c.Do(apitest.Request{Method: "POST", Path: "/v1/webhooks/" + bounced + "/test", Key: key}); r.Status != 202 {
			t.Fatalf("test: %d %s", r.Status, r.Body)
		}
		h.waitFor(t, "/bounced", 30*time.Second, "webhook.test arrives", func(q hookRequest) bool { return q.Type == "webhook.test" && q.Verified })

		// Rotate: the next delivery carries two signatures, and the
		// receiver that knows only the new secret verifies it.
		rot := c.Do(apitest.Request{Method: "POST", Path: "/v1/webhooks/" + delivered + "/rotate-secret", Key: key})
		if rot.Status != 200 || !strings.HasPrefix(rot.Str("secret"), "whsec_") {
			t.Fatalf("rotate: %d %s", rot.Status, rot.Body)
		}
		h.setSecret(t, "/delivered", rot.Str("secret"))

		// Replay: the same event id, again, signed with both secrets.
		before := len(h.requests("/delivered"))
		if r := c.Do(apitest.Request{Method: "POST", Path: "/v1/events/" + first.ID + "/replay", Key: key}); r.Status != 202 {
			t.Fatalf("replay: %d %s", r.Status, r.Body)
		}
		poll.Until(t, 30*time.Second, "the replay arrives", func() bool { return len(h.requests("/delivered")) > before })
		replayed := h.requests("/delivered")[before]
		if replayed.ID != first.ID || !replayed.Verified || len(strings.Fields(replayed.Signature)) != 2 {
			t.Errorf("replay = %+v", replayed)
		}
	})
}

// Without --webhooks-allow-private, no URL that reaches the operator's
// own networks is taken: every address class, written plainly or as a
// name that resolves to it.
func TestWebhookURLsRefusedForPrivateAddresses(t *testing.T) {
	w := newWorld(t)
	w.dns.SetA("rebind.example", "127.0.0.1")
	w.dns.SetAAAA("v6.example", "fd00::1")
	w.dns.SetA("public.example", "93.184.215.14")
	node, key, _ := w.startAcmeNode(t, storetest.SQLite)
	for _, u := range []string{
		"https://127.0.0.1/hook", "https://127.1.2.3/hook", "https://localhost/hook", "https://[::1]/hook",
		"https://10.1.2.3/hook", "https://172.16.0.1/hook", "https://192.168.1.1/hook", "https://[fc00::1]/hook",
		"https://169.254.169.254/latest/meta-data/", "https://[fe80::1]/hook", "https://100.64.0.1/hook",
		"https://224.0.0.1/hook", "https://0.0.0.0/hook", "https://[::]/hook", "https://[::ffff:127.0.0.1]/hook",
		"https://[::ffff:10.0.0.1]/hook", "https://rebind.example/hook", "https://v6.example/hook",
		"http://93.184.215.14/hook", "ftp://public.example/hook",
	} {
		r := node.client.Do(apitest.Request{Method: "POST", Path: "/v1/webhooks", Key: key, Body: map[string]any{"url": u, "events": []string{"*"}}})
		if r.Status != 400 || r.Code() != "validation_error" || !strings.Contains(string(r.Body), `"url"`) {
			t.Errorf("%s: %d %s", u, r.Status, r.Body)
		}
	}
	r := node.client.Do(apitest.Request{Method: "POST", Path: "/v1/webhooks", Key: key, Body: map[string]any{"url": "https://public.example/hook", "events": []string{"*"}}})
	if r.Status != 201 {
		t.Errorf("a public name: %d %s", r.Status, r.Body)
	}
	// Moving an endpoint to a private address is refused as well.
	if p := node.client.Do(apitest.Request{Method: "PATCH", Path: "/v1/webhooks/" + r.Str("id"), Key: key, Body: map[string]any{"url": "https://rebind.example/x"}}); p.Status != 400 {
		t.Errorf("PATCH to a private name: %d %s", p.Status, p.Body)
	}
}

// SIGKILL while events are being delivered loses none: every accepted
// send's email.queued arrives after the restart, at least once. The
// receiver is slow, so that at the kill some deliveries are in flight and
// more are claimed and waiting for their endpoint's slot.
func TestWebhooksSurviveAKill(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		h := startHookReceiver(t)
		h.delay = 20 * time.Millisecond
		w := newWorld(t)
		node, key, restart := w.startAcmeNode(t, eng, "--webhooks-allow-private")
		createHook(t, node.client, key, h, "/queued", "email.queued")

		f := startFlood(t, node.base, node, key)
		poll.Until(t, 60*time.Second, "events flow", func() bool { return f.count() >= 300 && len(h.requests("/queued")) >= 100 })
		node.stop(syscall.SIGKILL)
		f.end()
		again := restart()
		_ = again
		poll.Until(t, 3*time.Minute, "every accepted send's email.queued arrives", func() bool {
			got := map[string]bool{}
			for _, q := range h.requests("/queued") {
				if q.Verified {
					got[fmt.Sprint(q.Data["messageId"])] = true
				}
			}
			for id := range f.accepted {
				if !got[id] {
					return false
				}
			}
			return true
		})
		t.Logf("%d sends accepted, %d webhook requests", len(f.accepted), len(h.requests("/queued")))
	})
}

// Two nodes on one PostgreSQL share the outbox: each event is delivered
// once, whichever node wrote it.
func TestTwoNodesDeliverEachWebhookOnce(t *testing.T) {
	dbURL := postgresOrSkip(t)
	h := startHookReceiver(t)
	w := newWorld(t)
	work := t.TempDir()
	args := append(w.flags(), "--database-url", dbURL, "--secret-key="+strings.Repeat("A", 43)+"=", "--webhooks-allow-private")
	key := printedKey.FindString(cli(t, work, nil, "accounts", "create", "acme", "--database-url", dbURL))
	cli(t, work, nil, "accounts", "update", "acme", "--rate", "100000", "--burst", "100000", "--database-url", dbURL)
	a := startServer(t, work+"/a", args...)
	b := startServer(t, work+"/b", args...)
	w.verifyDomain(t, a.client, key, "shop.example")
	createHook(t, a.client, key, h, "/queued", "email.queued")

	const total = 400
	ids := map[string]bool{}
	for i := range total {
		node := a
		if i%2 == 1 {
			node = b
		}
		status, id := trySend(node.client, key, int64(i))
		if status != 200 {
			t.Fatalf("send %d: %d", i, status)
		}
		ids[id] = true
	}
	poll.Until(t, 2*time.Minute, "every event arrives", func() bool { return len(h.requests("/queued")) >= total })
	seen := map[string]int{}
	for _, q := range h.requests("/queued") {
		seen[q.ID]++
		if !ids[fmt.Sprint(q.Data["messageId"])] || !q.Verified {
			t.Errorf("unexpected delivery %+v", q)
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("event %s delivered %d times", id, n)
		}
	}
	if len(seen) != total {
		t.Errorf("%d events of %d", len(seen), total)
	}
}
