package dns_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/dns/dnstest"
)

const (
	serviceHost = "mail.example.net"
	serviceIP   = "192.0.2.10"
)

var now = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// keys are made once: RSA-2048 generation is slow.
var keys = sync.OnceValue(func() [2]string {
	var out [2]string
	for i := range out {
		_, _, pub, err := mailroom.NewDKIMKey(now)
		if err != nil {
			panic(err)
		}
		out[i] = pub
	}
	return out
})

// fixture is a domain as the service would create it, a DNS server the
// customer publishes to, and a checker pointed at that server.
type fixture struct {
	srv     *dnstest.Server
	domain  *mailroom.Domain
	checker *dns.Checker
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := dnstest.Start(t)
	srv.SetA(serviceHost, serviceIP)
	d := &mailroom.Domain{
		Name:          "example.com",
		Status:        mailroom.DomainPending,
		DKIMSelector:  "mr2611abcdef",
		DKIMPublicKey: keys()[0],
		CreatedAt:     now,
	}
	d.Records = mailroom.BuildDomainRecords(d, mailroom.DefaultRecordSettings(serviceHost))
	return &fixture{
		srv:    srv,
		domain: d,
		checker: &dns.Checker{
			Resolver:    &dns.Resolver{Server: srv.Addr(), Timeout: 300 * time.Millisecond},
			SendingHost: serviceHost,
			MXHost:      serviceHost,
		},
	}
}

// publish puts the records into DNS exactly as the API showed them, the
// way a customer copies them into a provider's form.
func (f *fixture) publish(purposes ...mailroom.RecordPurpose) {
	for _, r := range f.domain.Records {
		if len(purposes) > 0 && !slices.Contains(purposes, r.Purpose) {
			continue
		}
		switch r.Type {
		case "TXT":
			f.srv.SetTXT(r.Name, r.Value)
		case "MX":
			f.srv.SetMX(r.Name, uint16(*r.Priority), r.Value)
		}
	}
}

func (f *fixture) record(p mailroom.RecordPurpose) mailroom.DNSRecord {
	for _, r := range f.domain.Records {
		if r.Purpose == p {
			return r
		}
	}
	panic("no record " + p)
}

// check runs the checker and stores the records on the domain, as the
// service would, and returns them by purpose.
func (f *fixture) check(t *testing.T) (map[mailroom.RecordPurpose]mailroom.DNSRecord, bool) {
	t.Helper()
	res, err := f.checker.Check(context.Background(), f.domain)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if len(res.Records) != len(f.domain.Records) {
		t.Fatalf("Check returned %d records for %d", len(res.Records), len(f.domain.Records))
	}
	f.domain.Records = res.Records
	out := map[mailroom.RecordPurpose]mailroom.DNSRecord{}
	for _, r := range res.Records {
		out[r.Purpose] = r
	}
	return out, res.Indeterminate
}

func wantStatus(t *testing.T, r mailroom.DNSRecord, status mailroom.RecordStatus, problem string) {
	t.Helper()
	if r.Status != status {
		t.Errorf("%s record: status %s, want %s (problem: %q, found: %q)", r.Purpose, r.Status, status, r.Problem, r.Found)
	}
	if problem == "" && r.Problem != "" {
		t.Errorf("%s record: unexpected problem %q", r.Purpose, r.Problem)
	}
	if !strings.Contains(r.Problem, problem) {
		t.Errorf("%s record: problem %q does not say %q", r.Purpose, r.Problem, problem)
	}
}

func TestCheckPublishedRecordsVerify(t *testing.T) {
	f := newFixture(t)
	f.publish()
	recs, indeterminate := f.check(t)
	if indeterminate {
		t.Error("indeterminate with every record published")
	}
	for _, p := range []mailroom.RecordPurpose{mailroom.PurposeDKIM, mailroom.PurposeSPF, mailroom.PurposeReturnPath, mailroom.PurposeDMARC} {
		wantStatus(t, recs[p], mailroom.RecordVerified, "")
	}
	if got, want := recs[mailroom.PurposeDKIM].Found, []string{f.record(mailroom.PurposeDKIM).Value}; !slices.Equal(got, want) {
		t.Errorf("DKIM found %q, want %q", got, want)
	}
	if got := recs[mailroom.PurposeReturnPath].Found; !slices.Equal(got, []string{"10 mail.example.net."}) {
		t.Errorf("MX found %q", got)
	}
}

func TestCheckNothingPublished(t *testing.T) {
	f := newFixture(t)
	recs, indeterminate := f.check(t)
	if indeterminate {
		t.Error("NXDOMAIN taken for an indeterminate answer")
	}
	wantStatus(t, recs[mailroom.PurposeDKIM], mailroom.RecordFailed, "No TXT record was found at mr2611abcdef._domainkey.example.com")
	wantStatus(t, recs[mailroom.PurposeSPF], mailroom.RecordFailed, "No SPF record (v=spf1 …) was found at bounces.example.com")
	wantStatus(t, recs[mailroom.PurposeReturnPath], mailroom.RecordFailed, "No MX record was found at bounces.example.com; publish an MX record pointing at mail.example.net")
	// DMARC is only recommended: it stays pending, with advice.
	wantStatus(t, recs[mailroom.PurposeDMARC], mailroom.RecordPending, "No DMARC record")
	for _, r := range recs {
		if len(r.Found) != 0 {
			t.Errorf("%s: found %q in an empty zone", r.Purpose, r.Found)
		}
	}
}

func TestCheckWrongDKIMKey(t *testing.T) {
	f := newFixture(t)
	f.publish()
	wrong := mailroom.DKIMRecordValue(keys()[1])
	f.srv.SetTXT(f.record(mailroom.PurposeDKIM).Name, wrong)
	recs, _ := f.check(t)
	dkim := recs[mailroom.PurposeDKIM]
	wantStatus(t, dkim, mailroom.RecordFailed, "The published p= key is not this domain's key")
	if !slices.Equal(dkim.Found, []string{wrong}) {
		t.Errorf("found %q, want the wrong value", dkim.Found)
	}
}

func TestCheckDKIMRecordForms(t *testing.T) {
	key := keys()[0]
	for _, tc := range []struct {
		name    string
		publish func(srv *dnstest.Server, name string)
		status  mailroom.RecordStatus
		problem string
	}{
		{"split into 255-byte strings", func(srv *dnstest.Server, name string) {
			v := mailroom.DKIMRecordValue(key)
			var parts []string
			for len(v) > 255 {
				parts, v = append(parts, v[:255]), v[255:]
			}
			srv.SetTXTStrings(name, append(parts, v)...)
		}, mailroom.RecordVerified, ""},
		{"split mid-tag, other tag order, spaces", func(srv *dnstest.Server, name string) {
			srv.SetTXTStrings(name, "v = DKIM1 ;  p= "+key[:100], " "+key[100:200]+"\t", key[200:]+" ; k=rsa ;")
		}, mailroom.RecordVerified, ""},
		{"without v= and k=, among other TXT", func(srv *dnstest.Server, name string) {
			srv.SetTXT(name, "google-site-verification=abc", "p="+key)
		}, mailroom.RecordVerified, ""},
		{"v= not first", func(srv *dnstest.Server, name string) {
			srv.SetTXT(name, "k=rsa; v=DKIM1; p="+key)
		}, mailroom.RecordFailed, "must begin with v=DKIM1"},
		{"another key type", func(srv *dnstest.Server, name string) {
			srv.SetTXT(name, "v=DKIM1; k=ed25519; p="+key)
		}, mailroom.RecordFailed, "k=ed25519"},
		{"revoked", func(srv *dnstest.Server, name string) {
			srv.SetTXT(name, "v=DKIM1; k=rsa; p=")
		}, mailroom.RecordFailed, "revoked"},
		{"duplicate tag", func(srv *dnstest.Server, name string) {
			srv.SetTXT(name, "v=DKIM1; p="+key+"; p="+key)
		}, mailroom.RecordFailed, "appears twice"},
		{"truncated key", func(srv *dnstest.Server, name string) {
			srv.SetTXT(name, "v=DKIM1; k=rsa; p="+key[:255])
		}, mailroom.RecordFailed, "not this domain's key"},
		{"unrelated TXT only", func(srv *dnstest.Server, name string) {
			srv.SetTXT(name, "hello")
		}, mailroom.RecordFailed, "not a valid DKIM tag list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.publish(f.srv, f.record(mailroom.PurposeDKIM).Name)
			recs, _ := f.check(t)
			wantStatus(t, recs[mailroom.PurposeDKIM], tc.status, tc.problem)
		})
	}
}

func TestCheckSPF(t *testing.T) {
	for _, tc := range []struct {
		name    string
		values  []string
		status  mailroom.RecordStatus
		problem string
	}{
		{"two SPF records", []string{"v=spf1 a:mail.example.net -all", "v=spf1 ip4:192.0.2.10 -all"},
			mailroom.RecordFailed, "2 SPF records were found at bounces.example.com"},
		{"authorises nobody", []string{"v=spf1 -all"},
			mailroom.RecordFailed, "evaluates to fail for 192.0.2.10"},
		{"soft fail", []string{"v=spf1 ~all"},
			mailroom.RecordFailed, "evaluates to softfail for 192.0.2.10"},
		{"neutral", []string{"v=spf1 a:other.example.net"},
			mailroom.RecordFailed, "evaluates to neutral for 192.0.2.10"},
		{"invalid", []string{"v=spf1 bogus:x -all"},
			mailroom.RecordFailed, "invalid (permerror"},
		{"not SPF", []string{"v=spf10 a -all", "hello"},
			mailroom.RecordFailed, "No SPF record"},
		{"by address, beside other TXT", []string{"hello", "V=SPF1 ip4:192.0.2.0/24 -all"},
			mailroom.RecordVerified, ""},
		{"through an include", []string{"v=spf1 include:_spf.example.net -all"},
			mailroom.RecordVerified, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.srv.SetTXT("_spf.example.net", "v=spf1 ip4:192.0.2.10 -all")
			f.srv.SetTXT(f.record(mailroom.PurposeSPF).Name, tc.values...)
			recs, _ := f.check(t)
			wantStatus(t, recs[mailroom.PurposeSPF], tc.status, tc.problem)
			if !slices.Equal(recs[mailroom.PurposeSPF].Found, tc.values) {
				t.Errorf("found %q, want %q", recs[mailroom.PurposeSPF].Found, tc.values)
			}
		})
	}
}

func TestCheckSPFEverySendingIP(t *testing.T) {
	f := newFixture(t)
	f.publish()
	f.checker.SendingIPs = []net.IP{net.ParseIP(serviceIP), net.ParseIP("2001:db8::25")}
	recs, _ := f.check(t)
	wantStatus(t, recs[mailroom.PurposeSPF], mailroom.RecordFailed, "evaluates to fail for 2001:db8::25")

	f.srv.SetAAAA(serviceHost, "2001:db8::25")
	recs, _ = f.check(t)
	wantStatus(t, recs[mailroom.PurposeSPF], mailroom.RecordVerified, "")
}

func TestCheckReturnPathMX(t *testing.T) {
	f := newFixture(t)
	f.publish()
	name := f.record(mailroom.PurposeReturnPath).Name

	f.srv.Remove(name)
	f.srv.SetTXT(name, f.record(mailroom.PurposeSPF).Value)
	f.srv.SetMX(name, 10, "mx.elsewhere.example")
	recs, _ := f.check(t)
	wantStatus(t, recs[mailroom.PurposeReturnPath], mailroom.RecordFailed, "No MX record at bounces.example.com points at mail.example.net")
	if got := recs[mailroom.PurposeReturnPath].Found; !slices.Equal(got, []string{"10 mx.elsewhere.example."}) {
		t.Errorf("found %q", got)
	}

	// A second MX, with the service's host in other case, is fine.
	f.srv.SetMX(name, 20, "MAIL.Example.NET.")
	recs, _ = f.check(t)
	wantStatus(t, recs[mailroom.PurposeReturnPath], mailroom.RecordVerified, "")

	f.srv.Remove(name)
	f.srv.SetMX(name, 0, ".")
	recs, _ = f.check(t)
	wantStatus(t, recs[mailroom.PurposeReturnPath], mailroom.RecordFailed, "null MX")
}

func TestCheckDMARCNeverFails(t *testing.T) {
	f := newFixture(t)
	f.publish()
	name := f.record(mailroom.PurposeDMARC).Name
	f.srv.SetTXT(name, "v=DMARC1; p=reject; rua=mailto:d@example.com", "v=DMARC1; p=none")
	recs, _ := f.check(t)
	wantStatus(t, recs[mailroom.PurposeDMARC], mailroom.RecordPending, "2 DMARC records")

	f.srv.SetTXT(name, "v=DMARC1;p=quarantine")
	recs, _ = f.check(t)
	wantStatus(t, recs[mailroom.PurposeDMARC], mailroom.RecordVerified, "")

	// Verified, then gone: back to pending, not failed.
	f.srv.Remove(name)
	recs, _ = f.check(t)
	wantStatus(t, recs[mailroom.PurposeDMARC], mailroom.RecordPending, "No DMARC record")
}

func TestCheckServfailKeepsPreviousState(t *testing.T) {
	f := newFixture(t)
	f.publish()
	f.check(t)
	dkimName := f.record(mailroom.PurposeDKIM).Name
	f.srv.Fail(dkimName, mdns.RcodeServerFailure)
	f.srv.Fail("_dmarc.example.com", mdns.RcodeRefused)

	recs, indeterminate := f.check(t)
	if !indeterminate {
		t.Error("SERVFAIL not reported as indeterminate")
	}
	wantStatus(t, recs[mailroom.PurposeDKIM], mailroom.RecordVerified, "SERVFAIL")
	wantStatus(t, recs[mailroom.PurposeDKIM], mailroom.RecordVerified, "keeps its previous state")
	wantStatus(t, recs[mailroom.PurposeDMARC], mailroom.RecordVerified, "REFUSED")
	wantStatus(t, recs[mailroom.PurposeSPF], mailroom.RecordVerified, "")
	// What was found before is still shown.
	if len(recs[mailroom.PurposeDKIM].Found) != 1 {
		t.Errorf("found %q, want the value of the last complete check", recs[mailroom.PurposeDKIM].Found)
	}

	// A record never verified stays pending.
	g := newFixture(t)
	g.srv.Fail(dkimName, mdns.RcodeServerFailure)
	recs, _ = g.check(t)
	wantStatus(t, recs[mailroom.PurposeDKIM], mailroom.RecordPending, "SERVFAIL")
}

func TestCheckTimeoutKeepsPreviousState(t *testing.T) {
	f := newFixture(t)
	f.publish()
	f.check(t)
	f.srv.Drop("bounces.example.com")

	recs, indeterminate := f.check(t)
	if !indeterminate {
		t.Error("timeout not reported as indeterminate")
	}
	wantStatus(t, recs[mailroom.PurposeSPF], mailroom.RecordVerified, "DNS lookup of bounces.example.com timed out; the record keeps its previous state")
	wantStatus(t, recs[mailroom.PurposeReturnPath], mailroom.RecordVerified, "timed out")
	wantStatus(t, recs[mailroom.PurposeDKIM], mailroom.RecordVerified, "")

	// A temporary failure inside SPF evaluation (the sending host's
	// address) is indeterminate too.
	f.srv.Remove("bounces.example.com")
	f.publish(mailroom.PurposeSPF, mailroom.PurposeReturnPath)
	f.srv.Drop(serviceHost)
	recs, indeterminate = f.check(t)
	if !indeterminate {
		t.Error("timeout during SPF evaluation not reported as indeterminate")
	}
	wantStatus(t, recs[mailroom.PurposeSPF], mailroom.RecordVerified, "timed out")
	wantStatus(t, recs[mailroom.PurposeReturnPath], mailroom.RecordVerified, "")
}

func TestCheckNeedsSendingAddresses(t *testing.T) {
	f := newFixture(t)
	f.checker.SendingHost = ""
	if _, err := f.checker.Check(context.Background(), f.domain); err == nil {
		t.Error("Check without SendingIPs or SendingHost succeeded")
	}
}

func TestCheckDoesNotModifyDomain(t *testing.T) {
	f := newFixture(t)
	f.publish()
	before := slices.Clone(f.domain.Records)
	if _, err := f.checker.Check(context.Background(), f.domain); err != nil {
		t.Fatal(err)
	}
	for i := range before {
		if f.domain.Records[i].Status != before[i].Status || f.domain.Records[i].Found != nil {
			t.Fatalf("Check changed the domain's record %d", i)
		}
	}
}
