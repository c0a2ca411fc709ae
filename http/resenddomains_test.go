package http_test

import (
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/resend"
	"github.com/mailroom/mailroom/storetest"
)

// Resend's domain routes, as its SDKs call them: the create's answer in
// Resend's shape, every route by the id it gave and by the name, verify
// finding the published records, tls set through the one update /v1
// makes, removal answered in JSON.
func TestResendDomainLifecycle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		r := e.resendDo("POST", "/domains", e.admin, map[string]any{"name": "Shop.Example", "tls": "enforced", "region": "us-east-1",
			"open_tracking": false, "click_tracking": nil})
		if r.Status != 200 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		created := decodeExactly[resend.CreatedDomain](t, r)
		if created.Object != "domain" || !mailroom.IsID(created.ID, mailroom.PrefixDomain) || created.Name != "shop.example" ||
			created.Status != "not_started" || created.Region != "default" || created.CreatedAt == "" || created.CreatedAtForGoSDK != created.CreatedAt {
			t.Fatalf("created: %s", r.Body)
		}
		var labels []string
		for _, rec := range created.Records {
			labels = append(labels, rec.Record+" "+rec.Type+" "+rec.Name)
			if rec.TTL != "Auto" || rec.Status != "not_started" || (rec.Type == "MX") != (rec.Priority != nil) {
				t.Errorf("record %+v", rec)
			}
		}
		sel := decodeDomain(e.domainCall(t, "GET", "/v1/domains/shop.example", e.admin, nil))
		wantDKIM := "DKIM TXT " + strings.TrimSuffix(record(sel, api.PurposeDKIM).Name, ".shop.example")
		if got := strings.Join(labels, ", "); got != wantDKIM+", SPF TXT bounces, SPF MX bounces, DMARC TXT _dmarc" {
			t.Fatalf("records: %s", got)
		}
		if sel.TLS != api.DomainTLS("enforced") {
			t.Fatalf("the create's tls is not the domain's: %+v", sel)
		}

		// By id and by name, in any case.
		for _, ref := range []string{created.ID, "shop.example", "SHOP.example"} {
			r := e.resendDo("GET", "/domains/"+ref, e.admin, nil)
			if got := decodeExactly[resend.Domain](t, r); r.Status != 200 || got.ID != created.ID || got.Name != "shop.example" {
				t.Fatalf("GET /domains/%s: %d %s", ref, r.Status, r.Body)
			}
		}

		e.publish(sel)
		r = e.resendDo("POST", "/domains/"+created.ID+"/verify", e.admin, nil)
		if got := decodeExactly[resend.DomainRef](t, r); r.Status != 200 || got != (resend.DomainRef{Object: "domain", ID: created.ID}) {
			t.Fatalf("verify: %d %s", r.Status, r.Body)
		}
		got := decodeExactly[resend.Domain](t, e.resendDo("GET", "/domains/"+created.ID, e.admin, nil))
		if got.Status != "verified" || got.Records[0].Status != "verified" {
			t.Fatalf("after verify: %+v", got)
		}

		// PATCH takes Resend's fields through /v1's update.
		r = e.resendDo("PATCH", "/domains/shop.example", e.admin, map[string]any{"tls": "opportunistic", "open_tracking": false, "id": "ignored"})
		if got := decodeExactly[resend.Domain](t, r); r.Status != 200 || got.ID != created.ID {
			t.Fatalf("patch: %d %s", r.Status, r.Body)
		}
		if d := decodeDomain(e.domainCall(t, "GET", "/v1/domains/shop.example", e.admin, nil)); d.TLS != api.DomainTLS("opportunistic") {
			t.Fatalf("patched tls: %+v", d)
		}
		r = e.resendDo("PATCH", "/domains/"+created.ID, e.admin, map[string]any{"tls": "sometimes"})
		wantResendError(t, r, 422, "validation_error")
		if !strings.Contains(r.Str("message"), "tls") {
			t.Fatalf("bad tls: %s", r.Body)
		}
		// open_tracking and click_tracking are /v1's openTracking and
		// clickTracking: set by a value, left by null.
		tracking := func(name string) (bool, bool) {
			t.Helper()
			d := decodeDomain(e.domainCall(t, "GET", "/v1/domains/"+name, e.admin, nil))
			return d.OpenTracking, d.ClickTracking
		}
		r = e.resendDo("PATCH", "/domains/"+created.ID, e.admin, map[string]any{"click_tracking": true})
		if r.Status != 200 {
			t.Fatalf("click tracking on: %d %s", r.Status, r.Body)
		}
		if o, c := tracking("shop.example"); o || !c {
			t.Fatalf("after click_tracking true: open %v click %v", o, c)
		}
		r = e.resendDo("PATCH", "/domains/"+created.ID, e.admin, map[string]any{"open_tracking": true, "click_tracking": nil})
		if o, c := tracking("shop.example"); r.Status != 200 || !o || !c {
			t.Fatalf("after open_tracking true, click_tracking null: %d open %v click %v", r.Status, o, c)
		}
		e.resendDo("PATCH", "/domains/"+created.ID, e.admin, map[string]any{"open_tracking": false, "click_tracking": false})
		if o, c := tracking("shop.example"); o || c {
			t.Fatalf("after both false: open %v click %v", o, c)
		}
		wantResendError(t, e.resendDo("PATCH", "/domains/"+created.ID, e.admin, map[string]any{"open_tracking": "yes"}), 400, "validation_error")
		r = e.resendDo("POST", "/domains", e.admin, map[string]any{"name": "news.example", "open_tracking": true})
		if r.Status != 200 {
			t.Fatalf("a create with open tracking: %d %s", r.Status, r.Body)
		}
		if o, c := tracking("news.example"); !o || c {
			t.Fatalf("created with open_tracking: open %v click %v", o, c)
		}
		wantResendError(t, e.resendDo("POST", "/domains", e.admin, map[string]any{"name": "not a domain"}), 422, "validation_error")

		// Removal answers JSON, and the domain is gone.
		r = e.resendDo("DELETE", "/domains/"+created.ID, e.admin, nil)
		if got := decodeExactly[resend.DeletedDomain](t, r); r.Status != 200 || got != (resend.DeletedDomain{Object: "domain", ID: created.ID, Deleted: true}) {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		wantResendError(t, e.resendDo("GET", "/domains/"+created.ID, e.admin, nil), 404, "not_found")
		wantResendError(t, e.resendDo("DELETE", "/domains/shop.example", e.admin, nil), 404, "not_found")
	})
}

// GET /domains lists newest first and pages as Resend does, by limit and
// an item's id.
func TestResendListDomains(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		var ids []string // newest first
		for _, name := range []string{"a.example", "b.example", "c.example"} {
			d := decodeExactly[resend.CreatedDomain](t, e.resendDo("POST", "/domains", e.admin, map[string]any{"name": name}))
			ids = append([]string{d.ID}, ids...)
		}
		list := func(query string) (got []string, more bool) {
			t.Helper()
			r := e.resendDo("GET", "/domains"+query, e.admin, nil)
			l := decodeExactly[resend.DomainList](t, r)
			if r.Status != 200 || l.Object != "list" {
				t.Fatalf("GET /domains%s: %d %s", query, r.Status, r.Body)
			}
			for _, d := range l.Data {
				got = append(got, d.ID)
			}
			return got, l.HasMore
		}
		if got, more := list(""); strings.Join(got, ",") != strings.Join(ids, ",") || more {
			t.Fatalf("all: %v %v", got, more)
		}
		if got, more := list("?limit=2"); strings.Join(got, ",") != strings.Join(ids[:2], ",") || !more {
			t.Fatalf("limit 2: %v %v", got, more)
		}
		if got, more := list("?limit=2&after=" + ids[1]); strings.Join(got, ",") != ids[2] || more {
			t.Fatalf("after the second: %v %v", got, more)
		}
		if got, more := list("?limit=1&before=" + ids[2]); strings.Join(got, ",") != ids[1] || !more {
			t.Fatalf("before the third: %v %v", got, more)
		}
		wantResendError(t, e.resendDo("GET", "/domains?limit=500", e.admin, nil), 422, "validation_error")
	})
}

// Another account's domain is not found, by id or by name, on every
// route; a key without the domains scope is refused as Resend refuses a
// sending_access key.
func TestResendDomainsOfAnotherAccount(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		d := decodeExactly[resend.CreatedDomain](t, e.resendDo("POST", "/domains", e.admin, map[string]any{"name": "shop.example"}))
		other := e.newKey(t, storetest.NewAccount(t, e.store, "globex"), mailroom.Scopes(mailroom.AllScopes))
		for _, ref := range []string{d.ID, "shop.example"} {
			wantResendError(t, e.resendDo("GET", "/domains/"+ref, other, nil), 404, "not_found")
			wantResendError(t, e.resendDo("PATCH", "/domains/"+ref, other, map[string]any{"tls": "enforced"}), 404, "not_found")
			wantResendError(t, e.resendDo("POST", "/domains/"+ref+"/verify", other, nil), 404, "not_found")
			wantResendError(t, e.resendDo("DELETE", "/domains/"+ref, other, nil), 404, "not_found")
		}
		if l := decodeExactly[resend.DomainList](t, e.resendDo("GET", "/domains", other, nil)); len(l.Data) != 0 {
			t.Fatalf("another account lists %+v", l)
		}
		sending := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeSend})
		wantResendError(t, e.resendDo("GET", "/domains", sending, nil), 401, "restricted_api_key")
		wantResendError(t, e.resendDo("POST", "/domains", sending, map[string]any{"name": "x.example"}), 401, "restricted_api_key")
		if got := decodeExactly[resend.Domain](t, e.resendDo("GET", "/domains/"+d.ID, e.admin, nil)); got.Status != "not_started" {
			t.Fatalf("the domain changed: %+v", got)
		}
	})
}
