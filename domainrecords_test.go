package mailroom_test

import (
	"reflect"
	"testing"

	"github.com/mailroom/mailroom"
)

func TestBuildDomainRecords(t *testing.T) {
	d := &mailroom.Domain{
		Name:          "example.com",
		DKIMSelector:  "mr2611a7f3c2",
		DKIMPublicKey: "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA",
	}
	got := mailroom.BuildDomainRecords(d, mailroom.DefaultRecordSettings("Mail.Example.NET."))
	ten := 10
	want := []mailroom.DNSRecord{
		{Purpose: mailroom.PurposeDKIM, Type: "TXT", Name: "mr2611a7f3c2._domainkey.example.com",
			Value: "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA", Required: true, Status: mailroom.RecordPending},
		{Purpose: mailroom.PurposeSPF, Type: "TXT", Name: "bounces.example.com",
			Value: "v=spf1 a:mail.example.net -all", Required: true, Status: mailroom.RecordPending},
		{Purpose: mailroom.PurposeReturnPath, Type: "MX", Name: "bounces.example.com",
			Value: "mail.example.net", Priority: &ten, Required: true, Status: mailroom.RecordPending},
		{Purpose: mailroom.PurposeDMARC, Type: "TXT", Name: "_dmarc.example.com",
			Value: "v=DMARC1; p=none;", Required: false, Status: mailroom.RecordPending},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("records:\n got %+v\nwant %+v", got, want)
	}
}

func TestBuildDomainRecordsOperatorSettings(t *testing.T) {
	d := &mailroom.Domain{Name: "shop.example.org", DKIMSelector: "mr2601000000", DKIMPublicKey: "AAAA"}
	s := mailroom.RecordSettings{
		SPFInclude:      "ip4:192.0.2.0/24 include:_spf.mail.example.net",
		MXHost:          "bounce.example.net",
		ReturnPathLabel: "rp",
	}
	recs := mailroom.BuildDomainRecords(d, s)
	byPurpose := map[mailroom.RecordPurpose]mailroom.DNSRecord{}
	for _, r := range recs {
		byPurpose[r.Purpose] = r
	}
	if r := byPurpose[mailroom.PurposeSPF]; r.Name != "rp.shop.example.org" || r.Value != "v=spf1 ip4:192.0.2.0/24 include:_spf.mail.example.net -all" {
		t.Errorf("SPF record = %s %q", r.Name, r.Value)
	}
	if r := byPurpose[mailroom.PurposeReturnPath]; r.Name != "rp.shop.example.org" || r.Value != "bounce.example.net" {
		t.Errorf("return-path record = %s %q", r.Name, r.Value)
	}

	// A domain that already has its return-path domain keeps it, even if the
	// operator changes the label later.
	d.ReturnPathDomain = "bounces.shop.example.org"
	for _, r := range mailroom.BuildDomainRecords(d, s) {
		if (r.Purpose == mailroom.PurposeSPF || r.Purpose == mailroom.PurposeReturnPath) && r.Name != "bounces.shop.example.org" {
			t.Errorf("%s record at %s, want the domain's return-path domain", r.Purpose, r.Name)
		}
	}
	if got := s.ReturnPathDomain("example.com"); got != "rp.example.com" {
		t.Errorf("ReturnPathDomain = %q", got)
	}
	if got := (mailroom.RecordSettings{}).ReturnPathDomain("example.com"); got != "bounces.example.com" {
		t.Errorf("default ReturnPathDomain = %q", got)
	}
}
