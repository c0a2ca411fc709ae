package http_test

import (
	"bytes"
	"context"
	"mime"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/storetest"
)

// The received-mail routes (docs/api.md "Receiving mail") as an
// application meets them, on both engines: every answer checked against
// the OpenAPI document by apitest.

// received stores a message for acct as the inbound MX would: to an
// envelope recipient, from a header From, at a time, with attachments.
func (e *env) received(t *testing.T, acct *mailroom.Account, to, from string, at time.Time, atts ...mailroom.ReceivedAttachment) *mailroom.ReceivedMessage {
	t.Helper()
	m, _ := storetest.NewReceived(t, acct, to, at)
	m.From = from
	if atts != nil {
		m.Attachments = atts
	}
	ev, err := mailroom.NewEvent(acct.ID, mailroom.EventEmailReceived, mailroom.ReceivedEventData{ReceivedID: m.ID}, at)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.SaveReceived(context.Background(), []*mailroom.ReceivedMessage{m}, []*mailroom.Event{ev}); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestReceivedReadOne(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		key := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeReceive})
		page := []byte("<html><body><script>alert(document.domain)</script>hi</body></html>")
		pdf := []byte("%PDF-1.7\n\x00\xff binary \r\n")
		m := e.received(t, e.acct, "Support+T-42@in.example.com", "Ann <ann@sender.test>", time.Now().UTC().Truncate(time.Second),
			mailroom.ReceivedAttachment{ID: "att_1", Filename: "Résumé «2026».pdf", ContentType: "application/pdf", Size: int64(len(pdf)), Content: pdf},
			mailroom.ReceivedAttachment{ID: "att_2", Filename: "invoice.html", ContentType: `text/html; charset="utf-8"`, Size: int64(len(page)), Content: page, ContentID: "logo@x"})

		r := e.Do(apitest.Request{Method: "GET", Path: "/v1/received/" + m.ID, Key: key})
		if r.Status != 200 {
			t.Fatalf("GET one: %d %s", r.Status, r.Body)
		}
		got := apitest.Decode[api.ReceivedMessage](r)
		if got.ID != m.ID || got.From != "Ann <ann@sender.test>" || got.Subject != "hi" || got.MailFrom != "bounce@sender.test" ||
			strings.Join(got.Recipients, ",") != "Support+T-42@in.example.com" || strings.Join(got.Cc, ",") != "cc@example.org" ||
			got.RemoteIP != "192.0.2.1" || got.Helo != "mail.sender.test" || got.Size != m.Size || !got.ReceivedAt.Equal(m.ReceivedAt) {
			t.Errorf("message %+v", got)
		}
		if got.Text == nil || *got.Text != "hello\n" || got.HTML == nil || *got.HTML != "<p>hello</p>" || got.ParseProblem != nil {
			t.Errorf("bodies: text %v html %v problem %v", got.Text, got.HTML, got.ParseProblem)
		}
		if len(got.Headers) != 2 || got.Headers[0] != (api.ReceivedHeader{Name: "From", Value: "Ann <ann@sender.test>"}) {
			t.Errorf("headers %+v", got.Headers)
		}
		a := got.Authentication
		if a.SPF != api.AuthPass || a.DKIM != api.AuthPass || a.DMARC != api.AuthPass ||
			len(a.DKIMSignatures) != 1 || a.DKIMSignatures[0] != (api.DKIMSignatureResult{Domain: "sender.test", Selector: "s1", Result: api.AuthPass}) {
			t.Errorf("authentication %+v", a)
		}
		if len(got.Attachments) != 2 || got.Attachments[0].ID != "att_1" || got.Attachments[0].Size != int64(len(pdf)) ||
			got.Attachments[0].ContentID != nil || got.Attachments[1].ContentID == nil || *got.Attachments[1].ContentID != "logo@x" {
			t.Errorf("attachments %+v", got.Attachments)
		}

		// The raw: the stored bytes, as message/rfc822.
		r = e.Do(apitest.Request{Method: "GET", Path: "/v1/received/" + m.ID + "/raw", Key: key})
		if r.Status != 200 || r.Header.Get("Content-Type") != "message/rfc822" || !bytes.Equal(r.Body, m.Raw) {
			t.Errorf("raw: %d %q %q", r.Status, r.Header.Get("Content-Type"), r.Body)
		}

		// Each attachment downloads byte for byte, under its own name and
		// type, and never as a page.
		for _, c := range []struct {
			id, filename, contentType string
			content                   []byte
		}{
			{"att_1", "Résumé «2026».pdf", "application/pdf", pdf},
			{"att_2", "invoice.html", "text/html; charset=utf-8", page},
		} {
			r = e.Do(apitest.Request{Method: "GET", Path: "/v1/received/" + m.ID + "/attachments/" + c.id, Key: key})
			if r.Status != 200 || !bytes.Equal(r.Body, c.content) {
				t.Fatalf("%s: %d %q", c.id, r.Status, r.Body)
			}
			if ct := r.Header.Get("Content-Type"); ct != c.contentType {
				t.Errorf("%s: Content-Type %q, want %q", c.id, ct, c.contentType)
			}
			disp, params, err := mime.ParseMediaType(r.Header.Get("Content-Disposition"))
			if err != nil || disp != "attachment" || params["filename"] != c.filename {
				t.Errorf("%s: Content-Disposition %q: %s %q %v", c.id, r.Header.Get("Content-Disposition"), disp, params["filename"], err)
			}
			if r.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s: X-Content-Type-Options %q", c.id, r.Header.Get("X-Content-Type-Options"))
			}
			if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "sandbox") || !strings.Contains(csp, "default-src 'none'") {
				t.Errorf("%s: Content-Security-Policy %q, want a sandbox that loads nothing", c.id, csp)
			}
		}

		// What is not this account's, or not there, is 404 alike.
		other := storetest.NewAccount(t, e.store, "globex")
		theirs := e.received(t, other, "x@in.globex.test", "b@sender.test", time.Now().UTC())
		for _, path := range []string{
			"/v1/received/" + theirs.ID, "/v1/received/" + theirs.ID + "/raw", "/v1/received/" + theirs.ID + "/attachments/att_1",
			"/v1/received/" + m.ID + "/attachments/att_9", "/v1/received/" + m.ID + "/attachments/nope",
			"/v1/received/msg_01jabcdefghjkmnpqrstvwxyz0", "/v1/received/rcv_nothing",
			"/v1/received/" + mailroom.NewID(mailroom.PrefixReceived, time.Now()),
		} {
			wantError(t, e.Do(apitest.Request{Method: "GET", Path: path, Key: key}), 404, mailroom.ECodeNotFound)
		}
	})
}

// A key without the receive scope reads no received mail, and a key with
// receive alone reads nothing else.
func TestReceivedScope(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	m := e.received(t, e.acct, "a@in.example.com", "b@sender.test", time.Now().UTC())
	others := mailroom.Scopes{mailroom.ScopeSend, mailroom.ScopeDomains, mailroom.ScopeTemplates, mailroom.ScopeWebhooks, mailroom.ScopeKeys}
	without := e.newKey(t, e.acct, others)
	for _, path := range []string{"/v1/received", "/v1/received/" + m.ID, "/v1/received/" + m.ID + "/raw", "/v1/received/" + m.ID + "/attachments/att_1"} {
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: path, Key: without}), 403, mailroom.ECodeInsufficientScope)
	}
	only := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeReceive})
	wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/messages", Key: only}), 403, mailroom.ECodeInsufficientScope)
	if r := e.Do(apitest.Request{Method: "GET", Path: "/v1/received", Key: only}); r.Status != 200 {
		t.Fatalf("receive key: %d %s", r.Status, r.Body)
	}
	// A key may be given the scope.
	r := e.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Key: e.admin, Body: map[string]any{"name": "inbox", "scopes": []string{"receive"}}})
	if r.Status != 201 || !strings.Contains(string(r.Body), `"scopes":["receive"]`) {
		t.Fatalf("create a receive key: %d %s", r.Status, r.Body)
	}
}

func TestReceivedList(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		key := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeReceive})
		base := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
		var ids []string // oldest first
		for i := range 5 {
			to := "support@in.example.com"
			if i%2 == 1 {
				to = "sales+eu@in.example.com"
			}
			from := "Ann <ann@sender.test>"
			if i == 4 {
				from = "bob@other.test"
			}
			ids = append(ids, e.received(t, e.acct, to, from, base.Add(time.Duration(i)*time.Minute)).ID)
		}
		e.received(t, storetest.NewAccount(t, e.store, "globex"), "support@in.example.com", "ann@sender.test", base)

		list := func(query string) []string {
			t.Helper()
			var out []string
			cursor := ""
			for range 10 {
				q := query + "&limit=2"
				if cursor != "" {
					q += "&cursor=" + url.QueryEscape(cursor)
				}
				r := e.Do(apitest.Request{Method: "GET", Path: "/v1/received?" + q, Key: key})
				if r.Status != 200 {
					t.Fatalf("%s: %d %s", q, r.Status, r.Body)
				}
				page := apitest.Decode[api.List[api.ReceivedSummary]](r)
				for _, m := range page.Data {
					out = append(out, m.ID)
					if len(m.Attachments) != 1 || m.Authentication.SPF != api.AuthPass {
						t.Errorf("summary %+v", m)
					}
				}
				if page.NextCursor == nil {
					return out
				}
				cursor = *page.NextCursor
			}
			t.Fatalf("%s: more than 10 pages", query)
			return nil
		}
		want := func(idx ...int) string {
			var out []string
			for _, i := range idx {
				out = append(out, ids[i])
			}
			return strings.Join(out, ",")
		}
		for _, c := range []struct {
			query string
			want  string
		}{
			{"", want(4, 3, 2, 1, 0)},
			{"to=SALES%2Beu@in.example.com", want(3, 1)},
			{"to=support@in.example.com", want(4, 2, 0)},
			{"from=ann@sender.test", want(3, 2, 1, 0)},
			{"from=Bob+%3Cbob@other.test%3E", want(4)},
			{"since=" + url.QueryEscape(base.Add(2*time.Minute).Format(time.RFC3339)), want(4, 3, 2)},
			{"until=" + url.QueryEscape(base.Add(2*time.Minute).Format(time.RFC3339)), want(1, 0)},
			{"to=support@in.example.com&since=" + url.QueryEscape(base.Add(time.Minute).Format(time.RFC3339)), want(4, 2)},
			{"to=nobody@in.example.com", ""},
		} {
			if got := strings.Join(list(c.query), ","); got != c.want {
				t.Errorf("?%s: %s, want %s", c.query, got, c.want)
			}
		}

		// A cursor belongs to its filters.
		r := e.Do(apitest.Request{Method: "GET", Path: "/v1/received?limit=1&to=support@in.example.com", Key: key})
		next := apitest.Decode[api.List[api.ReceivedSummary]](r).NextCursor
		if next == nil {
			t.Fatal("no cursor")
		}
		r = e.Do(apitest.Request{Method: "GET", Path: "/v1/received?limit=1&to=sales@in.example.com&cursor=" + url.QueryEscape(*next), Key: key})
		wantError(t, r, 400, mailroom.ECodeValidation)
		if !hasField(r, "cursor") {
			t.Errorf("another filter's cursor: %s", r.Body)
		}

		// Bad filters are named.
		for query, field := range map[string]string{
			"to=nobody":        "to",
			"from=%40":         "from",
			"since=yesterday":  "since",
			"until=2026-11-30": "until",
			"since=2026-11-30T00:00:00Z&until=2026-11-29T00:00:00Z": "until",
			"to=a@in.example.com&to=b@in.example.com":               "to",
			"limit=0": "limit",
		} {
			r := e.Do(apitest.Request{Method: "GET", Path: "/v1/received?" + query, Key: key})
			wantError(t, r, 400, mailroom.ECodeValidation)
			if !hasField(r, field) {
				t.Errorf("?%s: %s, want an error on %s", query, r.Body, field)
			}
		}
	})
}
