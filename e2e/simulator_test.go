package e2e

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-msgauth/dkim"
	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/smtp/smtptest"
	"github.com/mailroom/mailroom/storetest"
)

// The test addresses at simulator.invalid (docs/api.md "Test addresses"):
// an application tests its handling of each outcome with them, and nothing
// of it ever leaves the node.

// simEvents are the event types a test address may produce.
var simEvents = []string{"email.delivered", "email.bounced", "email.deferred", "email.complained", "email.suppressed", "email.failed"}

// simRecipient is what the log and the webhooks say of one test address.
type simRecipient struct {
	status   string   // the recipient's status in the log
	events   []string // the message's timeline, oldest first (email.* of the recipient)
	hooks    []hookRequest
	response string // the recipient's smtpResponse
}

// sendOne sends one message to addr through /v1/send and returns its id.
func sendOne(t *testing.T, c *apitest.Client, key, addr string) string {
	t.Helper()
	r := c.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: key, Body: map[string]any{
		"from": "orders@shop.example", "to": addr, "subject": "Test of " + addr, "text": "Testing our bounce handling"}})
	if r.Status != 200 {
		t.Fatalf("send to %s: %d %s", addr, r.Status, r.Body)
	}
	return r.Str("messageId")
}

// simOutcome waits until message id's recipient has a final status and
// the webhooks of its events have arrived at path, and returns them.
func simOutcome(t *testing.T, c *apitest.Client, key string, h *hookReceiver, path, id string, final string, wantHooks int) simRecipient {
	t.Helper()
	var got simRecipient
	poll.Until(t, 60*time.Second, fmt.Sprintf("message %s reaches %s with %d webhooks", id, final, wantHooks), func() bool {
		msg := c.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: key}).Map()
		rcpts, _ := msg["recipients"].([]any)
		if len(rcpts) != 1 {
			return false
		}
		r := rcpts[0].(map[string]any)
		got.status, _ = r["status"].(string)
		got.response, _ = r["smtpResponse"].(string)
		got.events = nil
		events, _ := msg["events"].([]any)
		for _, e := range events {
			if typ, _ := e.(map[string]any)["type"].(string); slices.Contains(simEvents, typ) {
				got.events = append(got.events, typ)
			}
		}
		got.hooks = nil
		for _, q := range h.requests(path) {
			if q.Data["messageId"] == id {
				got.hooks = append(got.hooks, q)
			}
		}
		return got.status == final && len(got.hooks) >= wantHooks
	})
	return got
}

// hookTypes are the verified webhook types of rs, sorted: webhook
// deliveries run side by side and may arrive in any order, as a real
// outcome's do (their data says when each event happened).
func hookTypes(t *testing.T, rs []hookRequest, addr string) []string {
	t.Helper()
	var out []string
	for _, q := range rs {
		if !q.Verified {
			t.Errorf("%s: webhook %s did not verify", addr, q.Type)
		}
		if q.Data["recipient"] != addr {
			t.Errorf("%s: webhook %s names recipient %v", addr, q.Type, q.Data["recipient"])
		}
		out = append(out, q.Type)
	}
	slices.Sort(out)
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// noSimulatorTraffic fails the test if the world's DNS was asked about
// simulator.invalid or its mail server got any recipient there.
func noSimulatorTraffic(t *testing.T, w *world, sinks ...*smtptest.Server) {
	t.Helper()
	for _, q := range w.dns.Queried() {
		if strings.Contains(q, "simulator.invalid") {
			t.Errorf("the node looked up %s in DNS", q)
		}
	}
	for _, s := range append(sinks, w.mx) {
		for _, m := range s.Messages() {
			for _, r := range m.Rcpts {
				if strings.Contains(strings.ToLower(r), "simulator.invalid") {
					t.Errorf("a test address left the node: %s got mail for %s", s.Addr(), r)
				}
			}
		}
	}
}

// noSuppressions fails the test unless the account's suppression list is
// empty: test addresses add nothing to it.
func noSuppressions(t *testing.T, c *apitest.Client, key string) {
	t.Helper()
	r := c.Do(apitest.Request{Method: "GET", Path: "/v1/suppressions", Key: key})
	if r.Status != 200 {
		t.Fatalf("suppressions: %d %s", r.Status, r.Body)
	}
	if data, _ := r.Map()["data"].([]any); len(data) != 0 {
		t.Errorf("test addresses left suppression entries: %s", r.Body)
	}
}

// Each test address, with a +label, in MX mode on both engines: its status,
// timeline and signed webhooks are those of the real outcome, a deferral
// is retried after --retry-min-delay, no entry is added to the
// suppression list, and neither the DNS server nor the mail server sees
// anything of simulator.invalid, while a real recipient's mail arrives.
func TestSimulatorAddressesInMXMode(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		h := startHookReceiver(t)
		w := newWorld(t) // --retry-min-delay 200ms
		node, key, _ := w.startAcmeNode(t, eng, "--webhooks-allow-private")
		c := node.client
		createHook(t, c, key, h, "/sim", simEvents...)
		// Checked however the test ends, so that a lookup or a
		// connection is reported even when an outcome never came.
		t.Cleanup(func() { noSimulatorTraffic(t, w) })

		cases := []struct {
			addr, final string
			events      []string
			response    string
		}{
			{"delivered+signup@simulator.invalid", "delivered", []string{"email.delivered"}, "250 2.0.0"},
			{"bounced+signup@simulator.invalid", "bounced", []string{"email.bounced"}, "550 5.1.1"},
			{"complained+signup@simulator.invalid", "complained", []string{"email.delivered", "email.complained"}, "250 2.0.0"},
			{"deferred+signup@simulator.invalid", "delivered", []string{"email.deferred", "email.delivered"}, "250 2.0.0"},
			{"suppressed+signup@simulator.invalid", "suppressed", []string{"email.suppressed"}, ""},
			{"Delivered@simulator.invalid", "delivered", []string{"email.delivered"}, "250 2.0.0"},
			{"nobody@simulator.invalid", "bounced", []string{"email.bounced"}, "550 5.1.1"},
		}
		ids := map[string]string{}
		for _, cs := range cases {
			ids[cs.addr] = sendOne(t, c, key, cs.addr)
		}
		control := sendOne(t, c, key, "ann@example.net")

		for _, cs := range cases {
			got := simOutcome(t, c, key, h, "/sim", ids[cs.addr], cs.final, len(cs.events))
			if !slices.Equal(got.events, cs.events) {
				t.Errorf("%s: timeline %v, want %v", cs.addr, got.events, cs.events)
			}
			if types := hookTypes(t, got.hooks, cs.addr); !slices.Equal(types, sorted(cs.events)) {
				t.Errorf("%s: webhooks %v, want %v", cs.addr, types, cs.events)
			}
			if !strings.HasPrefix(got.response, cs.response) {
				t.Errorf("%s: smtpResponse %q, want %q…", cs.addr, got.response, cs.response)
			}
			for _, q := range got.hooks {
				if q.Type == "email.bounced" && (q.Data["bounceType"] != "hard" || q.Data["smtpCode"] != float64(550)) {
					t.Errorf("%s: email.bounced data %v, want a hard 550", cs.addr, q.Data)
				}
				if (q.Type == "email.delivered" || q.Type == "email.bounced") && q.Data["mx"] != "simulator.invalid" {
					t.Errorf("%s: %s names mx %v, want simulator.invalid", cs.addr, q.Type, q.Data["mx"])
				}
				if q.Type == "email.complained" && q.Data["async"] != true {
					t.Errorf("%s: email.complained data %v, want async", cs.addr, q.Data)
				}
			}
		}

		// The deferral was retried no sooner than --retry-min-delay.
		msg := c.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + ids["deferred+signup@simulator.invalid"], Key: key}).Map()
		var deferredAt, deliveredAt time.Time
		for _, e := range msg["events"].([]any) {
			e := e.(map[string]any)
			at, _ := time.Parse(time.RFC3339Nano, e["createdAt"].(string))
			switch e["type"] {
			case "email.deferred":
				deferredAt = at
			case "email.delivered":
				deliveredAt = at
			}
		}
		if gap := deliveredAt.Sub(deferredAt); gap < 200*time.Millisecond {
			t.Errorf("deferred@ was delivered %v after its deferral, before --retry-min-delay (200ms)", gap)
		}

		// The real recipient's mail arrived: the node does deliver.
		got := w.mx.WaitMessages(t, 1, 30*time.Second)
		if len(got) != 1 || !slices.Equal(got[0].Rcpts, []string{"ann@example.net"}) {
			t.Errorf("the mail server got %d messages: %+v", len(got), got)
		}
		simOutcome(t, c, key, h, "/sim", control, "delivered", 1)
		noSuppressions(t, c, key)
	})
}

// In relay mode, test addresses are taken on every way in (/v1/send,
// /v1/send/batch, Resend's POST /emails, SMTP submission) and settled by
// the node: the relay sees only the real recipient's message.
func TestSimulatorAddressesInRelayMode(t *testing.T) {
	h := startHookReceiver(t)
	w := newWorld(t)
	relay := smtptest.Start(t)
	node, key, _ := w.startAcmeNode(t, storetest.SQLite, "--webhooks-allow-private", "--delivery", "relay",
		"--relay-url", fmt.Sprintf("smtp://127.0.0.1:%d", relay.Port()),
		"--submission-listen", "127.0.0.1:0", "--submissions-listen", "127.0.0.1:0")
	c := node.client
	createHook(t, c, key, h, "/sim", simEvents...)
	t.Cleanup(func() { noSimulatorTraffic(t, w, relay) })

	ids := map[string]string{} // by recipient
	ids["delivered+v1@simulator.invalid"] = sendOne(t, c, key, "delivered+v1@simulator.invalid")

	r := c.Do(apitest.Request{Method: "POST", Path: "/v1/send/batch", Key: key, Body: map[string]any{"messages": []map[string]any{
		{"from": "orders@shop.example", "to": "bounced+batch@simulator.invalid", "subject": "Batch", "text": "Hi"},
		{"from": "orders@shop.example", "to": "ann@example.net", "subject": "Batch", "text": "Hi"},
	}}})
	if r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	data := r.Map()["data"].([]any)
	ids["bounced+batch@simulator.invalid"] = data[0].(map[string]any)["messageId"].(string)

	r = c.Do(apitest.Request{Method: "POST", Path: "/emails", Key: key, Body: map[string]any{
		"from": "orders@shop.example", "to": "suppressed+resend@simulator.invalid", "subject": "Resend", "text": "Hi"}})
	if r.Status != 200 {
		t.Fatalf("POST /emails: %d %s", r.Status, r.Body)
	}
	ids["suppressed+resend@simulator.invalid"] = r.Str("id")

	starttls, _ := node.submissionAddrs(t)
	sc, err := gosmtp.DialStartTLS(starttls, &tls.Config{RootCAs: node.roots(), ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	text, err := submit(sc, key, "orders@shop.example", []string{"complained+smtp@simulator.invalid"},
		"From: orders@shop.example\nTo: complained+smtp@simulator.invalid\nSubject: SMTP\n\nHi\n")
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	ids["complained+smtp@simulator.invalid"] = strings.TrimPrefix(strings.TrimPrefix(text, "2.0.0 "), "queued as ")

	for addr, want := range map[string][]string{
		"delivered+v1@simulator.invalid":      {"email.delivered"},
		"bounced+batch@simulator.invalid":     {"email.bounced"},
		"suppressed+resend@simulator.invalid": {"email.suppressed"},
		"complained+smtp@simulator.invalid":   {"email.delivered", "email.complained"},
	} {
		final := strings.TrimPrefix(want[len(want)-1], "email.")
		got := simOutcome(t, c, key, h, "/sim", ids[addr], final, len(want))
		if !slices.Equal(got.events, want) {
			t.Errorf("%s: timeline %v, want %v", addr, got.events, want)
		}
		if types := hookTypes(t, got.hooks, addr); !slices.Equal(types, sorted(want)) {
			t.Errorf("%s: webhooks %v, want %v", addr, types, want)
		}
	}

	got := relay.WaitMessages(t, 1, 30*time.Second)
	if len(got) != 1 || !slices.Equal(got[0].Rcpts, []string{"ann@example.net"}) {
		t.Errorf("the relay got %+v, want ann's message alone", got)
	}
	noSuppressions(t, c, key)
}

// In --dev, where mail is captured rather than sent, test addresses are
// settled as in the other modes; their messages are signed like any (the
// log's raw bytes), and the delivery metrics count their outcomes as real
// ones.
func TestSimulatorAddressesInDevMode(t *testing.T) {
	s := startServer(t, filepath.Join(t.TempDir(), "mailroom-data"), "--dev")
	ids := map[string]string{}
	for _, addr := range []string{"bounced+dev@simulator.invalid", "complained+dev@simulator.invalid", "ann@example.com"} {
		r := s.client.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: s.devKey, Body: map[string]any{
			"from": "orders@mailroom.test", "to": addr, "subject": "Dev", "text": "Hi"}})
		if r.Status != 200 {
			t.Fatalf("send to %s: %d %s", addr, r.Status, r.Body)
		}
		ids[addr] = r.Str("messageId")
	}
	for addr, want := range map[string]string{
		"bounced+dev@simulator.invalid": "bounced", "complained+dev@simulator.invalid": "complained", "ann@example.com": "delivered",
	} {
		poll.Until(t, 30*time.Second, addr+" is "+want, func() bool {
			m := s.client.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + ids[addr], Key: s.devKey}).Map()
			rcpts, _ := m["recipients"].([]any)
			return len(rcpts) == 1 && rcpts[0].(map[string]any)["status"] == want
		})
	}
	// A test address's message is composed and signed like any: the log
	// shows its signed bytes, whose signature verifies against the
	// sandbox domain's published key, as ann's does.
	dom := s.client.Do(apitest.Request{Method: "GET", Path: "/v1/domains/mailroom.test", Key: s.devKey})
	var d struct {
		Records []mailroom.DNSRecord `json:"records"`
	}
	if err := json.Unmarshal(dom.Body, &d); err != nil {
		t.Fatalf("domain: %v %s", err, dom.Body)
	}
	lookup := func(name string) ([]string, error) {
		for _, rec := range d.Records {
			if rec.Type == "TXT" && strings.EqualFold(strings.TrimSuffix(rec.Name, "."), strings.TrimSuffix(name, ".")) {
				return []string{rec.Value}, nil
			}
		}
		return nil, fmt.Errorf("no TXT record at %s", name)
	}
	for _, addr := range []string{"ann@example.com", "bounced+dev@simulator.invalid"} {
		raw := s.client.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + ids[addr] + "/raw", Key: s.devKey})
		if raw.Status != 200 || !strings.Contains(string(raw.Body), addr) {
			t.Fatalf("the message to %s: %d %.80s", addr, raw.Status, raw.Body)
		}
		vs, err := dkim.VerifyWithOptions(bytes.NewReader(raw.Body), &dkim.VerifyOptions{LookupTXT: lookup})
		if err != nil || len(vs) != 1 || vs[0].Err != nil || vs[0].Domain != "mailroom.test" {
			t.Errorf("the signature of the message to %s: %v %+v", addr, err, vs)
		}
	}
	if m := s.metrics(t); !strings.Contains(m, `mailroom_delivery_attempts_total{outcome="delivered"} 2`) ||
		!strings.Contains(m, `mailroom_delivery_attempts_total{outcome="bounced"} 1`) {
		t.Errorf("delivery metrics:\n%s", grepLines(m, "mailroom_delivery_attempts_total"))
	}
	noSuppressions(t, s.client, s.devKey)
}
