package resend

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func TestToDomain(t *testing.T) {
	created := time.Date(2026, 3, 28, 17, 12, 2, 59593000, time.FixedZone("CET", 3600))
	d := &mailroom.Domain{ID: "dom_01", Name: "shop.example", Status: mailroom.DomainPending, CreatedAt: created,
		DKIMSelector: "mr1", DKIMPublicKey: "MIIB", ReturnPathDomain: "bounces.shop.example"}
	d.Records = mailroom.BuildDomainRecords(d, mailroom.DefaultRecordSettings("mx.mailroom.test"))

	got, err := json.Marshal(ToCreatedDomain(d))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"object":"domain","id":"dom_01","name":"shop.example","status":"not_started","region":"default","records":[` +
		`{"record":"DKIM","name":"mr1._domainkey","type":"TXT","ttl":"Auto","status":"not_started","value":"v=DKIM1; k=rsa; p=MIIB"},` +
		`{"record":"SPF","name":"bounces","type":"TXT","ttl":"Auto","status":"not_started","value":"v=spf1 a:mx.mailroom.test -all"},` +
		`{"record":"SPF","name":"bounces","type":"MX","ttl":"Auto","status":"not_started","value":"mx.mailroom.test","priority":10},` +
		`{"record":"DMARC","name":"_dmarc","type":"TXT","ttl":"Auto","status":"not_started","value":"v=DMARC1; p=none;"}],` +
		`"created_at":"2026-03-28T16:12:02.059593+00:00","capabilities":{"sending":"disabled","receiving":"disabled"},` +
		`"createdAt":"2026-03-28T16:12:02.059593+00:00"}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}

	// Once checked, the states are Mailroom's, which are Resend's words.
	checked := created.Add(time.Minute)
	d.LastCheckedAt, d.Status, d.IPPool = &checked, mailroom.DomainTemporaryFailure, "eu"
	d.Records[0].Status, d.Records[1].Status = mailroom.RecordVerified, mailroom.RecordFailed
	r := ToDomain(d)
	if r.Status != "temporary_failure" || r.Region != "eu" || r.Records[0].Status != "verified" ||
		r.Records[1].Status != "failed" || r.Records[2].Status != "pending" || r.Capabilities.Sending != "enabled" {
		t.Fatalf("checked domain: %+v", r)
	}
}

func TestRelativeName(t *testing.T) {
	for name, want := range map[string]string{
		"bounces.shop.example":  "bounces",
		"shop.example":          "@",
		"bounces.elsewhere.net": "bounces.elsewhere.net",
		"xshop.example":         "xshop.example",
	} {
		if got := relativeName(name, "shop.example"); got != want {
			t.Errorf("relativeName(%q) = %q, want %q", name, got, want)
		}
	}
}

// open_tracking and click_tracking set the domain's openTracking and
// clickTracking as PATCH /v1/domains/{domain} does: true and false each
// set, null leaves.
func TestUpdateDomainRequest(t *testing.T) {
	yes, no := true, false
	u, err := UpdateDomainRequest{TLS: "enforced", OpenTracking: &no, ClickTracking: &no}.Update()
	if err != nil || u.TLS == nil || *u.TLS != mailroom.TLSEnforced || u.IPPool != nil ||
		u.OpenTracking == nil || *u.OpenTracking || u.ClickTracking == nil || *u.ClickTracking {
		t.Fatalf("tls enforced, tracking off: %+v %v", u, err)
	}
	if u, err := (UpdateDomainRequest{}).Update(); err != nil || !u.Empty() {
		t.Fatalf("empty: %+v %v", u, err)
	}
	u, err = UpdateDomainRequest{OpenTracking: &yes}.Update()
	if err != nil || u.OpenTracking == nil || !*u.OpenTracking || u.ClickTracking != nil || u.TLS != nil {
		t.Fatalf("open tracking on: %+v %v", u, err)
	}
	u, err = CreateDomainRequest{Name: "shop.example", ClickTracking: &yes}.Update()
	if err != nil || u.ClickTracking == nil || !*u.ClickTracking || u.OpenTracking != nil {
		t.Fatalf("a create with click tracking: %+v %v", u, err)
	}
}
