package receiving_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/receiving"
	"github.com/mailroom/mailroom/storetest"
)

// receivingDomain makes name a verified receiving domain of acct, its MX
// verified.
func receivingDomain(t *testing.T, s mailroom.Store, acct *mailroom.Account, name string) {
	t.Helper()
	d := storetest.NewDomain(acct, name, time.Now())
	d.Status, d.Receiving = mailroom.DomainVerified, true
	p := 10
	d.Records = append(d.Records, mailroom.DNSRecord{Purpose: mailroom.PurposeReceiving, Type: "MX", Name: name,
		Value: "mx.mailroom.test", Priority: &p, Required: true, Status: mailroom.RecordVerified})
	if err := s.CreateDomain(context.Background(), d, mailroom.DefaultMaxDomains); err != nil {
		t.Fatal(err)
	}
}

// One transaction for two accounts' receiving domains is stored once for
// each, with the recipients at its own domains and an email.received
// event carrying the verdicts; what is read back is what arrived, below
// the service's fields.
func TestReceiveStoresOncePerAccountWithEvent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		s := e.Open(t)
		acme, globex := storetest.NewAccount(t, s, "acme"), storetest.NewAccount(t, s, "globex")
		receivingDomain(t, s, acme, "in.acme.example")
		receivingDomain(t, s, globex, "in.globex.example")
		srv := dnstest.Start(t)
		srv.SetTXT("sender.example", "v=spf1 ip4:192.0.2.10 -all")
		rc := &receiving.Receiver{Store: s, Resolver: &dns.Resolver{Server: srv.Addr(), Timeout: 2 * time.Second}, Hostname: "mx.mailroom.test"}

		ctx := context.Background()
		for _, addr := range []string{"a+tag@in.acme.example", "x@IN.GLOBEX.example"} {
			if ok, err := rc.Accepts(ctx, addr); !ok || err != nil {
				t.Fatalf("Accepts(%s) = %v, %v", addr, ok, err)
			}
		}
		if ok, _ := rc.Accepts(ctx, "a@other.example"); ok {
			t.Fatal("Accepts took a domain nobody receives for")
		}
		data := []byte("From: Bob <bob@sender.example>\r\nTo: a+tag@in.acme.example\r\nCc: x@in.globex.example\r\nSubject: Invoice\r\nMessage-ID: <i1@sender.example>\r\n" +
			"Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nSee attached.\r\n" +
			"--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"a.bin\"\r\n\r\n\x00\x01binary\r\n--b--\r\n")
		in := mailroom.InboundMessage{RemoteIP: "192.0.2.10:5000", Helo: "mx.sender.example", MailFrom: "bob@sender.example",
			Recipients: []string{"a+tag@in.acme.example", "b@in.acme.example", "x@IN.GLOBEX.example"}, Data: data, ReceivedAt: time.Now()}
		if err := rc.Receive(ctx, in); err != nil {
			t.Fatal(err)
		}
		for acct, rcpts := range map[*mailroom.Account]string{acme: "a+tag@in.acme.example,b@in.acme.example", globex: "x@IN.GLOBEX.example"} {
			list, _, err := s.ListReceived(ctx, acct.ID, mailroom.ReceivedFilter{}, mailroom.Page{Limit: 10})
			if err != nil || len(list) != 1 {
				t.Fatalf("%s: %d received, %v; want 1", acct.Name, len(list), err)
			}
			m, err := s.Received(ctx, acct.ID, list[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(m.Recipients, ",") != rcpts || m.Subject != "Invoice" || m.From != "bob@sender.example" ||
				strings.TrimSpace(m.Text) != "See attached." || m.Authentication.SPF != mailroom.AuthPass || m.Authentication.DMARC != mailroom.AuthNone {
				t.Errorf("%s: stored %+v", acct.Name, m)
			}
			raw, err := s.ReceivedRaw(ctx, acct.ID, m.ID)
			if err != nil || !bytes.HasPrefix(raw, []byte("Authentication-Results: mx.mailroom.test;")) || !bytes.HasSuffix(raw, data) {
				t.Errorf("%s: raw %q, %v", acct.Name, raw, err)
			}
			if len(m.Attachments) != 1 {
				t.Fatalf("%s: attachments %+v", acct.Name, m.Attachments)
			}
			att, err := s.ReceivedAttachment(ctx, acct.ID, m.ID, m.Attachments[0].ID)
			if err != nil || !bytes.Equal(att.Content, []byte("\x00\x01binary")) || att.Filename != "a.bin" {
				t.Errorf("%s: attachment %+v, %v", acct.Name, att, err)
			}
			evs, _, err := s.ListEvents(ctx, acct.ID, mailroom.EventFilter{Type: mailroom.EventEmailReceived}, mailroom.Page{Limit: 10})
			if err != nil || len(evs) != 1 {
				t.Fatalf("%s: %d email.received events, %v", acct.Name, len(evs), err)
			}
			var data mailroom.ReceivedEventData
			if err := json.Unmarshal(evs[0].Data, &data); err != nil || data.ReceivedID != m.ID || data.Authentication.SPF != "pass" ||
				len(data.Attachments) != 1 || data.Attachments[0].Size != 8 {
				t.Errorf("%s: event data %s, %v", acct.Name, evs[0].Data, err)
			}
		}
	})
}
