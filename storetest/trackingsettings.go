package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// Engagement tracking's settings (docs/api.md "Engagement tracking"): a
// domain's openTracking and clickTracking, off unless set, read by every
// reading of the domain and by DomainStatus (what the send path resolves a
// message's tracking from); each change audited as domain.updated naming
// the settings changed, a change to what it is audited not at all. A
// message keeps what it was tracked for at accept, and every reading of it
// that delivery or the log makes says so.

func init() {
	extraSuites = append(extraSuites,
		suite{"DomainTrackingSettings", testDomainTrackingSettings},
		suite{"MessageTracking", testMessageTracking},
	)
}

func testDomainTrackingSettings(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	far := time.Now().Add(20 * time.Hour)
	plain := NewDomain(acme, "plain.example", far)
	mustDo(t, s.CreateDomain(ctx, plain, mailroom.DefaultMaxDomains))
	// Created with its settings (domain.Service.AddWithSettings): kept.
	opens := NewDomain(acme, "opens.example", far)
	opens.Tracking = mailroom.Tracking{Opens: true}
	mustDo(t, s.CreateDomain(ctx, opens, mailroom.DefaultMaxDomains))

	want := map[string]mailroom.Tracking{"plain.example": {}, "opens.example": {Opens: true}}
	check := func(when string) {
		t.Helper()
		list, _ := Try2(s.ListDomains(ctx, acme.ID, mailroom.Page{Limit: 10})).Must(t)
		if len(list) != len(want) {
			t.Fatalf("%s: %d domains listed", when, len(list))
		}
		for _, d := range list {
			byName := Try(s.Domain(ctx, acme.ID, d.Name)).Must(t)
			byID := Try(s.DomainByID(ctx, acme.ID, d.ID)).Must(t)
			_, status, err := s.DomainStatus(ctx, acme.ID, d.Name)
			if err != nil {
				t.Fatal(err)
			}
			for how, got := range map[string]mailroom.Tracking{"listed": d.Tracking, "by name": byName.Tracking,
				"by id": byID.Tracking, "DomainStatus": status} {
				if got != want[d.Name] {
					t.Errorf("%s: %s %s tracks %+v, want %+v", when, how, d.Name, got, want[d.Name])
				}
			}
		}
	}
	check("created")
	created := auditEntries(t, s, acme, mailroom.AuditFilter{Action: mailroom.AuditDomainCreated})
	for _, e := range created {
		c := changesJSON(t, mailroom.AuditChanges{"openTracking": e.Changes["openTracking"], "clickTracking": e.Changes["clickTracking"]})
		wantC := `{"clickTracking":[null,false],"openTracking":[null,false]}`
		if e.Target.ID == opens.ID {
			wantC = `{"clickTracking":[null,false],"openTracking":[null,true]}`
		}
		if c != wantC {
			t.Errorf("domain.created of %s records %s, want %s", e.Target.ID, c, wantC)
		}
	}

	on, off := true, false
	got := Try(s.UpdateDomain(ctx, acme.ID, "plain.example", mailroom.DomainUpdate{ClickTracking: &on})).Must(t)
	want["plain.example"] = mailroom.Tracking{Clicks: true}
	if got.Tracking != want["plain.example"] {
		t.Fatalf("update returned %+v", got.Tracking)
	}
	check("click tracking turned on")
	// The same again, and a field set to what it is: nothing changes,
	// nothing is audited.
	Try(s.UpdateDomain(ctx, acme.ID, "plain.example", mailroom.DomainUpdate{ClickTracking: &on, OpenTracking: &off})).Must(t)
	updates := auditEntries(t, s, acme, mailroom.AuditFilter{Action: mailroom.AuditDomainUpdated})
	if len(updates) != 1 || changesJSON(t, updates[0].Changes) != `{"clickTracking":[false,true]}` {
		t.Fatalf("audit after turning click tracking on twice: %d entries %v", len(updates), updates)
	}
	// Both at once, and the other settings left as they are.
	tls := mailroom.TLSEnforced
	Try(s.UpdateDomain(ctx, acme.ID, "opens.example", mailroom.DomainUpdate{OpenTracking: &off, ClickTracking: &on, TLS: &tls})).Must(t)
	want["opens.example"] = mailroom.Tracking{Clicks: true}
	check("both changed")
	updates = auditEntries(t, s, acme, mailroom.AuditFilter{Action: mailroom.AuditDomainUpdated})
	if len(updates) != 2 || changesJSON(t, updates[1].Changes) != `{"clickTracking":[false,true],"openTracking":[true,false],"tls":["opportunistic","enforced"]}` {
		t.Fatalf("audit after changing both: %v", updates)
	}
	// Only the field given changes.
	pool := "eu"
	Try(s.UpdateDomain(ctx, acme.ID, "opens.example", mailroom.DomainUpdate{IPPool: &pool})).Must(t)
	check("another setting changed")
}

func testMessageTracking(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	both := NewMessage(acme, t0, "a@x.example")
	both.Tracking = mailroom.Tracking{Opens: true, Clicks: true}
	both.Category = mailroom.CategoryMarketing
	mustAccept(t, s, both)
	// A batch: one tracked for clicks, one for nothing.
	clicks := NewMessage(acme, t0.Add(time.Millisecond), "b@x.example")
	clicks.Tracking = mailroom.Tracking{Clicks: true}
	none := NewMessage(acme, t0.Add(2*time.Millisecond), "c@x.example")
	Try(s.AcceptMessages(ctx, []*mailroom.Message{clicks, none})).Must(t)
	// Scheduled: its summary is read again when it is canceled.
	scheduled := NewMessage(acme, t0.Add(3*time.Millisecond), "d@x.example")
	scheduled.Tracking = mailroom.Tracking{Opens: true}
	scheduleMessage(scheduled, t0.Add(time.Hour))
	mustAccept(t, s, scheduled)
	want := map[string]mailroom.Tracking{both.ID: both.Tracking, clicks.ID: clicks.Tracking, none.ID: {}, scheduled.ID: scheduled.Tracking}

	for id, w := range want {
		m, _ := messageOf(t, s, acme.ID, id)
		if m.Tracking != w {
			t.Errorf("the log's message %s tracks %+v, want %+v", id, m.Tracking, w)
		}
		if m.Links != nil {
			t.Errorf("message %s has links %v before any were saved", id, m.Links)
		}
		if mc := Try(s.MessageContent(ctx, acme.ID, id)).Must(t); mc.Tracking != w {
			t.Errorf("message content %s tracks %+v, want %+v", id, mc.Tracking, w)
		}
		if md, _, err := s.MessageForDelivery(ctx, id); err != nil || md.Tracking != w {
			t.Errorf("message for delivery %s: %v, tracks %+v, want %+v", id, err, md, w)
		}
	}
	for _, m := range allMessages(t, s, acme.ID, mailroom.MessageFilter{}) {
		if m.Tracking != want[m.ID] {
			t.Errorf("listed message %s tracks %+v, want %+v", m.ID, m.Tracking, want[m.ID])
		}
		if len(m.Recipients) != 1 || m.Recipients[0].Opens != 0 || m.Recipients[0].Clicks != 0 {
			t.Errorf("listed message %s recipients %+v", m.ID, m.Recipients)
		}
	}
	// A claim's summaries, which delivery composes from.
	claimed := Try(claim(s, "node_a", t0.Add(time.Second), 10)).Must(t)
	if len(claimed) != 3 {
		t.Fatalf("%d recipients claimed, want the 3 not scheduled", len(claimed))
	}
	for _, q := range claimed {
		if q.Message.Tracking != want[q.MessageID] {
			t.Errorf("claimed %s tracks %+v, want %+v", q.MessageID, q.Message.Tracking, want[q.MessageID])
		}
		wantCat := mailroom.CategoryTransactional
		if q.MessageID == both.ID {
			wantCat = mailroom.CategoryMarketing
		}
		if q.Message.Category != wantCat {
			t.Errorf("claimed %s is %q, want %q", q.MessageID, q.Message.Category, wantCat)
		}
	}
}

// mustAccept accepts m.
func mustAccept(t *testing.T, s mailroom.Store, m *mailroom.Message) {
	t.Helper()
	if _, err := s.AcceptMessage(context.Background(), m); err != nil {
		t.Fatalf("accept %s: %v", m.ID, err)
	}
}
