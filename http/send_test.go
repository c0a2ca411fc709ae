package http_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-msgauth/dkim"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
)

// verifiedDomain adds name, publishes its records and verifies it.
func (e *env) verifiedDomain(t testing.TB, name string) api.Domain {
	t.Helper()
	d := decodeDomain(e.domainCall(t, "POST", "/v1/domains", e.admin, map[string]string{"name": name}))
	e.publish(d)
	d = decodeDomain(e.domainCall(t, "POST", "/v1/domains/"+name+"/verify", e.admin, nil))
	if d.Status != api.DomainVerified {
		t.Fatalf("domain %s did not verify: %+v", name, d)
	}
	return d
}

// mailDomain makes domain's mail go to the test SMTP server.
func (e *env) mailDomain(domain string) {
	e.dns.SetMX(domain, 10, "mx."+domain)
	e.dns.SetA("mx."+domain, "127.0.0.1")
}

func (e *env) send(t *testing.T, body map[string]any) *apitest.Response {
	t.Helper()
	return e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: e.admin, Body: body})
}

// waitStatus polls the log until the message reaches status.
func (e *env) waitStatus(t *testing.T, id, status string) map[string]any {
	t.Helper()
	var r *apitest.Response
	if !poll.Within(20*time.Second, func() bool {
		r = e.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: e.admin})
		return r.Str("status") == status
	}) {
		t.Fatalf("message %s did not reach %s: %s", id, status, r.Body)
	}
	return r.Map()
}

func TestSendIsDeliveredSigned(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		d := e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")
		e.mailDomain("example.org")

		r := e.send(t, map[string]any{
			"from": "Shop <orders@shop.example>", "to": []string{"Ann <ann@example.net>", "bob@example.net"},
			"cc": "carol@example.org", "bcc": "audit@example.net",
			"subject": "Your receipt – #42", "html": "<p>Thanks, <b>Ann</b>!</p>",
			"tags":        map[string]string{"kind": "receipt"},
			"attachments": []map[string]string{{"filename": "receipt.txt", "content": base64.StdEncoding.EncodeToString([]byte("total 42"))}},
		})
		if r.Status != 200 || r.Str("status") != "queued" {
			t.Fatalf("send: %d %s", r.Status, r.Body)
		}
		id := r.Str("messageId")
		msg := e.waitStatus(t, id, "delivered")

		// Two transactions: example.net's three recipients together, and example.org's one.
		got := e.mx.WaitMessages(t, 2, 10*time.Second)
		var net *struct{ rcpts []string }
		for _, m := range got {
			if len(m.Rcpts) == 3 {
				net = &struct{ rcpts []string }{m.Rcpts}
			}
			if !m.TLS {
				t.Error("STARTTLS was offered but not used")
			}
			if !strings.HasPrefix(m.MailFrom, "b2-") || !strings.HasSuffix(m.MailFrom, "@bounces.shop.example") {
				t.Errorf("envelope sender %q is not on the bounce subdomain", m.MailFrom)
			}
		}
		if net == nil {
			t.Fatalf("example.net's recipients were not in one transaction: %+v", got)
		}
		raw := got[0].Data
		// The log's raw bytes are exactly what was received.
		rr := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id + "/raw", Key: e.admin})
		if rr.Header.Get("Content-Type") != "message/rfc822" || !bytes.Equal(rr.Body, raw) {
			t.Fatal("GET …/raw differs from the bytes the receiver got")
		}
		if bytes.Contains(bytes.ToLower(raw), []byte("audit@example.net")) {
			t.Fatal("the Bcc recipient appears in the message")
		}
		// MIME parses cleanly, with the attachment intact.
		mr, err := mail.CreateReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if subj, _ := mr.Header.Subject(); subj != "Your receipt – #42" {
			t.Fatalf("subject %q", subj)
		}
		foundAttachment := false
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("MIME: %v", err)
			}
			if h, ok := p.Header.(*mail.AttachmentHeader); ok {
				name, _ := h.Filename()
				body, _ := io.ReadAll(p.Body)
				foundAttachment = name == "receipt.txt" && string(body) == "total 42"
			}
		}
		if !foundAttachment {
			t.Fatal("the attachment did not arrive intact")
		}
		// The signature verifies against the key published in DNS, as a receiver checks it.
		verifications, err := dkim.VerifyWithOptions(bytes.NewReader(raw), &dkim.VerifyOptions{
			LookupTXT: func(domain string) ([]string, error) { return lookupTXT(e, domain) },
		})
		if err != nil || len(verifications) != 1 || verifications[0].Err != nil || verifications[0].Domain != "shop.example" {
			t.Fatalf("DKIM: %v %+v", err, verifications)
		}
		_ = d
		// The log shows delivered with the receiver's reply.
		for _, rc := range msg["recipients"].([]any) {
			rec := rc.(map[string]any)
			if rec["status"] != "delivered" || rec["smtpCode"] != float64(250) || rec["smtpResponse"] == nil || rec["mx"] == nil {
				t.Fatalf("recipient %v", rec)
			}
			// The receiver offers STARTTLS: the log says the session was encrypted.
			if rec["unencrypted"] != false {
				t.Fatalf("recipient delivered over STARTTLS shown as %v", rec["unencrypted"])
			}
		}
		if events := msg["events"].([]any); len(events) != 8 {
			t.Fatalf("want 4 queued and 4 delivered events, got %d", len(events))
		}
		// Another account cannot read it.
		other := storetest.NewAccount(t, e.store, "globex")
		ok := e.newKey(t, other, mailroom.Scopes{mailroom.ScopeSend})
		for _, p := range []string{"", "/raw"} {
			wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id + p, Key: ok}), 404, mailroom.ECodeNotFound)
		}
	})
}

// lookupTXT asks the test DNS server, as a receiving MTA would ask the world's.
func lookupTXT(e *env, name string) ([]string, error) {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", e.dns.Addr())
	}}
	return r.LookupTXT(context.Background(), name)
}

func TestSendRefusesBadInput(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	e.verifiedDomain(t, "shop.example")
	base := func() map[string]any {
		return map[string]any{"from": "orders@shop.example", "to": "ann@example.net", "subject": "Hi", "text": "Hello"}
	}
	for name, c := range map[string]struct {
		change func(map[string]any)
		field  string
	}{
		"CRLF in subject":      {func(m map[string]any) { m["subject"] = "Hi\r\nBcc: victim@example.com" }, "subject"},
		"CRLF in header value": {func(m map[string]any) { m["headers"] = map[string]string{"X-Ref": "1\r\nBcc: v@example.com"} }, "headers"},
		"reserved header":      {func(m map[string]any) { m["headers"] = map[string]string{"Bcc": "v@example.com"} }, "headers"},
		"trusted header": {func(m map[string]any) {
			m["headers"] = map[string]string{"authentication-results": "mx.example.net; dkim=pass"}
		}, "headers"},
		"ARC header":          {func(m map[string]any) { m["headers"] = map[string]string{"ARC-Seal": "i=1; cv=none"} }, "headers"},
		"Resent header":       {func(m map[string]any) { m["headers"] = map[string]string{"RESENT-FROM": "ceo@shop.example"} }, "headers"},
		"LF in display name":  {func(m map[string]any) { m["to"] = "\"Ann\nBcc: v@x.com\" <ann@example.net>" }, "to"},
		"no recipient":        {func(m map[string]any) { delete(m, "to") }, "to"},
		"bad address":         {func(m map[string]any) { m["to"] = []string{"ann@example.net", "not-an-address"} }, "to"},
		"duplicate recipient": {func(m map[string]any) { m["cc"] = "ANN@example.net" }, "cc"},
		"no body":             {func(m map[string]any) { delete(m, "text") }, "html"},
		"bad category":        {func(m map[string]any) { m["category"] = "newsletter" }, "category"},
		"bad base64": {func(m map[string]any) {
			m["attachments"] = []map[string]string{{"filename": "a.txt", "content": "!!!"}}
		}, "attachments"},
		"too many tags":  {func(m map[string]any) { m["tags"] = manyTags(11) }, "tags"},
		"empty template": {func(m map[string]any) { m["template"] = "" }, "template"},
		"51 recipients":  {func(m map[string]any) { m["bcc"] = addresses(50) }, "bcc"},
		"keys differ":    {func(m map[string]any) { m["idempotencyKey"] = "a" }, "idempotencyKey"},
	} {
		t.Run(name, func(t *testing.T) {
			body := base()
			c.change(body)
			r := e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: e.admin, Body: body, Header: map[string]string{"Idempotency-Key": map[bool]string{true: "b"}[name == "keys differ"]}})
			wantError(t, r, 400, mailroom.ECodeValidation)
			if !strings.Contains(string(r.Body), `"field":"`+c.field+`"`) {
				t.Fatalf("details should name %s: %s", c.field, r.Body)
			}
		})
	}
	t.Run("wrong JSON type", func(t *testing.T) {
		body := base()
		body["to"] = 42
		wantError(t, e.send(t, body), 400, mailroom.ECodeInvalidJSON)
	})
	t.Run("unverified domain", func(t *testing.T) {
		body := base()
		body["from"] = "x@elsewhere.example"
		wantError(t, e.send(t, body), 403, mailroom.ECodeDomainNotVerified)
		e.domainCall(t, "POST", "/v1/domains", e.admin, map[string]string{"name": "pending.example"})
		body["from"] = "x@pending.example"
		wantError(t, e.send(t, body), 403, mailroom.ECodeDomainNotVerified)
	})
	t.Run("scope", func(t *testing.T) {
		k := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeDomains})
		wantError(t, e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: k, Body: base()}), 403, mailroom.ECodeInsufficientScope)
	})
	if page := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages", Key: e.admin}).Map()["data"].([]any); len(page) != 0 {
		t.Fatalf("refused sends left %d messages in the log", len(page))
	}
}

func manyTags(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprintf("k%d", i)] = "v"
	}
	return m
}

func addresses(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("r%d@example.net", i))
	}
	return out
}

func TestIdempotentSends(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")
		body := map[string]any{"from": "orders@shop.example", "to": "ann@example.net", "subject": "Once", "text": "Only once"}
		var wg sync.WaitGroup
		var mu sync.Mutex
		ids, statuses := map[string]bool{}, map[string]int{}
		for range 50 {
			wg.Go(func() {
				r := e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: e.admin, Body: body, Header: map[string]string{"Idempotency-Key": "order-7"}})
				mu.Lock()
				defer mu.Unlock()
				ids[r.Str("messageId")] = true
				statuses[r.Str("status")]++
			})
		}
		wg.Wait()
		if len(ids) != 1 || statuses["queued"] != 1 || statuses["duplicate"] != 49 {
			t.Fatalf("50 concurrent sends with one key: ids %v, statuses %v", ids, statuses)
		}
		var id string
		for k := range ids {
			id = k
		}
		e.waitStatus(t, id, "delivered")
		if n := len(e.mx.Messages()); n != 1 {
			t.Fatalf("the receiver got %d messages, want 1", n)
		}
		body["subject"] = "Changed"
		r := e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: e.admin, Body: body, Header: map[string]string{"Idempotency-Key": "order-7"}})
		wantError(t, r, 409, mailroom.ECodeIdempotencyKeyReused)
	})
}
