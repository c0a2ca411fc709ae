package mailroom_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// An engagement event keeps the client's network, never its host: a /24
// for IPv4 (an IPv4-mapped IPv6 address too), a /48 for IPv6.
func TestTruncateIP(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.77":          "192.0.2.0",
		"::ffff:203.0.113.9":  "203.0.113.0",
		"2001:db8:abcd:12::7": "2001:db8:abcd::",
		"fe80::1%eth0":        "fe80::",
		"::1":                 "::",
	} {
		if got := mailroom.TruncateIP(netip.MustParseAddr(in)); got != want {
			t.Errorf("TruncateIP(%s) = %q, want %q", in, got, want)
		}
	}
	if got := mailroom.TruncateIP(netip.Addr{}); got != "" {
		t.Errorf("TruncateIP of no address = %q", got)
	}
}

// A send's tracking overrides its domain's field by field; a message with
// no HTML part is tracked for nothing.
func TestResolveTracking(t *testing.T) {
	yes, no := true, false
	both := mailroom.Tracking{Opens: true, Clicks: true}
	for _, c := range []struct {
		domain mailroom.Tracking
		o      *mailroom.TrackingOverride
		html   string
		want   mailroom.Tracking
	}{
		{both, nil, "<p>x</p>", both},
		{both, &mailroom.TrackingOverride{Opens: &no}, "<p>x</p>", mailroom.Tracking{Clicks: true}},
		{mailroom.Tracking{}, &mailroom.TrackingOverride{Clicks: &yes}, "<p>x</p>", mailroom.Tracking{Clicks: true}},
		{both, &mailroom.TrackingOverride{Opens: &no, Clicks: &no}, "<p>x</p>", mailroom.Tracking{}},
		{both, &mailroom.TrackingOverride{Opens: &yes}, "", mailroom.Tracking{}},
	} {
		if got := mailroom.ResolveTracking(c.domain, c.o, c.html); got != c.want {
			t.Errorf("ResolveTracking(%+v, %+v, %q) = %+v, want %+v", c.domain, c.o, c.html, got, c.want)
		}
	}
}

// A click within ClickScanWindow of delivery, or before any delivery was
// recorded, is a scanner's; a later one a reader's.
func TestClickLooksAutomated(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	delivered := &mailroom.Recipient{Status: mailroom.RecipientDelivered, LastAttemptAt: &at}
	for _, c := range []struct {
		r     *mailroom.Recipient
		after time.Duration
		want  bool
	}{
		{delivered, 2 * time.Second, true},
		{delivered, mailroom.ClickScanWindow, false},
		{delivered, time.Hour, false},
		{&mailroom.Recipient{Status: mailroom.RecipientQueued}, time.Hour, true},
		{&mailroom.Recipient{Status: mailroom.RecipientComplained, LastAttemptAt: &at}, time.Minute, false},
	} {
		if got := mailroom.ClickLooksAutomated(c.r, at.Add(c.after)); got != c.want {
			t.Errorf("%s +%v: %v, want %v", c.r.Status, c.after, got, c.want)
		}
	}
}

// The first open writes an event, and so does a reader's first open after
// automated ones; later opens do not. Clicks do up to MaxClickEvents.
func TestEngagementCountsWritesEvent(t *testing.T) {
	open := func(machine bool) *mailroom.EngagementHit {
		return &mailroom.EngagementHit{Type: mailroom.EventEmailOpened, Machine: machine}
	}
	click := &mailroom.EngagementHit{Type: mailroom.EventEmailClicked}
	for _, c := range []struct {
		name   string
		counts mailroom.EngagementCounts
		hit    *mailroom.EngagementHit
		want   bool
	}{
		{"a reader's first open", mailroom.EngagementCounts{Opens: 1, ReaderOpens: 1}, open(false), true},
		{"a machine's first open", mailroom.EngagementCounts{Opens: 1}, open(true), true},
		{"a machine's second open", mailroom.EngagementCounts{Opens: 2}, open(true), false},
		{"a reader's first open after a machine's", mailroom.EngagementCounts{Opens: 3, ReaderOpens: 1}, open(false), true},
		{"a reader's second open", mailroom.EngagementCounts{Opens: 4, ReaderOpens: 2}, open(false), false},
		{"a machine's open after a reader's", mailroom.EngagementCounts{Opens: 2, ReaderOpens: 1}, open(true), false},
		{"the last click with an event", mailroom.EngagementCounts{Clicks: mailroom.MaxClickEvents}, click, true},
		{"a click past them", mailroom.EngagementCounts{Clicks: mailroom.MaxClickEvents + 1}, click, false},
	} {
		if got := c.counts.WritesEvent(c.hit); got != c.want {
			t.Errorf("%s (%+v): writes an event %v, want %v", c.name, c.counts, got, c.want)
		}
	}
}
