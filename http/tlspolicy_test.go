package http_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/client"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/delivery"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/storetest"
)

// A domain's tls (docs/api.md "TLS policy"): opportunistic until PATCH
// /v1/domains/{domain} sets it, shown by every domain answer; bad values,
// unknown fields, unknown domains and keys without scope domains are
// refused with the contract's errors and change nothing.
func TestDomainTLSSetting(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		added := decodeDomain(e.domainCall(t, "POST", "/v1/domains", e.admin, map[string]string{"name": "shop.example"}))
		if added.TLS != api.DomainTLSOpportunistic {
			t.Fatalf("a new domain shows tls %q, want opportunistic", added.TLS)
		}
		r := e.domainCall(t, "PATCH", "/v1/domains/Shop.Example", e.admin, map[string]any{"tls": "enforced"})
		if r.Status != 200 || decodeDomain(r).TLS != api.DomainTLSEnforced || decodeDomain(r).Name != "shop.example" {
			t.Fatalf("PATCH tls enforced: %d %s", r.Status, r.Body)
		}
		showsTLS := func(want api.DomainTLS) {
			t.Helper()
			if d := decodeDomain(e.domainCall(t, "GET", "/v1/domains/shop.example", e.admin, nil)); d.TLS != want {
				t.Fatalf("GET shows tls %q, want %q", d.TLS, want)
			}
			list := apitest.Decode[api.List[api.Domain]](e.domainCall(t, "GET", "/v1/domains", e.admin, nil))
			if len(list.Data) != 1 || list.Data[0].TLS != want {
				t.Fatalf("the list shows %+v, want tls %q", list.Data, want)
			}
		}
		showsTLS(api.DomainTLSEnforced)
		if r := e.domainCall(t, "PATCH", "/v1/domains/shop.example", e.admin, map[string]any{}); r.Status != 200 || decodeDomain(r).TLS != api.DomainTLSEnforced {
			t.Fatalf("PATCH {} changed the domain: %d %s", r.Status, r.Body)
		}

		r = e.domainCall(t, "PATCH", "/v1/domains/shop.example", e.admin, map[string]any{"tls": "required"})
		wantError(t, r, 400, mailroom.ECodeValidation)
		if d := apitest.Decode[api.ErrorBody](r).Details; len(d) != 1 || d[0].Field != "tls" || !strings.Contains(d[0].Message, "enforced") {
			t.Fatalf("a bad tls is answered with details %+v", d)
		}
		r = e.domainCall(t, "PATCH", "/v1/domains/shop.example", e.admin, map[string]any{"tls": "opportunistic", "tlsMode": "enforced"})
		wantError(t, r, 400, mailroom.ECodeValidation)
		if d := apitest.Decode[api.ErrorBody](r).Details; len(d) != 1 || d[0].Field != "tlsMode" {
			t.Fatalf("an unknown field is answered with details %+v", d)
		}
		showsTLS(api.DomainTLSEnforced) // neither refusal changed it

		wantError(t, e.domainCall(t, "PATCH", "/v1/domains/other.example", e.admin, map[string]any{"tls": "enforced"}), 404, mailroom.ECodeNotFound)
		sendOnly := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeSend})
		wantError(t, e.domainCall(t, "PATCH", "/v1/domains/shop.example", sendOnly, map[string]any{"tls": "opportunistic"}), 403, mailroom.ECodeInsufficientScope)
		showsTLS(api.DomainTLSEnforced)

		// The Go client sets it back.
		c := client.New(e.Base, e.admin, client.WithHTTPClient(e.HTTP))
		opportunistic := api.DomainTLSOpportunistic
		d, err := c.UpdateDomain(context.Background(), "shop.example", &client.DomainUpdateRequest{TLS: &opportunistic})
		if err != nil || d.TLS != api.DomainTLSOpportunistic {
			t.Fatalf("the client's UpdateDomain: %+v, %v", d, err)
		}
		showsTLS(api.DomainTLSOpportunistic)
	})
}

// tlsTransport passes deliveries to the real transport, remembers each
// one's requireTls and tls mode, and gives each result the TLS a
// receiver's session would have had: none for recipients at
// plain.example (a receiver without STARTTLS), TLS 1.3 otherwise. The
// SMTP transport fills RecipientResult.TLS itself; this stands in for it so
// that the API's side is tested alone.
type tlsTransport struct {
	mailroom.Transport
	mu   sync.Mutex
	seen map[string]mailroom.Delivery // by recipient, without Data
}

func (s *tlsTransport) Deliver(ctx context.Context, d *mailroom.Delivery) []mailroom.RecipientResult {
	out := s.Transport.Deliver(ctx, d)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range out {
		if strings.HasSuffix(out[i].Recipient, "@plain.example") {
			out[i].TLS, out[i].Unencrypted = nil, true
		} else {
			out[i].TLS = &mailroom.TLSInfo{Version: "TLS1.3", Cipher: "TLS_AES_128_GCM_SHA256", Verified: true, Policy: mailroom.TLSPolicyMTASTS}
		}
		seen := *d
		seen.Data = nil
		s.seen[out[i].Recipient] = seen
	}
	return out
}

func (s *tlsTransport) delivery(rcpt string) (mailroom.Delivery, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.seen[rcpt]
	return d, ok
}

func newTLSEnv(t *testing.T, eng storetest.Engine) (*env, *tlsTransport) {
	seen := &tlsTransport{seen: map[string]mailroom.Delivery{}}
	e := newEnvWithStore(t, eng.Open(t), func(_ *mhttp.Server, d *delivery.Deliverer) {
		seen.Transport = d.Transport
		d.Transport = seen
	})
	e.verifiedDomain(t, "shop.example")
	e.mailDomain("example.net")
	e.mailDomain("plain.example")
	return e, seen
}

// A send's requireTls is stored, shown in the log, part of the idempotency
// request, in batch items too, and reaches delivery with the domain's tls
// (mailroom.Delivery.RequireTLS, TLSMode).
func TestRequireTLSSend(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e, seen := newTLSEnv(t, eng)
		// Set before the first send: the Signer has not read the domain yet.
		if r := e.domainCall(t, "PATCH", "/v1/domains/shop.example", e.admin, map[string]any{"tls": "enforced"}); r.Status != 200 {
			t.Fatalf("PATCH: %d %s", r.Status, r.Body)
		}
		body := map[string]any{"from": "orders@shop.example", "to": "ann@example.net", "subject": "Hi", "text": "Hi", "requireTls": true}
		r := e.send(t, body)
		if r.Status != 200 {
			t.Fatalf("send: %d %s", r.Status, r.Body)
		}
		strict := r.Str("messageId")
		plain := e.sendOne(t, "bob@example.net")
		// The world here publishes no MTA-STS policy, so no MX host is
		// validated and REQUIRETLS mail bounces (5.7.30): having reached
		// the transport as REQUIRETLS, it was never sent. The receiver's
		// certificate is not valid for its name, so the enforced domain's
		// other mail is deferred (tls_required).
		if m := e.waitStatus(t, strict, "bounced"); m["requireTls"] != true {
			t.Fatalf("a send with requireTls shows requireTls %v", m["requireTls"])
		}
		if m := e.waitStatus(t, plain, "deferred"); m["requireTls"] != false {
			t.Fatalf("a send without requireTls shows requireTls %v", m["requireTls"])
		}
		if d, ok := seen.delivery("ann@example.net"); !ok || !d.RequireTLS || d.TLSMode != mailroom.TLSEnforced {
			t.Fatalf("the delivery of the requireTls send had RequireTLS %v and TLSMode %q (seen %v), want true and enforced", d.RequireTLS, d.TLSMode, ok)
		}
		if d, _ := seen.delivery("bob@example.net"); d.RequireTLS || d.TLSMode != mailroom.TLSEnforced {
			t.Fatalf("the delivery of the plain send had RequireTLS %v and TLSMode %q, want false and enforced", d.RequireTLS, d.TLSMode)
		}
		c := client.New(e.Base, e.admin, client.WithHTTPClient(e.HTTP))
		if msg, err := c.GetMessage(context.Background(), strict); err != nil || !msg.RequireTLS {
			t.Fatalf("the Go client reads requireTls %+v, %v", msg, err)
		}

		// In a batch, each item's own.
		items := batchData(t, e.batch(t, map[string]any{"messages": []any{
			map[string]any{"from": "orders@shop.example", "to": "cy@example.net", "subject": "Hi", "text": "Hi", "requireTls": true},
			map[string]any{"from": "orders@shop.example", "to": "di@example.net", "subject": "Hi", "text": "Hi"},
		}}), 2, 0)
		for i, want := range []bool{true, false} {
			m := e.waitStatus(t, items[i]["messageId"].(string), map[bool]string{true: "bounced", false: "deferred"}[want])
			if m["requireTls"] != want {
				t.Fatalf("batch item %d shows requireTls %v, want %v", i, m["requireTls"], want)
			}
		}

		// The same idempotency key with and without requireTls are two
		// requests: the second is refused, not answered as a duplicate.
		keyed := map[string]any{"from": "orders@shop.example", "to": "ed@example.net", "subject": "Hi", "text": "Hi", "idempotencyKey": "order-9"}
		if r := e.send(t, keyed); r.Status != 200 || r.Str("status") != "queued" {
			t.Fatalf("keyed send: %d %s", r.Status, r.Body)
		}
		keyed["requireTls"] = true
		wantError(t, e.send(t, keyed), 409, mailroom.ECodeIdempotencyKeyReused)
		keyed["requireTls"] = false // false is the same as absent
		if r := e.send(t, keyed); r.Status != 200 || r.Str("status") != "duplicate" {
			t.Fatalf("the keyed send again, requireTls false: %d %s", r.Status, r.Body)
		}

		// Not a boolean: the contract's invalid_json.
		body["requireTls"] = "yes"
		wantError(t, e.send(t, body), 400, mailroom.ECodeInvalidJSON)
	})
}

// Each recipient shows the TLS of its last attempt, and email.delivered
// data carries it: an object over TLS, null in clear text (docs/api.md
// "TLS policy").
func TestRecipientTLSShown(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e, _ := newTLSEnv(t, eng)
		secure := e.waitStatus(t, e.sendOne(t, "ann@example.net"), "delivered")
		tls, ok := recipient0(secure)["tls"].(map[string]any)
		if !ok || tls["version"] != "TLS1.3" || tls["cipher"] != "TLS_AES_128_GCM_SHA256" || tls["verified"] != true || tls["policy"] != "mta-sts" {
			t.Fatalf("a delivery over TLS shows the recipient's tls %v", recipient0(secure)["tls"])
		}
		clear := e.waitStatus(t, e.sendOne(t, "bob@plain.example"), "delivered")
		if v, ok := recipient0(clear)["tls"]; !ok || v != nil {
			t.Fatalf("a delivery in clear shows the recipient's tls %v (present %v), want null", v, ok)
		}

		delivered := func(id string) string {
			t.Helper()
			r := e.Do(apitest.Request{Method: "GET", Path: "/v1/events?type=email.delivered&messageId=" + id, Key: e.admin})
			list := apitest.Decode[api.List[api.EventRecord]](r)
			if r.Status != 200 || len(list.Data) != 1 {
				t.Fatalf("email.delivered events of %s: %d %s", id, r.Status, r.Body)
			}
			return string(list.Data[0].Data)
		}
		if data := delivered(secure["id"].(string)); !strings.Contains(data, `"tls":{"version":"TLS1.3","cipher":"TLS_AES_128_GCM_SHA256","verified":true,"policy":"mta-sts"}`) {
			t.Fatalf("email.delivered over TLS has data %s", data)
		}
		if data := delivered(clear["id"].(string)); !strings.Contains(data, `"tls":null`) {
			t.Fatalf("email.delivered in clear has data %s, want \"tls\":null", data)
		}
		// The timeline's events are the same data.
		for _, ev := range clear["events"].([]any) {
			ev := ev.(map[string]any)
			if ev["type"] != "email.delivered" {
				continue
			}
			if detail := ev["detail"].(map[string]any); detail["tls"] != nil || !hasKey(detail, "tls") {
				t.Fatalf("the timeline's email.delivered in clear has %v", detail)
			}
		}
		// Events of no session have no tls.
		for _, ev := range secure["events"].([]any) {
			ev := ev.(map[string]any)
			if ev["type"] == "email.queued" && hasKey(ev["detail"].(map[string]any), "tls") {
				t.Fatalf("email.queued has a tls: %v", ev["detail"])
			}
		}

		c := client.New(e.Base, e.admin, client.WithHTTPClient(e.HTTP))
		msg, err := c.GetMessage(context.Background(), secure["id"].(string))
		if err != nil || msg.Recipients[0].TLS == nil || msg.Recipients[0].TLS.Policy != api.TLSPolicyMTASTS {
			t.Fatalf("the Go client reads %+v, %v", msg, err)
		}
	})
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }
