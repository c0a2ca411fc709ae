package http_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/x509"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/sqlite"
	"github.com/mailroom/mailroom/storetest"
)

func decodeDomain(r *apitest.Response) api.Domain { return apitest.Decode[api.Domain](r) }

func record(d api.Domain, p api.RecordPurpose) api.DNSRecord {
	for _, r := range d.Records {
		if r.Purpose == p {
			return r
		}
	}
	return api.DNSRecord{}
}

// publish puts the records into DNS exactly as the API gave them, the way a
// customer pastes them into a DNS provider's form.
func (e *env) publish(d api.Domain) {
	for _, r := range d.Records {
		switch r.Type {
		case "TXT":
			e.dns.SetTXT(r.Name, r.Value)
		case "MX":
			e.dns.SetMX(r.Name, uint16(*r.Priority), r.Value)
		}
	}
}

func (e *env) domainCall(t testing.TB, method, path, key string, body any) *apitest.Response {
	t.Helper()
	return e.Do(apitest.Request{Method: method, Path: path, Key: key, Body: body})
}

func TestDomainLifecycle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		r := e.domainCall(t, "POST", "/v1/domains", e.admin, map[string]string{"name": "Example.COM."})
		if r.Status != 201 {
			t.Fatalf("add: %d %s", r.Status, r.Body)
		}
		d := decodeDomain(r)
		if d.Name != "example.com" || d.Status != api.DomainPending || len(d.Records) != 4 || d.NextCheckAt == nil {
			t.Fatalf("add answered %s", r.Body)
		}
		dkim := record(d, api.PurposeDKIM)
		if !strings.HasSuffix(dkim.Name, "._domainkey.example.com") || !strings.HasPrefix(dkim.Value, "v=DKIM1; k=rsa; p=") || !dkim.Required {
			t.Fatalf("dkim record %+v", dkim)
		}
		if spf := record(d, api.PurposeSPF); spf.Name != "bounces.example.com" || spf.Type != "TXT" || !strings.HasPrefix(spf.Value, "v=spf1 ") {
			t.Fatalf("spf record %+v", spf)
		}
		if mx := record(d, api.PurposeReturnPath); mx.Name != "bounces.example.com" || mx.Type != "MX" || mx.Value != serviceHost || mx.Priority == nil {
			t.Fatalf("return-path record %+v", mx)
		}
		if dmarc := record(d, api.PurposeDMARC); dmarc.Required || dmarc.Name != "_dmarc.example.com" {
			t.Fatalf("dmarc record %+v", dmarc)
		}
		wantError(t, e.domainCall(t, "POST", "/v1/domains", e.admin, map[string]string{"name": "example.com"}), 409, mailroom.ECodeAlreadyExists)

		// Nothing published: every required record says what is missing.
		d = decodeDomain(e.domainCall(t, "POST", "/v1/domains/example.com/verify", e.admin, nil))
		if d.Status != api.DomainPending || d.LastCheckedAt == nil {
			t.Fatalf("verify with nothing published: %+v", d)
		}
		for _, rec := range d.Records {
			if rec.Required && (rec.Status == api.RecordVerified || rec.Problem == "") {
				t.Fatalf("record %s should say what is missing: %+v", rec.Purpose, rec)
			}
		}

		// Publish exactly what the API said; verify.
		e.publish(d)
		r = e.domainCall(t, "POST", "/v1/domains/example.com/verify", e.admin, nil)
		d = decodeDomain(r)
		if d.Status != api.DomainVerified || d.VerifiedAt == nil {
			t.Fatalf("verify after publishing: %s", r.Body)
		}
		for _, rec := range d.Records {
			if rec.Status != api.RecordVerified {
				t.Fatalf("record %s not verified: %+v", rec.Purpose, rec)
			}
		}
		if _, err := e.domains.CheckSendingDomain(context.Background(), e.acct.ID, "example.com"); err != nil {
			t.Fatalf("a verified domain cannot send: %v", err)
		}
		if got := decodeDomain(e.domainCall(t, "GET", "/v1/domains/EXAMPLE.com", e.admin, nil)); got.Status != api.DomainVerified {
			t.Fatalf("get by another case: %+v", got)
		}
		wantEvents(t, e, mailroom.EventDomainVerified)

		// Another account can neither see nor touch it, and may add the name itself.
		other := storetest.NewAccount(t, e.store, "globex")
		otherKey := e.newKey(t, other, mailroom.Scopes{mailroom.ScopeDomains})
		for _, m := range []string{"GET", "DELETE"} {
			wantError(t, e.domainCall(t, m, "/v1/domains/example.com", otherKey, nil), 404, mailroom.ECodeNotFound)
		}
		wantError(t, e.domainCall(t, "POST", "/v1/domains/example.com/verify", otherKey, nil), 404, mailroom.ECodeNotFound)
		r = e.domainCall(t, "POST", "/v1/domains", otherKey, map[string]string{"name": "example.com"})
		if r.Status != 201 || record(decodeDomain(r), api.PurposeDKIM).Name == dkim.Name {
			t.Fatalf("the second account's domain must have a key and selector of its own: %d %s", r.Status, r.Body)
		}
		if l := e.domainCall(t, "GET", "/v1/domains", otherKey, nil).Map()["data"].([]any); len(l) != 1 {
			t.Fatalf("the other account lists %d domains", len(l))
		}

		// The records disappear: re-checks move it to temporary_failure (it
		// keeps sending), then 72 hours later to failed.
		e.dns.Remove(dkim.Name)
		e.clock.Advance(25 * time.Hour)
		if _, err := e.domains.RecheckDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		d = decodeDomain(e.domainCall(t, "GET", "/v1/domains/example.com", e.admin, nil))
		if d.Status != api.DomainTemporaryFailure || record(d, api.PurposeDKIM).Status != api.RecordFailed {
			t.Fatalf("after the records went: %+v", d)
		}
		if _, err := e.domains.CheckSendingDomain(context.Background(), e.acct.ID, "example.com"); err != nil {
			t.Fatalf("a domain in its grace period must keep sending: %v", err)
		}
		e.clock.Advance(73 * time.Hour)
		if _, err := e.domains.RecheckDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		d = decodeDomain(e.domainCall(t, "GET", "/v1/domains/example.com", e.admin, nil))
		if d.Status != api.DomainFailed || d.NextCheckAt != nil {
			t.Fatalf("72 h later: %+v", d)
		}
		if _, err := e.domains.CheckSendingDomain(context.Background(), e.acct.ID, "example.com"); mailroom.ErrorCode(err) != mailroom.ECodeDomainNotVerified {
			t.Fatalf("a failed domain may not send: %v", err)
		}
		wantEvents(t, e, mailroom.EventDomainFailed, mailroom.EventDomainTemporaryFailure, mailroom.EventDomainVerified)

		r = e.domainCall(t, "DELETE", "/v1/domains/example.com", e.admin, nil)
		if r.Status != 204 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		wantError(t, e.domainCall(t, "GET", "/v1/domains/example.com", e.admin, nil), 404, mailroom.ECodeNotFound)
	})
}

// wantEvents checks the account's events, newest first.
func wantEvents(t *testing.T, e *env, types ...string) {
	t.Helper()
	events, _, err := e.store.ListEvents(context.Background(), e.acct.ID, mailroom.EventFilter{}, mailroom.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range events {
		got = append(got, ev.Type)
	}
	if strings.Join(got, ",") != strings.Join(types, ",") {
		t.Fatalf("events %v, want %v", got, types)
	}
}

func TestDomainRecordProblems(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	d := decodeDomain(e.domainCall(t, "POST", "/v1/domains", e.admin, map[string]string{"name": "example.org"}))
	dkim := record(d, api.PurposeDKIM)
	e.publish(d)

	t.Run("a wrong DKIM key shows what was found", func(t *testing.T) {
		wrong := "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwrong"
		e.dns.SetTXT(dkim.Name, wrong)
		got := record(decodeDomain(e.domainCall(t, "POST", "/v1/domains/example.org/verify", e.admin, nil)), api.PurposeDKIM)
		if got.Status != api.RecordFailed || len(got.Found) != 1 || got.Found[0] != wrong || got.Problem == "" {
			t.Fatalf("dkim record %+v", got)
		}
	})

	t.Run("a DKIM value split into 255-byte strings verifies", func(t *testing.T) {
		v := dkim.Value
		var parts []string
		for len(v) > 255 {
			parts, v = append(parts, v[:255]), v[255:]
		}
		e.dns.SetTXTStrings(dkim.Name, append(parts, v)...)
		got := decodeDomain(e.domainCall(t, "POST", "/v1/domains/example.org/verify", e.admin, nil))
		if got.Status != api.DomainVerified {
			t.Fatalf("split value: %+v", got)
		}
	})

	t.Run("a SERVFAIL leaves the record as it was and says why", func(t *testing.T) {
		e.dns.Fail(dkim.Name, mdns.RcodeServerFailure)
		got := decodeDomain(e.domainCall(t, "POST", "/v1/domains/example.org/verify", e.admin, nil))
		rec := record(got, api.PurposeDKIM)
		if got.Status != api.DomainVerified || rec.Status != api.RecordVerified || rec.Problem == "" {
			t.Fatalf("after SERVFAIL: domain %s, record %+v", got.Status, rec)
		}
	})

	t.Run("a key without the domains scope is refused", func(t *testing.T) {
		k := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeSend})
		wantError(t, e.domainCall(t, "GET", "/v1/domains", k, nil), 403, mailroom.ECodeInsufficientScope)
	})
}

func TestDomainNames(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	for _, bad := range []string{"", "com", "co.uk", "-bad.com", "a..b.com", strings.Repeat("x", 64) + ".com", "exa mple.com", "user@example.com"} {
		r := e.domainCall(t, "POST", "/v1/domains", e.admin, map[string]string{"name": bad})
		wantError(t, r, 400, mailroom.ECodeValidation)
		if !strings.Contains(string(r.Body), `"field":"name"`) {
			t.Fatalf("%q: details should name the field: %s", bad, r.Body)
		}
	}
	r := e.domainCall(t, "POST", "/v1/domains", e.admin, map[string]string{"name": "bücher.example"})
	if r.Status != 201 || r.Str("name") != "xn--bcher-kva.example" {
		t.Fatalf("IDN: %d %s", r.Status, r.Body)
	}
	if r := e.domainCall(t, "GET", "/v1/domains/bücher.example", e.admin, nil); r.Status != 200 {
		t.Fatalf("get by U-label: %d %s", r.Status, r.Body)
	}
}

// The DKIM private key is stored sealed: the database file does not hold it.
func TestDKIMKeyEncryptedAtRest(t *testing.T) {
	dir := t.TempDir()
	store, err := sqlite.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	e := newEnvWithStore(t, store)
	e.domainCall(t, "POST", "/v1/domains", e.admin, map[string]string{"name": "example.net"})
	d, err := store.Domain(context.Background(), e.acct.ID, "example.net")
	if err != nil {
		t.Fatal(err)
	}
	dkim, err := e.domains.DKIMKey(d)
	if err != nil {
		t.Fatal(err)
	}
	der := dkim.PrivateKeyPKCS8
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := x509.MarshalPKIXPublicKey(key.(crypto.Signer).Public())
	if base64.StdEncoding.EncodeToString(pub) != d.DKIMPublicKey {
		t.Fatal("the private key does not match the published public key")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "mailroom.db*"))
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		if bytes.Contains(raw, der[len(der)-64:]) || bytes.Contains(raw, []byte(base64.StdEncoding.EncodeToString(der)[100:160])) {
			t.Fatalf("%s holds the private key in the clear", f)
		}
	}
}
