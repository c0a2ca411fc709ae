package e2e

import (
	"strings"
	"testing"

	"github.com/resend/resend-go/v3"

	"github.com/mailroom/mailroom/apitest"
)

// resendGoDomains: a domain's life through the Go SDK, addressed by the id
// Create returned: Create (Resend's records: DKIM and SPF labels, ttl
// "Auto"), List, Get, Verify once its records are published, Update,
// Remove; Get by name as well.
func resendGoDomains(t *testing.T, e *resendEnv) {
	c, log := e.goSDK(t, e.key)
	created, err := c.Domains.Create(&resend.CreateDomainRequest{Name: "news.example", Region: "us-east-1"})
	if err != nil || created.Id == "" || created.Name != "news.example" || len(created.Records) == 0 {
		t.Fatalf("Domains.Create: %v %+v", err, created)
	}
	if created.Status == "verified" {
		t.Errorf("a new domain is %s", created.Status)
	}
	labels := map[string]bool{}
	for _, r := range created.Records {
		labels[r.Record+" "+r.Type] = true
		if r.Name == "" || r.Value == "" || r.Ttl == "" || r.Status == "" {
			t.Errorf("record %+v lacks a name, value, ttl or status", r)
		}
		// Resend shows a record's name relative to the domain, as a DNS
		// provider's form takes it ("@" for the domain itself).
		if strings.HasSuffix(r.Name, "news.example") {
			t.Errorf("record %+v: the name is not relative to the domain", r)
		}
		fqdn := r.Name + ".news.example"
		if r.Name == "@" {
			fqdn = "news.example"
		}
		switch r.Type {
		case "MX":
			prio, perr := r.Priority.Int64()
			if perr != nil {
				t.Errorf("the MX record's priority %q is not a number", r.Priority)
			}
			e.dns.SetMX(fqdn, uint16(prio), r.Value)
		case "TXT":
			e.dns.SetTXT(fqdn, r.Value)
		default:
			t.Errorf("record of type %s: %+v", r.Type, r)
		}
	}
	for _, want := range []string{"DKIM TXT", "SPF TXT", "SPF MX"} {
		if !labels[want] {
			t.Errorf("no %s record among %v", want, labels)
		}
	}

	list, err := c.Domains.List()
	if err != nil || list.Object != "list" || !hasDomain(list.Data, created.Id, "news.example") || !hasDomain(list.Data, "", "shop.example") {
		t.Errorf("Domains.List: %v %+v, want news.example (%s) and shop.example", err, list, created.Id)
	}
	got, err := c.Domains.Get(created.Id)
	if err != nil || got.Id != created.Id || got.Name != "news.example" || got.Object != "domain" || len(got.Records) != len(created.Records) {
		t.Errorf("Domains.Get(%s): %v %+v", created.Id, err, got)
	}
	byName, err := c.Domains.Get("news.example")
	if err != nil || byName.Id != created.Id {
		t.Errorf("Domains.Get by name: %v %+v, want id %s", err, byName, created.Id)
	}

	if ok, err := c.Domains.Verify(created.Id); err != nil || !ok {
		t.Fatalf("Domains.Verify: %v", err)
	}
	if got, err := c.Domains.Get(created.Id); err != nil || got.Status != "verified" {
		t.Errorf("after Verify with the records published: %v status %q, want verified", err, got.Status)
	}
	// Verified: it sends.
	if _, err := c.Emails.Send(&resend.SendEmailRequest{From: "hello@news.example", To: []string{"ann@example.net"},
		Subject: "News 5001", Text: "Verified by the SDK."}); err != nil {
		t.Errorf("sending from the domain verified through the SDK: %v", err)
	} else {
		e.waitReceived(t, "News 5001", 1)
	}

	// Tracking turns on through the SDK as on /v1 (docs/api.md
	// "Engagement tracking"); the SDK leaves false out, so what it does not
	// ask for stays as it was.
	if _, err := c.Domains.Update(created.Id, &resend.UpdateDomainRequest{Tls: resend.Enforced, OpenTracking: true}); err != nil {
		t.Errorf("Domains.Update with open tracking: %v", err)
	}
	up, err := c.Domains.Update(created.Id, &resend.UpdateDomainRequest{ClickTracking: true})
	if err != nil || up.Id != created.Id {
		t.Errorf("Domains.Update: %v %+v", err, up)
	}
	if r := e.node.client.Do(apitest.Request{Method: "GET", Path: "/v1/domains/news.example", Key: e.key}); r.Str("tls") != "enforced" ||
		r.Map()["openTracking"] != true || r.Map()["clickTracking"] != true {
		t.Errorf("after Update tls enforced, open and click tracking, /v1 shows %s", r.Body)
	}

	if ok, err := c.Domains.Remove(created.Id); err != nil || !ok {
		t.Fatalf("Domains.Remove: %v", err)
	}
	if a := log.last(t); a.Status != 200 || !strings.Contains(string(a.Body), `"deleted":true`) {
		t.Errorf("Domains.Remove answered %d %s, want 200 {object, id, deleted: true}", a.Status, a.Body)
	}
	_, err = c.Domains.Get(created.Id)
	wantResendError(t, "Domains.Get of a removed domain", err, log, 404, "not_found")
}

func hasDomain(ds []resend.Domain, id, name string) bool {
	for _, d := range ds {
		if (id == "" || d.Id == id) && d.Name == name {
			return true
		}
	}
	return false
}

// resendGoAPIKeys: ApiKeys.Create with each permission gives a token that
// works as a key; a sending_access key sends but is refused on /domains
// with restricted_api_key; the list shows the keys without a token; a
// removed key is refused with invalid_api_key.
func resendGoAPIKeys(t *testing.T, e *resendEnv) {
	c, log := e.goSDK(t, e.key)
	full, err := c.ApiKeys.Create(&resend.CreateApiKeyRequest{Name: "deploy", Permission: "full_access"})
	if err != nil || full.Id == "" || full.Token == "" {
		t.Fatalf("ApiKeys.Create full_access: %v %+v", err, full)
	}
	sending, err := c.ApiKeys.Create(&resend.CreateApiKeyRequest{Name: "app", Permission: "sending_access"})
	if err != nil || sending.Id == "" || sending.Token == "" {
		t.Fatalf("ApiKeys.Create sending_access: %v %+v", err, sending)
	}

	fc, _ := e.goSDK(t, full.Token)
	if _, err := fc.Domains.List(); err != nil {
		t.Errorf("the full_access key lists domains: %v", err)
	}
	sc, slog := e.goSDK(t, sending.Token)
	if _, err := sc.Emails.Send(&resend.SendEmailRequest{From: "orders@shop.example", To: []string{"ann@example.net"},
		Subject: "Keys 6001", Text: "Sent with a sending_access key."}); err != nil {
		t.Errorf("the sending_access key sends: %v", err)
	} else {
		defer e.waitReceived(t, "Keys 6001", 1)
	}
	_, err = sc.Domains.List()
	wantResendError(t, "a sending_access key on /domains", err, slog, 401, "restricted_api_key")
	_, err = sc.ApiKeys.List()
	wantResendError(t, "a sending_access key on /api-keys", err, slog, 401, "restricted_api_key")

	list, err := c.ApiKeys.List()
	if err != nil || list.Object != "list" {
		t.Fatalf("ApiKeys.List: %v %+v", err, list)
	}
	names := map[string]string{}
	for _, k := range list.Data {
		names[k.Id] = k.Name
		if k.CreatedAt == "" {
			t.Errorf("key %s has no created_at", k.Id)
		}
	}
	if names[full.Id] != "deploy" || names[sending.Id] != "app" {
		t.Errorf("ApiKeys.List: %+v, want deploy (%s) and app (%s)", list.Data, full.Id, sending.Id)
	}
	if a := log.last(t); strings.Contains(string(a.Body), full.Token) || strings.Contains(string(a.Body), `"token"`) {
		t.Errorf("the list shows a token: %s", a.Body)
	}

	if ok, err := c.ApiKeys.Remove(sending.Id); err != nil || !ok {
		t.Fatalf("ApiKeys.Remove: %v", err)
	}
	_, err = sc.Emails.Send(&resend.SendEmailRequest{From: "orders@shop.example", To: []string{"ann@example.net"},
		Subject: "Keys 6002", Text: "A removed key."})
	wantResendError(t, "a removed key", err, slog, 403, "invalid_api_key")
}

// resendGoErrors: what goes wrong comes back with Resend's status and
// name, and a message the Go SDK shows.
func resendGoErrors(t *testing.T, e *resendEnv) {
	wrong, wlog := e.goSDK(t, "re_123456789_notAMailroomKey")
	_, err := wrong.Emails.Send(&resend.SendEmailRequest{From: "orders@shop.example", To: []string{"ann@example.net"}, Subject: "x", Text: "x"})
	wantResendError(t, "a Resend key", err, wlog, 403, "invalid_api_key")
	forged := e.key[:len(e.key)-4] + "AAAA"
	if forged == e.key {
		forged = e.key[:len(e.key)-4] + "BBBB"
	}
	bad, blog := e.goSDK(t, forged)
	_, err = bad.Domains.List()
	wantResendError(t, "a wrong secret", err, blog, 403, "invalid_api_key")

	c, log := e.goSDK(t, e.key)
	_, err = c.Emails.Send(&resend.SendEmailRequest{From: "orders@unverified.example", To: []string{"ann@example.net"}, Subject: "x", Text: "x"})
	wantResendError(t, "from an unverified domain", err, log, 403, "validation_error")
	if err != nil && !strings.Contains(err.Error(), "unverified.example") {
		t.Errorf("the message %q does not name the domain", err)
	}

	_, err = c.Emails.Send(&resend.SendEmailRequest{From: "orders@shop.example", Subject: "No recipient", Text: "x"})
	wantResendError(t, "no to", err, log, 422, "missing_required_field")
	if err != nil && !strings.Contains(err.Error(), "to") {
		t.Errorf("the message %q does not name the field", err)
	}

	_, err = c.Emails.Send(&resend.SendEmailRequest{From: "orders@shop.example", To: []string{"ann@example.net"},
		Subject: "Bad time", Text: "x", ScheduledAt: "next tuesday-ish"})
	wantResendError(t, "an unreadable scheduled_at", err, log, 422, "validation_error")

	_, err = c.Emails.Get("msg_doesnotexist")
	wantResendError(t, "Emails.Get of an unknown id", err, log, 404, "not_found")
}
