package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites,
		suite{"DomainTLS", testDomainTLS},
		suite{"AttemptTLS", testAttemptTLS},
	)
}

// A domain's tls (migration 00019): opportunistic until set; UpdateDomain
// sets the fields given and keeps the others; an unknown domain and
// another account's are not found.
func testDomainTLS(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	for _, acct := range []*mailroom.Account{acme, globex} {
		if err := s.CreateDomain(ctx, NewDomain(acct, "example.com", t0), mailroom.DefaultMaxDomains); err != nil {
			t.Fatal(err)
		}
	}
	if d := Try(s.Domain(ctx, acme.ID, "example.com")).Must(t); d.TLS != mailroom.TLSOpportunistic {
		t.Fatalf("a new domain reads tls %q, want opportunistic", d.TLS)
	}
	enforced, pool := mailroom.TLSEnforced, "bulk"
	d := Try(s.UpdateDomain(ctx, acme.ID, "example.com", mailroom.DomainUpdate{TLS: &enforced, IPPool: &pool})).Must(t)
	if d.TLS != mailroom.TLSEnforced || d.IPPool != "bulk" || d.Name != "example.com" || len(d.Records) != 1 {
		t.Fatalf("UpdateDomain answered %+v", d)
	}
	// Only the tls: the pool stays.
	opportunistic := mailroom.TLSOpportunistic
	if d := Try(s.UpdateDomain(ctx, acme.ID, "example.com", mailroom.DomainUpdate{TLS: &opportunistic})).Must(t); d.TLS != mailroom.TLSOpportunistic || d.IPPool != "bulk" {
		t.Fatalf("tls alone: %q, pool %q", d.TLS, d.IPPool)
	}
	Try(s.UpdateDomain(ctx, acme.ID, "example.com", mailroom.DomainUpdate{TLS: &enforced})).Must(t)
	// Nothing: the domain as it is.
	if d := Try(s.UpdateDomain(ctx, acme.ID, "example.com", mailroom.DomainUpdate{})).Must(t); d.TLS != mailroom.TLSEnforced || d.IPPool != "bulk" {
		t.Fatalf("an empty update answered tls %q, pool %q", d.TLS, d.IPPool)
	}
	if d := Try(s.Domain(ctx, acme.ID, "example.com")).Must(t); d.TLS != mailroom.TLSEnforced {
		t.Fatalf("read back tls %q", d.TLS)
	}
	if list, _, err := s.ListDomains(ctx, acme.ID, mailroom.Page{Limit: 10}); err != nil || len(list) != 1 || list[0].TLS != mailroom.TLSEnforced {
		t.Fatalf("listed %v (%v)", list, err)
	}
	if d := Try(s.Domain(ctx, globex.ID, "example.com")).Must(t); d.TLS != mailroom.TLSOpportunistic {
		t.Fatalf("another account's domain got tls %q", d.TLS)
	}
	if _, err := s.UpdateDomain(ctx, acme.ID, "other.example", mailroom.DomainUpdate{TLS: &enforced}); !mailroom.IsCode(err, mailroom.ECodeNotFound) {
		t.Fatalf("an unknown domain: %v", err)
	}
	// A check keeps it.
	d = Try(s.Domain(ctx, acme.ID, "example.com")).Must(t)
	d.Status = mailroom.DomainVerified
	if err := s.SaveDomainCheck(ctx, d, nil); err != nil {
		t.Fatal(err)
	}
	if d := Try(s.Domain(ctx, acme.ID, "example.com")).Must(t); d.TLS != mailroom.TLSEnforced {
		t.Fatalf("after a check tls is %q", d.TLS)
	}
}

// A message's requireTls is stored with it (alone and in a batch) and
// claimed with its recipients; each attempt's TLS is stored on its
// recipient, replaced by the next attempt's (nil in clear), and its
// email.delivered event reads back with tls, null in clear.
func testAttemptTLS(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	at := time.Now().UTC().Truncate(time.Second)
	strict := NewMessage(acct, at, "a@x.example", "b@x.example")
	strict.RequireTLS = true
	plain := NewMessage(acct, at.Add(time.Millisecond), "c@x.example")
	Try(s.AcceptMessages(ctx, []*mailroom.Message{strict, plain})).Must(t)
	alone := NewMessage(acct, at.Add(2*time.Millisecond), "d@x.example")
	alone.RequireTLS = true
	Try(s.AcceptMessage(ctx, alone)).Must(t)
	for _, m := range []*mailroom.Message{strict, plain, alone} {
		got := readMessage(t, s, acct.ID, m.ID)
		if got.RequireTLS != m.RequireTLS {
			t.Fatalf("message %s reads requireTls %v, want %v", m.ID, got.RequireTLS, m.RequireTLS)
		}
	}

	now := at.Add(time.Minute)
	claimed := Try(s.ClaimDueRecipients(ctx, mailroom.Claim{Node: "node_a", Now: now, Lease: time.Minute, Limit: 10})).Must(t)
	if len(claimed) != 4 {
		t.Fatalf("claimed %d recipients, want 4", len(claimed))
	}
	tls13 := &mailroom.TLSInfo{Version: "TLS1.3", Cipher: "TLS_AES_256_GCM_SHA384", Verified: true, Policy: mailroom.TLSPolicyRequireTLS}
	var attempts []*mailroom.Attempt
	for _, q := range claimed {
		if q.Message.RequireTLS != (q.MessageID != plain.ID) {
			t.Fatalf("claimed %s of %s with RequireTLS %v", q.Address, q.MessageID, q.Message.RequireTLS)
		}
		r := q.Recipient
		r.Attempts, r.LastAttemptAt, r.Status, r.SMTPCode = 1, &now, mailroom.RecipientDelivered, 250
		switch r.Address {
		case "a@x.example", "d@x.example":
			r.TLS = tls13
		case "b@x.example":
			r.Status, r.SMTPCode = mailroom.RecipientDeferred, 451
			r.TLS = &mailroom.TLSInfo{Version: "TLS1.2", Cipher: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", Policy: mailroom.TLSPolicyOpportunistic}
		case "c@x.example":
			r.Unencrypted = true
		}
		typ, a := mailroom.EventEmailDelivered, &mailroom.Attempt{Recipient: &r, Message: q.Message, ClaimToken: q.ClaimToken}
		if r.Status == mailroom.RecipientDeferred {
			next := now.Add(time.Hour)
			typ, r.NextAttemptAt, a.DueAt = mailroom.EventEmailDeferred, &next, &next
		}
		a.Event = mailroom.NewEmailEvent(q.Message, &r, typ, now)
		attempts = append(attempts, a)
	}
	if err := s.RecordAttempts(ctx, attempts); err != nil {
		t.Fatal(err)
	}
	tlsOf := func(m *mailroom.Message, addr string) *mailroom.TLSInfo {
		t.Helper()
		got := readMessage(t, s, acct.ID, m.ID)
		for _, r := range got.Recipients {
			if r.Address == addr {
				return r.TLS
			}
		}
		t.Fatalf("no recipient %s", addr)
		return nil
	}
	if got := tlsOf(strict, "a@x.example"); got == nil || *got != *tls13 {
		t.Fatalf("a's tls reads %+v, want %+v", got, tls13)
	}
	if got := tlsOf(plain, "c@x.example"); got != nil {
		t.Fatalf("c, in clear, reads tls %+v", got)
	}
	// The log's list reads it too.
	list, _, err := s.ListMessages(ctx, acct.ID, mailroom.MessageFilter{}, mailroom.Page{Limit: 10})
	if err != nil || len(list) != 3 {
		t.Fatalf("listed %d (%v)", len(list), err)
	}
	for _, m := range list {
		if m.RequireTLS != (m.ID != plain.ID) {
			t.Fatalf("the list reads %s with requireTls %v", m.ID, m.RequireTLS)
		}
		for _, r := range m.Recipients {
			if (r.TLS == nil) != (r.Address == "c@x.example") {
				t.Fatalf("the list reads %s's tls %+v", r.Address, r.TLS)
			}
		}
	}
	// b's retry runs in clear: its tls is gone.
	later := now.Add(2 * time.Hour)
	again := Try(s.ClaimDueRecipients(ctx, mailroom.Claim{Node: "node_a", Now: later, Lease: time.Minute, Limit: 10})).Must(t)
	if len(again) != 1 || again[0].Address != "b@x.example" {
		t.Fatalf("claimed %d again, want b", len(again))
	}
	r := again[0].Recipient
	r.Attempts, r.Status, r.TLS, r.Unencrypted = 2, mailroom.RecipientDelivered, nil, true
	if err := s.RecordAttempts(ctx, []*mailroom.Attempt{{Recipient: &r, Message: again[0].Message, ClaimToken: again[0].ClaimToken,
		Event: mailroom.NewEmailEvent(again[0].Message, &r, mailroom.EventEmailDelivered, later)}}); err != nil {
		t.Fatal(err)
	}
	if got := tlsOf(strict, "b@x.example"); got != nil {
		t.Fatalf("after a retry in clear b reads tls %+v", got)
	}

	// email.delivered data: the object over TLS, null in clear.
	for _, c := range []struct {
		m    *mailroom.Message
		addr string
		want string
	}{
		{strict, "a@x.example", `"tls":{"version":"TLS1.3","cipher":"TLS_AES_256_GCM_SHA384","verified":true,"policy":"requiretls"}`},
		{plain, "c@x.example", `"tls":null`},
		{strict, "b@x.example", `"tls":null`},
	} {
		_, events, err := s.Message(ctx, acct.ID, c.m.ID)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range events {
			if e.Type == mailroom.EventEmailDelivered && e.Recipient == c.addr {
				found = true
				if !strings.Contains(string(e.Data), c.want) {
					t.Fatalf("%s's email.delivered reads %s, want %s", c.addr, e.Data, c.want)
				}
			}
			if e.Type == mailroom.EventEmailQueued && strings.Contains(string(e.Data), `"tls"`) {
				t.Fatalf("email.queued has a tls: %s", e.Data)
			}
		}
		if !found {
			t.Fatalf("no email.delivered of %s", c.addr)
		}
	}
}

func readMessage(t *testing.T, s mailroom.Store, accountID, id string) *mailroom.Message {
	t.Helper()
	m, _, err := s.Message(context.Background(), accountID, id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
