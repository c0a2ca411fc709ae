package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/resend/resend-go/v3"

	"github.com/mailroom/mailroom/poll"
)

// resendGoList: Emails.ListWithOptions pages newest first with limit and
// the after cursor until has_more is false, each email once; before goes
// back a page.
func resendGoList(t *testing.T, e *resendEnv) {
	c, _ := e.goSDK(t, e.key)
	ctx := context.Background()
	var sentIDs []string
	for i := range 5 {
		s, err := c.Emails.Send(&resend.SendEmailRequest{From: "orders@shop.example", To: []string{"lister@example.net"},
			Subject: fmt.Sprintf("List 3001 #%d", i), Text: "Listed."})
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		sentIDs = append(sentIDs, s.Id)
	}

	limit := 2
	first, err := c.Emails.ListWithOptions(ctx, &resend.ListOptions{Limit: &limit})
	if err != nil || first.Object != "list" || len(first.Data) != 2 || !first.HasMore {
		t.Fatalf("the first page of 2: %v %+v", err, first)
	}
	// The newest first: the last sent is the first listed.
	if first.Data[0].Id != sentIDs[4] || first.Data[1].Id != sentIDs[3] {
		t.Errorf("the first page is %s, %s; want the newest two, %s and %s", first.Data[0].Id, first.Data[1].Id, sentIDs[4], sentIDs[3])
	}
	var all []string
	pages := []resend.ListEmailsResponse{first}
	page := first
	for {
		for _, m := range page.Data {
			all = append(all, m.Id)
		}
		if !page.HasMore {
			break
		}
		if len(pages) > 100 {
			t.Fatal("more than 100 pages of 2")
		}
		after := page.Data[len(page.Data)-1].Id
		page, err = c.Emails.ListWithOptions(ctx, &resend.ListOptions{Limit: &limit, After: &after})
		if err != nil {
			t.Fatalf("after %s: %v", after, err)
		}
		pages = append(pages, page)
	}
	for _, id := range sentIDs {
		if n := countOf(all, id); n != 1 {
			t.Errorf("email %s is listed %d times while paging, want once", id, n)
		}
	}
	if len(slices.Compact(slices.Clone(all))) != len(all) {
		t.Errorf("paging listed an email twice: %v", all)
	}

	// before the second page's first email is the first page again.
	before := pages[1].Data[0].Id
	back, err := c.Emails.ListWithOptions(ctx, &resend.ListOptions{Limit: &limit, Before: &before})
	if err != nil || len(back.Data) != 2 || back.Data[0].Id != first.Data[0].Id || back.Data[1].Id != first.Data[1].Id {
		t.Errorf("before %s: %v %+v, want the first page %s, %s", before, err, back, first.Data[0].Id, first.Data[1].Id)
	}
}

func countOf(ids []string, id string) int {
	n := 0
	for _, x := range ids {
		if x == id {
			n++
		}
	}
	return n
}

// resendGoSchedule: scheduled_at in Resend's natural language ("in 1
// hour"), Emails.Update to another time (ISO 8601) and Emails.Cancel,
// each shown by Emails.Get's last_event and the native log; an email
// rescheduled to now is delivered, a canceled one never.
func resendGoSchedule(t *testing.T, e *resendEnv) {
	c, log := e.goSDK(t, e.key)
	send := func(subject, to string) string {
		t.Helper()
		s, err := c.Emails.Send(&resend.SendEmailRequest{From: "orders@shop.example", To: []string{to},
			Subject: subject, Text: "Later.", ScheduledAt: "in 1 hour"})
		if err != nil {
			t.Fatalf("send %q scheduled in 1 hour: %v", subject, err)
		}
		return s.Id
	}
	lastEvent := func(id string) string {
		t.Helper()
		got, err := c.Emails.Get(id)
		if err != nil {
			t.Fatalf("Emails.Get %s: %v", id, err)
		}
		return got.LastEvent
	}

	later := send("Scheduled 4001", "later@example.net")
	if ev := lastEvent(later); ev != "scheduled" {
		t.Errorf("a scheduled email's last_event is %q, want scheduled", ev)
	}
	v1 := e.v1Message(t, later)
	if at, _ := time.Parse(time.RFC3339, fmt.Sprint(v1["scheduledAt"])); at.Before(time.Now().Add(55*time.Minute)) || at.After(time.Now().Add(65*time.Minute)) {
		t.Errorf("\"in 1 hour\" is scheduled at %v", v1["scheduledAt"])
	}

	// Update to another time, in ISO 8601.
	when := time.Now().Add(3 * time.Hour).UTC().Truncate(time.Second)
	up, err := c.Emails.Update(&resend.UpdateEmailRequest{Id: later, ScheduledAt: when.Format(time.RFC3339)})
	if err != nil || up.Id != later || up.Object != "email" {
		t.Fatalf("Emails.Update: %v %+v", err, up)
	}
	if at, _ := time.Parse(time.RFC3339, fmt.Sprint(e.v1Message(t, later)["scheduledAt"])); !at.Equal(when) {
		t.Errorf("rescheduled to %v, the log says %v", when, e.v1Message(t, later)["scheduledAt"])
	}

	// Cancel: canceled, and never sent.
	cancel, err := c.Emails.Cancel(later)
	if err != nil || cancel.Id != later || cancel.Object != "email" {
		t.Fatalf("Emails.Cancel: %v %+v", err, cancel)
	}
	if ev := lastEvent(later); ev != "canceled" {
		t.Errorf("a canceled email's last_event is %q, want canceled", ev)
	}
	if st := e.v1Message(t, later)["status"]; st != "canceled" {
		t.Errorf("the log's status of a canceled email is %v", st)
	}
	// A canceled email cannot be rescheduled: Resend's error, in its shape.
	_, err = c.Emails.Update(&resend.UpdateEmailRequest{Id: later, ScheduledAt: "in 2 hours"})
	if err == nil {
		t.Error("rescheduling a canceled email succeeded")
	} else if a := log.last(t); a.Status < 400 || a.Status >= 500 {
		t.Errorf("rescheduling a canceled email: %d %s, want a 4xx", a.Status, a.Body)
	}

	// Rescheduled to a moment from now: delivered then.
	soon := send("Scheduled 4002", "soon@example.net")
	at := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
	if _, err := c.Emails.Update(&resend.UpdateEmailRequest{Id: soon, ScheduledAt: at}); err != nil {
		t.Fatalf("Emails.Update to %s: %v", at, err)
	}
	e.waitReceived(t, "Scheduled 4002", 1)
	if !poll.Within(10*time.Second, func() bool { return lastEvent(soon) == "delivered" }) {
		t.Errorf("the rescheduled email's last_event is %q, want delivered", lastEvent(soon))
	}
	if n := len(e.receivedWithSubject("Scheduled 4001")); n != 0 {
		t.Errorf("the canceled email arrived %d times", n)
	}
}
