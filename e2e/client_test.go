package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mailroom/mailroom/client"
	"github.com/mailroom/mailroom/poll"
)

// The Go client (module github.com/mailroom/mailroom/client) against the
// real binary over TLS, as a user's program meets it.

// newAPIClient returns a Go client of s calling with key, trusting s's
// self-signed certificate as a user would (WithHTTPClient). A recorder,
// when given, sees every attempt.
func newAPIClient(s *server, key string, rec *recorder, opts ...client.Option) *client.Client {
	var tr http.RoundTripper = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.roots()}}
	if rec != nil {
		rec.next = tr
		tr = rec
	}
	return client.New(s.base, key, append([]client.Option{client.WithHTTPClient(&http.Client{Transport: tr})}, opts...)...)
}

// recorder is a transport that remembers each attempt the client makes:
// its method, path, Idempotency-Key and the status it got. loseAnswers
// makes it drop the answers of the next n requests to a path after the
// service gave them, as a connection that breaks on the way back would.
type recorder struct {
	next http.RoundTripper

	mu       sync.Mutex
	attempts []attempt
	lose     map[string]int
}

type attempt struct {
	method, path, idempotencyKey string
	status                       int // 0 when no answer came (or it was lost)
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	a := attempt{method: req.Method, path: req.URL.Path, idempotencyKey: req.Header.Get("Idempotency-Key")}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil && r.lose[req.URL.Path] > 0 {
		r.lose[req.URL.Path]--
		resp.Body.Close()
		r.attempts = append(r.attempts, a)
		return nil, fmt.Errorf("the answer was lost: %w", syscall.ECONNRESET)
	}
	if err == nil {
		a.status = resp.StatusCode
	}
	r.attempts = append(r.attempts, a)
	return resp, err
}

func (r *recorder) loseAnswers(path string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lose == nil {
		r.lose = map[string]int{}
	}
	r.lose[path] = n
}

// to returns the attempts made to method path so far.
func (r *recorder) to(method, path string) []attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []attempt
	for _, a := range r.attempts {
		if a.method == method && a.path == path {
			out = append(out, a)
		}
	}
	return out
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts = nil
}

// countStatus counts the attempts of as answered status.
func countStatus(as []attempt, status int) int {
	n := 0
	for _, a := range as {
		if a.status == status {
			n++
		}
	}
	return n
}

// collect runs an iterator to its end, failing the test on its error.
func collect[T any](t *testing.T, seq func(func(T, error) bool)) []T {
	t.Helper()
	var out []T
	for v, err := range seq {
		if err != nil {
			t.Fatalf("iterating: %v", err)
		}
		out = append(out, v)
	}
	return out
}

// must fails the test on err and returns v.
func must[T any](t *testing.T, what string) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

// wantCode fails the test unless err is an *client.Error of status and code.
func wantCode(t *testing.T, what string, err error, status int, code string) *client.Error {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) || e.Status != status || e.Code != code {
		t.Fatalf("%s: %v; want %d %s", what, err, status, code)
	}
	if !strings.HasPrefix(e.RequestID, "req_") {
		t.Errorf("%s: the error has no request id: %+v", what, e)
	}
	return e
}

// waitStatus polls a message until its status is want.
func waitStatus(t *testing.T, c *client.Client, id string, want client.MessageStatus) *client.Message {
	t.Helper()
	var m *client.Message
	poll.Until(t, 30*time.Second, fmt.Sprintf("message %s %s", id, want), func() bool {
		var err error
		m, err = c.GetMessage(t.Context(), id)
		if err != nil {
			t.Fatalf("get %s: %v", id, err)
		}
		return m.Status == want
	})
	return m
}

// metricValue reads one series of a Prometheus text page (0 when absent).
func metricValue(page, series string) float64 {
	for line := range strings.Lines(page) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), series+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

var hexKey = regexp.MustCompile(`^[0-9a-f]{32}$`)

// Every method of the client once against serve --dev, checking what a
// user would notice: the keys' scopes, a domain verified through DNS, the
// suppression list stopping a send, a message captured with its timeline
// and signed bytes, a lost answer retried without a second message, a
// batch answered item by item, a scheduled send moved and canceled,
// events, templates with their versions, and webhooks delivered to a real
// receiver and verified there.
func TestClientEveryMethod(t *testing.T) {
	h := startHookReceiver(t)
	w := newWorld(t)
	work := t.TempDir()
	s := startServer(t, filepath.Join(work, "mailroom-data"), append([]string{"--dev"}, w.flags()...)...)
	rec := &recorder{}
	c := newAPIClient(s, s.devKey, rec)
	ctx := t.Context()

	// The service routes.
	if st := must[*client.Status](t, "Health")(c.Health(ctx)); st.Status != "ok" {
		t.Errorf("Health: %+v", st)
	}
	if st := must[*client.Status](t, "Ready")(c.Ready(ctx)); st.Status != "ok" {
		t.Errorf("Ready: %+v", st)
	}
	var doc struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(must[json.RawMessage](t, "OpenAPI")(c.OpenAPI(ctx)), &doc); err != nil ||
		!strings.HasPrefix(doc.OpenAPI, "3.1") || doc.Paths["/v1/send"] == nil {
		t.Errorf("OpenAPI: %v %s %d paths", err, doc.OpenAPI, len(doc.Paths))
	}
	if _, err := c.GetMessage(ctx, "msg_00000000000000000000000000"); err != nil {
		wantCode(t, "GetMessage of no message", err, 404, client.CodeNotFound)
	} else {
		t.Fatal("GetMessage of no message succeeded")
	}

	t.Run("keys", func(t *testing.T) {
		cur := must[*client.APIKey](t, "CurrentAPIKey")(c.CurrentAPIKey(ctx))
		if !strings.HasPrefix(s.devKey, "mailroom_"+cur.KeyID+"_") || len(cur.Scopes) != len(client.Scopes()) || cur.Status != "active" {
			t.Errorf("CurrentAPIKey: %+v", cur)
		}
		made := must[*client.APIKeyCreated](t, "CreateAPIKey")(c.CreateAPIKey(ctx, &client.APIKeyCreateRequest{Name: "deploys", Scopes: []client.Scope{client.ScopeSend}}))
		if !strings.HasPrefix(made.Key, "mailroom_"+made.KeyID+"_") || made.Name != "deploys" {
			t.Fatalf("CreateAPIKey: %+v", made)
		}
		sender := newAPIClient(s, made.Key, nil)
		if k := must[*client.APIKey](t, "CurrentAPIKey of the new key")(sender.CurrentAPIKey(ctx)); k.KeyID != made.KeyID || !slices.Equal(k.Scopes, []client.Scope{client.ScopeSend}) {
			t.Errorf("the new key says it is %+v", k)
		}
		_, err := sender.ListAPIKeys(ctx, nil)
		wantCode(t, "a send-only key listing keys", err, 403, client.CodeInsufficientScope)
		if k := must[*client.APIKey](t, "GetAPIKey")(c.GetAPIKey(ctx, made.KeyID)); k.Name != "deploys" || k.Status != "active" {
			t.Errorf("GetAPIKey: %+v", k)
		}
		page := must[*client.List[client.APIKey]](t, "ListAPIKeys")(c.ListAPIKeys(ctx, &client.ListOptions{Limit: 1}))
		if len(page.Data) != 1 || page.Data[0].KeyID != made.KeyID || page.Cursor() == "" {
			t.Errorf("ListAPIKeys limit 1: %+v", page)
		}
		var ids []string
		for _, k := range collect(t, c.AllAPIKeys(ctx, &client.ListOptions{Limit: 1})) {
			ids = append(ids, k.KeyID)
		}
		if !slices.Equal(ids, []string{made.KeyID, cur.KeyID}) {
			t.Errorf("AllAPIKeys by pages of 1: %v", ids)
		}
		if k := must[*client.APIKey](t, "RevokeAPIKey")(c.RevokeAPIKey(ctx, made.KeyID)); k.Status != "revoked" || k.RevokedAt == nil {
			t.Errorf("RevokeAPIKey: %+v", k)
		}
		_, err = sender.CurrentAPIKey(ctx)
		wantCode(t, "the revoked key", err, 401, client.CodeAPIKeyRevoked)
	})

	t.Run("domains", func(t *testing.T) {
		d := must[*client.Domain](t, "CreateDomain")(c.CreateDomain(ctx, "shop.example"))
		if d.Status != "pending" || len(d.Records) < 3 {
			t.Fatalf("CreateDomain: %+v", d)
		}
		_, err := c.CreateDomain(ctx, "shop.example")
		wantCode(t, "CreateDomain twice", err, 409, client.CodeAlreadyExists)
		for _, r := range d.Records {
			if r.Type == "MX" {
				w.dns.SetMX(r.Name, uint16(*r.Priority), r.Value)
			} else {
				w.dns.SetTXT(r.Name, r.Value)
			}
		}
		if v := must[*client.Domain](t, "VerifyDomain")(c.VerifyDomain(ctx, "shop.example")); v.Status != "verified" {
			t.Fatalf("VerifyDomain with the records published: %+v", v)
		}
		if g := must[*client.Domain](t, "GetDomain")(c.GetDomain(ctx, "shop.example")); g.Status != "verified" || g.VerifiedAt == nil {
			t.Errorf("GetDomain: %+v", g)
		}
		page := must[*client.List[client.Domain]](t, "ListDomains")(c.ListDomains(ctx, nil))
		var names []string
		for _, d := range collect(t, c.AllDomains(ctx, nil)) {
			names = append(names, d.Name)
		}
		slices.Sort(names)
		if len(page.Data) != 2 || !slices.Equal(names, []string{"mailroom.test", "shop.example"}) {
			t.Errorf("ListDomains %d, AllDomains %v", len(page.Data), names)
		}
	})

	var sent *client.SendResult
	var sentKey string
	t.Run("send and the log", func(t *testing.T) {
		rec.reset()
		sent = must[*client.SendResult](t, "Send")(c.Send(ctx, &client.SendRequest{
			From: "Shop <orders@shop.example>", To: []string{"ann@example.net"}, Cc: []string{"Bob <bob@example.net>"},
			Subject: "Your receipt", HTML: "<p>Thanks &amp; welcome</p>", Tags: map[string]string{"kind": "receipt"},
			Attachments: []client.Attachment{{Filename: "note.txt", Content: []byte("a note")}}}))
		if sent.Status != client.SendQueued || !strings.HasPrefix(sent.MessageID, "msg_") {
			t.Fatalf("Send: %+v", sent)
		}
		// Send made an idempotency key, which the log keeps.
		attempts := rec.to("POST", "/v1/send")
		if len(attempts) != 1 || !hexKey.MatchString(attempts[0].idempotencyKey) {
			t.Fatalf("Send's attempts: %+v", attempts)
		}
		sentKey = attempts[0].idempotencyKey
		m := waitStatus(t, c, sent.MessageID, client.MessageDelivered)
		if m.Subject != "Your receipt" || m.Tags["kind"] != "receipt" || len(m.Recipients) != 2 ||
			m.Recipients[1].Address != "bob@example.net" || m.Recipients[1].Status != "delivered" ||
			m.IdempotencyKey == nil || *m.IdempotencyKey != sentKey {
			t.Errorf("GetMessage: %+v", m)
		}
		var types []string
		for _, e := range m.Events {
			types = append(types, string(e.Type))
			if d, err := e.EmailData(); err != nil || d.MessageID != sent.MessageID {
				t.Errorf("event %s: %+v %v", e.Type, d, err)
			}
		}
		if !slices.Contains(types, "email.queued") || !slices.Contains(types, "email.delivered") {
			t.Errorf("timeline %v", types)
		}
		raw := string(must[[]byte](t, "GetRawMessage")(c.GetRawMessage(ctx, sent.MessageID)))
		for _, want := range []string{"DKIM-Signature:", "d=shop.example", "Subject: Your receipt", "note.txt", "\r\nCc: \"Bob\" <bob@example.net>\r\n"} {
			if !strings.Contains(raw, want) {
				t.Errorf("the raw message lacks %q:\n%.600s", want, raw)
			}
		}
		page := must[*client.List[client.Message]](t, "ListMessages")(c.ListMessages(ctx, &client.MessageListOptions{
			Tags: map[string]string{"kind": "receipt"}, To: "BOB@example.net", Since: time.Now().Add(-time.Hour)}))
		if len(page.Data) != 1 || page.Data[0].ID != sent.MessageID || page.Data[0].Events != nil || page.Cursor() != "" {
			t.Errorf("ListMessages by tag and to: %+v", page)
		}

		// The answer to a send is lost on its way back: the client sends
		// again under the same key and is answered duplicate; one message.
		rec.reset()
		rec.loseAnswers("/v1/send", 1)
		again := must[*client.SendResult](t, "Send with its answer lost")(c.Send(ctx, &client.SendRequest{
			From: "orders@shop.example", To: []string{"lost@example.net"}, Subject: "Lost", Text: "once"}))
		attempts = rec.to("POST", "/v1/send")
		if again.Status != client.SendDuplicate || len(attempts) != 2 || attempts[0].idempotencyKey != attempts[1].idempotencyKey {
			t.Errorf("Send after a lost answer: %+v, attempts %+v", again, attempts)
		}
		if l := must[*client.List[client.Message]](t, "ListMessages")(c.ListMessages(ctx, &client.MessageListOptions{To: "lost@example.net"})); len(l.Data) != 1 || l.Data[0].ID != again.MessageID {
			t.Errorf("messages to lost@example.net: %+v", l.Data)
		}

		// An error names its code and details.
		_, err := c.Send(ctx, &client.SendRequest{From: "orders@shop.example", To: []string{"ann@"}, Subject: "x", Text: "x"})
		if e := wantCode(t, "Send to a bad address", err, 400, client.CodeValidation); len(e.Details) != 1 || e.Details[0].Field != "to" {
			t.Errorf("details: %+v", e.Details)
		}
		_, err = c.Send(ctx, &client.SendRequest{From: "orders@not-mine.example", To: []string{"ann@example.net"}, Subject: "x", Text: "x"})
		wantCode(t, "Send from a domain not verified", err, 403, client.CodeDomainNotVerified)
	})

	t.Run("batch", func(t *testing.T) {
		items := []client.SendRequest{
			{From: "orders@shop.example", To: []string{"b1@example.net"}, Subject: "Batch 1", Text: "1"},
			{From: "orders@shop.example", To: []string{"not an address"}, Subject: "Batch 2", Text: "2"},
			{From: "orders@shop.example", To: []string{"b3@example.net"}, Subject: "Batch 3", Text: "3", IdempotencyKey: "batch-3"},
		}
		res := must[*client.BatchSendResult](t, "SendBatch")(c.SendBatch(ctx, items))
		if res.Accepted != 2 || res.Failed != 1 || len(res.Data) != 3 || !res.Data[0].OK() || res.Data[1].OK() ||
			res.Data[1].ErrorBody().Error != client.CodeValidation || res.Data[2].Result().Status != client.SendQueued {
			t.Fatalf("SendBatch: %+v", res)
		}
		if items[0].IdempotencyKey != "" {
			t.Error("SendBatch changed the caller's slice")
		}
		// The refused item's error is the client's error type, with the
		// service's code and details and the batch's request id.
		var itemErr *client.Error
		if err := res.Data[1].Err(); !errors.As(err, &itemErr) || !client.IsCode(err, client.CodeValidation) ||
			len(itemErr.Details) == 0 || itemErr.RequestID == "" || res.Data[0].Err() != nil {
			t.Errorf("the items' errors: %v, %v", res.Data[0].Err(), err)
		}
		if !hexKey.MatchString(res.Data[0].IdempotencyKey) || res.Data[2].IdempotencyKey != "batch-3" {
			t.Errorf("the items' keys: %q, %q", res.Data[0].IdempotencyKey, res.Data[2].IdempotencyKey)
		}
		// The same batch again: the item with its own key is a duplicate.
		again := must[*client.BatchSendResult](t, "SendBatch again")(c.SendBatch(ctx, items))
		if again.Data[2].Status != client.SendDuplicate || again.Data[2].MessageID != res.Data[2].MessageID {
			t.Errorf("the item with its own key, sent again: %+v", again.Data[2])
		}
		m := waitStatus(t, c, res.Data[0].MessageID, client.MessageDelivered)
		if m.Subject != "Batch 1" || m.IdempotencyKey == nil || !hexKey.MatchString(*m.IdempotencyKey) {
			t.Errorf("batch item 1: %+v", m)
		}
	})

	t.Run("every message, page by page", func(t *testing.T) {
		if sent == nil {
			t.Skip("the send failed")
		}
		seen := map[string]bool{}
		for _, m := range collect(t, c.AllMessages(ctx, &client.MessageListOptions{Limit: 2})) {
			if seen[m.ID] {
				t.Errorf("AllMessages yielded %s twice", m.ID)
			}
			seen[m.ID] = true
		}
		// ann, lost, batch 1 and 3, batch 1 again (a new key).
		if len(seen) != 5 || !seen[sent.MessageID] {
			t.Errorf("AllMessages by pages of 2: %d messages %v", len(seen), seen)
		}
		n := 0
		for _, err := range c.AllMessages(ctx, &client.MessageListOptions{Limit: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == 2 {
				break
			}
		}
	})

	t.Run("scheduled", func(t *testing.T) {
		at := time.Now().Add(time.Hour).Truncate(time.Second)
		res := must[*client.SendResult](t, "Send scheduled")(c.Send(ctx, &client.SendRequest{From: "orders@shop.example",
			To: []string{"later@example.net"}, Subject: "Later", Text: "Hi", ScheduledAt: &at}))
		if res.Status != client.SendScheduled {
			t.Fatalf("Send with ScheduledAt: %+v", res)
		}
		page := must[*client.List[client.Message]](t, "ListScheduled")(c.ListScheduled(ctx, nil))
		all := collect(t, c.AllScheduled(ctx, &client.ListOptions{Limit: 1}))
		if len(page.Data) != 1 || page.Data[0].ID != res.MessageID || !page.Data[0].ScheduledAt.Equal(at) || len(all) != 1 {
			t.Fatalf("ListScheduled: %+v; AllScheduled %d", page.Data, len(all))
		}
		later := at.Add(time.Hour)
		moved := must[*client.Message](t, "RescheduleMessage")(c.RescheduleMessage(ctx, res.MessageID, later))
		if moved.Status != client.MessageScheduled || !moved.ScheduledAt.Equal(later) {
			t.Errorf("RescheduleMessage: %+v", moved)
		}
		_, err := c.GetRawMessage(ctx, res.MessageID)
		wantCode(t, "the raw bytes of a scheduled message", err, 409, client.CodeInvalidState)
		canceled := must[*client.Message](t, "CancelMessage")(c.CancelMessage(ctx, res.MessageID))
		if canceled.Status != client.MessageCanceled {
			t.Errorf("CancelMessage: %+v", canceled)
		}
		_, err = c.CancelMessage(ctx, res.MessageID)
		wantCode(t, "CancelMessage twice", err, 409, client.CodeInvalidState)
		if l := must[*client.List[client.Message]](t, "ListScheduled")(c.ListScheduled(ctx, nil)); len(l.Data) != 0 {
			t.Errorf("still scheduled after the cancel: %+v", l.Data)
		}
	})

	t.Run("suppressions", func(t *testing.T) {
		sup, created, err := c.AddSuppression(ctx, "Blocked@example.net")
		if err != nil || !created || sup.Reason != "manual" || sup.Address != "blocked@example.net" {
			t.Fatalf("AddSuppression: %+v %v %v", sup, created, err)
		}
		if _, created, err := c.AddSuppression(ctx, "blocked@example.net"); err != nil || created {
			t.Errorf("AddSuppression again: created %v, %v", created, err)
		}
		if g := must[*client.Suppression](t, "GetSuppression")(c.GetSuppression(ctx, "blocked@example.net")); g.Reason != "manual" {
			t.Errorf("GetSuppression: %+v", g)
		}
		page := must[*client.List[client.Suppression]](t, "ListSuppressions")(c.ListSuppressions(ctx, nil))
		if all := collect(t, c.AllSuppressions(ctx, nil)); len(page.Data) != 1 || len(all) != 1 {
			t.Errorf("ListSuppressions %+v, AllSuppressions %+v", page.Data, all)
		}
		res := must[*client.SendResult](t, "Send to a suppressed address")(c.Send(ctx, &client.SendRequest{
			From: "orders@shop.example", To: []string{"blocked@example.net"}, Subject: "Blocked", Text: "x"}))
		waitStatus(t, c, res.MessageID, client.MessageSuppressed)
		if err := c.DeleteSuppression(ctx, "blocked@example.net"); err != nil {
			t.Fatal(err)
		}
		_, err = c.GetSuppression(ctx, "blocked@example.net")
		wantCode(t, "GetSuppression after the delete", err, 404, client.CodeNotFound)
	})

	t.Run("events", func(t *testing.T) {
		if sent == nil {
			t.Skip("the send failed")
		}
		page := must[*client.List[client.EventRecord]](t, "ListEvents")(c.ListEvents(ctx, &client.EventListOptions{MessageID: sent.MessageID}))
		var types []string
		for _, e := range page.Data {
			types = append(types, string(e.Type)+" "+e.Recipient)
		}
		slices.Sort(types)
		want := []string{"email.delivered ann@example.net", "email.delivered bob@example.net", "email.queued ann@example.net", "email.queued bob@example.net"}
		if !slices.Equal(types, want) {
			t.Errorf("ListEvents of the message: %v", types)
		}
		delivered := collect(t, c.AllEvents(ctx, &client.EventListOptions{Type: client.EventEmailDelivered, Since: time.Now().Add(-time.Hour), Limit: 2}))
		found := false
		for _, e := range delivered {
			if e.Type != client.EventEmailDelivered {
				t.Errorf("AllEvents of email.delivered yielded %s", e.Type)
			}
			if d, err := e.EmailData(); err == nil && d.MessageID == sent.MessageID && d.SMTPCode == 250 {
				found = true
			}
		}
		if !found {
			t.Errorf("AllEvents lacks the delivery of %s", sent.MessageID)
		}
	})

	t.Run("templates", func(t *testing.T) {
		tpl := must[*client.Template](t, "CreateTemplate")(c.CreateTemplate(ctx, &client.TemplateRequest{Name: "receipt",
			From: "Shop <orders@shop.example>", Subject: "Receipt {{order.id}}", HTML: "<p>Thanks, {{customer.name}}!</p>"}))
		if tpl.Version != 1 || !slices.Equal(tpl.Variables, []string{"customer.name", "order.id"}) {
			t.Fatalf("CreateTemplate: %+v", tpl)
		}
		v2 := must[*client.Template](t, "UpdateTemplate")(c.UpdateTemplate(ctx, "receipt", &client.TemplateRequest{
			From: "Shop <orders@shop.example>", Subject: "Your receipt for order {{order.id}}", HTML: "<p>Thanks, {{customer.name}}!</p>"}))
		if v2.Version != 2 || v2.ID != tpl.ID {
			t.Fatalf("UpdateTemplate: %+v", v2)
		}
		if g := must[*client.Template](t, "GetTemplate")(c.GetTemplate(ctx, tpl.ID)); g.Version != 2 || g.HTML == nil || !strings.Contains(*g.HTML, "{{customer.name}}") {
			t.Errorf("GetTemplate: %+v", g)
		}
		if l := must[*client.List[client.TemplateSummary]](t, "ListTemplates")(c.ListTemplates(ctx, nil)); len(l.Data) != 1 || l.Data[0].Version != 2 {
			t.Errorf("ListTemplates: %+v", l.Data)
		}
		if all := collect(t, c.AllTemplates(ctx, nil)); len(all) != 1 {
			t.Errorf("AllTemplates: %+v", all)
		}
		versions := must[*client.List[client.TemplateSummary]](t, "ListTemplateVersions")(c.ListTemplateVersions(ctx, "receipt", nil))
		allVersions := collect(t, c.AllTemplateVersions(ctx, "receipt", &client.ListOptions{Limit: 1}))
		if len(versions.Data) != 2 || versions.Data[0].Version != 2 || len(allVersions) != 2 || allVersions[1].Version != 1 {
			t.Errorf("versions: %+v, all %+v", versions.Data, allVersions)
		}
		if v1 := must[*client.Template](t, "GetTemplateVersion")(c.GetTemplateVersion(ctx, "receipt", 1)); v1.Subject != "Receipt {{order.id}}" {
			t.Errorf("GetTemplateVersion 1: %+v", v1)
		}
		vars := map[string]any{"customer": map[string]any{"name": "Ann & Bob"}, "order": map[string]any{"id": 1042}}
		r := must[*client.TemplateRendered](t, "RenderTemplate")(c.RenderTemplate(ctx, "receipt", vars))
		if r.Subject != "Your receipt for order 1042" || !strings.Contains(r.HTML, "Ann &amp; Bob") || !strings.Contains(r.Text, "Ann & Bob") {
			t.Errorf("RenderTemplate: %+v", r)
		}
		res := must[*client.SendResult](t, "Send with the template")(c.Send(ctx, &client.SendRequest{Template: "receipt", To: []string{"ann@example.net"}, Variables: vars}))
		m := must[*client.Message](t, "GetMessage")(c.GetMessage(ctx, res.MessageID))
		if m.Template == nil || m.Template.Name != "receipt" || m.Template.Version != 2 || m.Subject != "Your receipt for order 1042" {
			t.Errorf("the message sent with the template: %+v", m)
		}
		_, err := c.Send(ctx, &client.SendRequest{Template: "receipt", To: []string{"ann@example.net"}, Variables: map[string]any{"order": map[string]any{"id": 1}}})
		if e := wantCode(t, "Send with a variable missing", err, 400, client.CodeValidation); !strings.Contains(fmt.Sprint(e.Details), "customer.name") {
			t.Errorf("the details do not name customer.name: %+v", e.Details)
		}
		if err := c.DeleteTemplate(ctx, "receipt"); err != nil {
			t.Fatal(err)
		}
		_, err = c.GetTemplate(ctx, "receipt")
		wantCode(t, "GetTemplate after the delete", err, 404, client.CodeNotFound)
	})

	t.Run("webhooks", func(t *testing.T) {
		wh := must[*client.WebhookCreated](t, "CreateWebhook")(c.CreateWebhook(ctx, &client.WebhookCreateRequest{
			URL: h.url("/hooks"), Events: []client.EventType{client.EventEmailDelivered}, Description: "ops"}))
		if !strings.HasPrefix(wh.Secret, "whsec_") || !wh.Enabled {
			t.Fatalf("CreateWebhook: %+v", wh)
		}
		h.setSecret(t, "/hooks", wh.Secret)
		if g := must[*client.Webhook](t, "GetWebhook")(c.GetWebhook(ctx, wh.ID)); g.URL != h.url("/hooks") || g.Description != "ops" {
			t.Errorf("GetWebhook: %+v", g)
		}
		if l := must[*client.List[client.Webhook]](t, "ListWebhooks")(c.ListWebhooks(ctx, nil)); len(l.Data) != 1 || len(collect(t, c.AllWebhooks(ctx, nil))) != 1 {
			t.Errorf("ListWebhooks: %+v", l.Data)
		}
		desc := "the ops team"
		if u := must[*client.Webhook](t, "UpdateWebhook")(c.UpdateWebhook(ctx, wh.ID, &client.WebhookUpdateRequest{Description: &desc})); u.Description != desc || !slices.Equal(u.Events, wh.Events) {
			t.Errorf("UpdateWebhook: %+v", u)
		}

		// A test event reaches the receiver, signed with the secret.
		ev := must[*client.EventRecord](t, "TestWebhook")(c.TestWebhook(ctx, wh.ID))
		if d, err := ev.TestData(); ev.Type != client.EventWebhookTest || err != nil || d.WebhookID != wh.ID {
			t.Fatalf("TestWebhook: %+v %v", ev, err)
		}
		got := h.waitFor(t, "/hooks", 30*time.Second, "the test event arrives", func(q hookRequest) bool { return q.ID == ev.ID })
		if err := client.VerifyWebhook(wh.Secret, got.Header, got.Body); err != nil {
			t.Errorf("the test event does not verify: %v", err)
		}
		var attempts []client.WebhookAttempt
		poll.Until(t, 10*time.Second, "the delivery is logged", func() bool {
			attempts = must[*client.List[client.WebhookAttempt]](t, "ListWebhookDeliveries")(c.ListWebhookDeliveries(ctx, wh.ID, &client.DeliveryListOptions{EventID: ev.ID})).Data
			return len(attempts) > 0
		})
		if a := attempts[0]; a.Status != client.AttemptSucceeded || a.StatusCode == nil || *a.StatusCode != 200 || a.Attempt != 1 {
			t.Errorf("the delivery: %+v", a)
		}
		if all := collect(t, c.AllWebhookDeliveries(ctx, wh.ID, &client.DeliveryListOptions{Status: client.AttemptSucceeded})); len(all) == 0 {
			t.Error("AllWebhookDeliveries of the succeeded ones is empty")
		}

		// Rotation: the replay is signed with the new secret and the old.
		rot := must[*client.WebhookSecret](t, "RotateWebhookSecret")(c.RotateWebhookSecret(ctx, wh.ID))
		if !strings.HasPrefix(rot.Secret, "whsec_") || rot.Secret == wh.Secret || time.Until(rot.PreviousSecretExpiresAt) < 23*time.Hour {
			t.Fatalf("RotateWebhookSecret: %+v", rot)
		}
		before := len(h.requests("/hooks"))
		rp := must[*client.ReplayResult](t, "ReplayEvent")(c.ReplayEvent(ctx, ev.ID, wh.ID))
		if rp.EventID != ev.ID || !slices.Equal(rp.Endpoints, []string{wh.ID}) {
			t.Errorf("ReplayEvent: %+v", rp)
		}
		poll.Until(t, 30*time.Second, "the replay arrives", func() bool { return len(h.requests("/hooks")) > before })
		replayed := h.requests("/hooks")[before]
		if replayed.ID != ev.ID || len(strings.Fields(replayed.Signature)) != 2 {
			t.Errorf("the replay: id %s, signature %q", replayed.ID, replayed.Signature)
		}
		for _, secret := range []string{wh.Secret, rot.Secret} {
			if err := client.VerifyWebhook(secret, replayed.Header, replayed.Body); err != nil {
				t.Errorf("the replay does not verify with one of the two secrets: %v", err)
			}
		}

		if err := c.DeleteWebhook(ctx, wh.ID); err != nil {
			t.Fatal(err)
		}
		_, err := c.GetWebhook(ctx, wh.ID)
		wantCode(t, "GetWebhook after the delete", err, 404, client.CodeNotFound)
	})

	t.Run("domain deleted", func(t *testing.T) {
		if err := c.DeleteDomain(ctx, "shop.example"); err != nil {
			t.Fatal(err)
		}
		_, err := c.GetDomain(ctx, "shop.example")
		wantCode(t, "GetDomain after the delete", err, 404, client.CodeNotFound)
		_, err = c.Send(ctx, &client.SendRequest{From: "orders@shop.example", To: []string{"ann@example.net"}, Subject: "x", Text: "x"})
		wantCode(t, "Send from the deleted domain", err, 403, client.CodeDomainNotVerified)
	})
}

// A real webhook from the service verifies with client.VerifyWebhook as
// it came, and not once its body, signature, secret or age is tampered
// with; ParseEvent reads it.
func TestClientVerifiesARealWebhook(t *testing.T) {
	h := startHookReceiver(t)
	s := startServer(t, filepath.Join(t.TempDir(), "mailroom-data"), "--dev")
	c := newAPIClient(s, s.devKey, nil)
	ctx := t.Context()
	wh := must[*client.WebhookCreated](t, "CreateWebhook")(c.CreateWebhook(ctx, &client.WebhookCreateRequest{
		URL: h.url("/mail"), Events: []client.EventType{client.EventEmailDelivered}}))
	h.setSecret(t, "/mail", wh.Secret)
	res := must[*client.SendResult](t, "Send")(c.Send(ctx, &client.SendRequest{From: "orders@mailroom.test",
		To: []string{"ann@example.com"}, Subject: "Hooked", Text: "Hi", Tags: map[string]string{"order": "42"}}))
	got := h.waitFor(t, "/mail", 30*time.Second, "email.delivered arrives", func(q hookRequest) bool { return q.Type == "email.delivered" })

	if err := client.VerifyWebhook(wh.Secret, got.Header, got.Body); err != nil {
		t.Fatalf("the delivery does not verify: %v\n%v\n%s", err, got.Header, got.Body)
	}
	ev, err := client.ParseEvent(got.Body)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ev.EmailData()
	if err != nil || ev.Type != client.EventEmailDelivered || d.MessageID != res.MessageID || d.Recipient != "ann@example.com" ||
		d.Subject != "Hooked" || d.Tags["order"] != "42" || d.SMTPCode != 250 {
		t.Errorf("ParseEvent: %+v %+v %v", ev, d, err)
	}

	tamperedBody := []byte(strings.Replace(string(got.Body), res.MessageID, "msg_00000000000000000000000000", 1))
	sig := got.Header.Get("webhook-signature")
	flipped := got.Header.Clone()
	flipped.Set("webhook-signature", sig[:len(sig)-6]+strings.Map(func(r rune) rune {
		if r == 'A' {
			return 'B'
		}
		return 'A'
	}, sig[len(sig)-6:]))
	otherID := got.Header.Clone()
	otherID.Set("webhook-id", "evt_00000000000000000000000000")
	noSig := got.Header.Clone()
	noSig.Del("webhook-signature")
	other := must[*client.WebhookCreated](t, "CreateWebhook")(c.CreateWebhook(ctx, &client.WebhookCreateRequest{
		URL: h.url("/other"), Events: []client.EventType{client.EventEmailBounced}}))
	for _, tc := range []struct {
		what   string
		secret string
		header http.Header
		body   []byte
		want   error
	}{
		{"a tampered body", wh.Secret, got.Header, tamperedBody, client.ErrWebhookNoMatchingSignature},
		{"a body with a byte more", wh.Secret, got.Header, append(slices.Clone(got.Body), ' '), client.ErrWebhookNoMatchingSignature},
		{"a tampered signature", wh.Secret, flipped, got.Body, client.ErrWebhookNoMatchingSignature},
		{"another webhook-id", wh.Secret, otherID, got.Body, client.ErrWebhookNoMatchingSignature},
		{"another endpoint's secret", other.Secret, got.Header, got.Body, client.ErrWebhookNoMatchingSignature},
		{"no signature", wh.Secret, noSig, got.Body, client.ErrWebhookMissingHeader},
	} {
		if err := client.VerifyWebhook(tc.secret, tc.header, tc.body); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.what, err, tc.want)
		}
	}
	// Kept and replayed ten minutes later, it is refused as too old.
	if err := client.VerifyWebhookAt(wh.Secret, got.Header, got.Body, time.Now().Add(10*time.Minute)); !errors.Is(err, client.ErrWebhookTooOld) {
		t.Errorf("ten minutes later: %v", err)
	}
}

// A key limited to 1 request/s: the client waits out each 429 (its
// Retry-After) and every send succeeds, each once; the service answered
// 429s, as its metrics say, and so did mailroom send.
func TestClientWaitsOutARateLimit(t *testing.T) {
	work := t.TempDir()
	dataDir := filepath.Join(work, "mailroom-data")
	s := startServer(t, dataDir, "--dev")
	ctx := t.Context()
	updated := time.Now()
	cli(t, work, nil, "accounts", "update", "dev", "--rate", "1", "--burst", "1", "--data-dir", dataDir)

	// Nodes apply an update within 10 s: until a 429 comes back to a
	// client that does not retry.
	probe := newAPIClient(s, s.devKey, nil, client.WithMaxRetries(0))
	var limited *client.Error
	poll.Until(t, 15*time.Second, "a 429 once the node applies 1 request/s", func() bool {
		_, err := probe.CurrentAPIKey(ctx)
		return errors.As(err, &limited) && limited.Code == client.CodeRateLimited
	})
	t.Logf("limited %v after the update", time.Since(updated).Round(time.Millisecond))
	if limited.Status != 429 || limited.RetryAfter < time.Second {
		t.Fatalf("the 429: %+v", limited)
	}

	rec := &recorder{}
	c := newAPIClient(s, s.devKey, rec)
	before := metricValue(s.metrics(t), `mailroom_http_requests_total{method="POST",route="/v1/send",status="429"}`)
	start := time.Now()
	const n = 4
	var ids []string
	for i := range n {
		res, err := c.Send(ctx, &client.SendRequest{From: "orders@mailroom.test", To: []string{fmt.Sprintf("r%d@example.com", i)},
			Subject: "Limited", Text: "Hi"})
		if err != nil {
			t.Fatalf("send %d of %d under 1 request/s: %v (attempts %+v)", i+1, n, err, rec.to("POST", "/v1/send"))
		}
		ids = append(ids, res.MessageID)
	}
	elapsed := time.Since(start)
	attempts := rec.to("POST", "/v1/send")
	waited := countStatus(attempts, 429)
	// Each send comes within moments of the last success, when the bucket
	// is empty: it is refused once, and passes after Retry-After (1 s). A
	// stalled machine may spare one that wait, never all of them.
	if waited == 0 || countStatus(attempts, 200) != n || len(attempts) != waited+n {
		t.Errorf("%d sends in a row at 1 request/s: %d attempts, %d answered 429 and were retried, %d 200",
			n, len(attempts), waited, countStatus(attempts, 200))
	}
	if got := metricValue(s.metrics(t), `mailroom_http_requests_total{method="POST",route="/v1/send",status="429"}`) - before; int(got) != waited {
		t.Errorf("the service counted %v 429s on /v1/send, the client saw %d", got, waited)
	}
	// Each send once, under the one key of its attempts.
	keys := map[string]bool{}
	for _, a := range attempts {
		keys[a.idempotencyKey] = true
	}
	if len(keys) != n {
		t.Errorf("%d sends made %d idempotency keys", n, len(keys))
	}
	var logged []string
	for _, m := range collect(t, c.AllMessages(ctx, &client.MessageListOptions{From: "orders@mailroom.test"})) {
		logged = append(logged, m.ID)
	}
	slices.Reverse(logged) // newest first
	if !slices.Equal(logged, ids) {
		t.Errorf("the log holds %v after the sends of %v", logged, ids)
	}
	t.Logf("%d sends in %v, %d 429s waited out", n, elapsed.Round(time.Millisecond), waited)

	// mailroom send waits as well: two in a row both succeed.
	env := []string{"MAILROOM_API_KEY=" + s.devKey, "MAILROOM_URL=" + s.base}
	for i := range 2 {
		out := cli(t, work, env, "send", "--from", "orders@mailroom.test", "--to", "cli@example.com", "--subject", fmt.Sprint("CLI ", i), "--text", "Hi")
		if !strings.HasPrefix(out, "msg_") {
			t.Errorf("mailroom send under the limit printed %q", out)
		}
	}
}

// PostgreSQL cut off while a send is under way: the service answers 503,
// the client tries again under the same idempotency key until storage is
// back, and the message is stored and delivered exactly once.
func TestClientRetriesThroughAStorageOutage(t *testing.T) {
	dbURL := postgresOrSkip(t)
	w := newWorld(t)
	work := t.TempDir()
	node := startServer(t, filepath.Join(work, "a"), append(w.flags(), "--database-url", dbURL)...)
	key := printedKey.FindString(cli(t, work, nil, "accounts", "create", "acme", "--database-url", dbURL))
	w.verifyDomain(t, node.client, key, "shop.example")
	cut := cutDatabase(t, dbURL)

	rec := &recorder{}
	// More retries than the default 4 (a second apart, the Retry-After of
	// a 503): the outage lasts as long as this test makes it.
	c := newAPIClient(node, key, rec, client.WithMaxRetries(60))
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()

	cut(false)
	type outcome struct {
		res *client.SendResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := c.Send(ctx, &client.SendRequest{From: "orders@shop.example", To: []string{"outage@example.net"},
			Subject: "Sent through an outage", Text: "Once"})
		done <- outcome{res, err}
	}()
	poll.Until(t, 30*time.Second, "the send answered 503 twice with storage cut off", func() bool {
		return countStatus(rec.to("POST", "/v1/send"), 503) >= 2
	})
	select {
	case o := <-done:
		t.Fatalf("the send ended during the outage: %+v %v", o.res, o.err)
	default:
	}
	cut(true)
	var o outcome
	select {
	case o = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the send did not end within 60 s of storage's return: attempts %+v", rec.to("POST", "/v1/send"))
	}
	attempts := rec.to("POST", "/v1/send")
	if o.err != nil {
		t.Fatalf("the send failed after storage came back: %v\nattempts %+v\n%s", o.err, attempts, lastLines(node.Stderr(), 20))
	}
	key0 := attempts[0].idempotencyKey
	for _, a := range attempts {
		if a.idempotencyKey != key0 || !hexKey.MatchString(key0) {
			t.Fatalf("the attempts do not share one idempotency key: %+v", attempts)
		}
	}
	if last := attempts[len(attempts)-1]; last.status != 200 || countStatus(attempts, 503) < 2 {
		t.Fatalf("attempts %+v", attempts)
	}
	t.Logf("%d attempts (%d answered 503) under key %s: %s", len(attempts), countStatus(attempts, 503), key0, o.res.Status)

	// Exactly once: one message in the log, under that key, delivered once.
	m := waitStatus(t, c, o.res.MessageID, client.MessageDelivered)
	if m.IdempotencyKey == nil || *m.IdempotencyKey != key0 {
		t.Errorf("the message's idempotency key is %v, the attempts' %s", m.IdempotencyKey, key0)
	}
	if all := collect(t, c.AllMessages(ctx, &client.MessageListOptions{To: "outage@example.net"})); len(all) != 1 {
		t.Errorf("%d messages to outage@example.net in the log", len(all))
	}
	w.waitAllArrived(t, map[string]bool{o.res.MessageID: true}, 30*time.Second, "of the send")
	if n := w.receivedByMessageID()[messageIDHeader(o.res.MessageID)]; n != 1 {
		t.Errorf("the message arrived %d times", n)
	}
}

// cutDatabase returns a function that cuts the database of dbURL off
// from every client (and ends their connections) or lets them back, as
// TestPostgresCutOff does; the cleanup lets them back.
func cutDatabase(t *testing.T, dbURL string) func(allow bool) {
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	admin := adminDB(t, "")
	cut := func(allow bool) {
		t.Helper()
		if _, err := admin.Exec(fmt.Sprintf(`ALTER DATABASE %s ALLOW_CONNECTIONS %t`, name, allow)); err != nil {
			t.Fatal(err)
		}
		if !allow {
			if _, err := admin.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, name); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(func() { cut(true) })
	return cut
}
