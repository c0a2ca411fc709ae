package tracking_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/tracking"
)

const browser = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"

// testClock is a settable clock.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// tracked is a message of one account to ann@example.net, delivered at
// delivered, with the service over a real store.
type tracked struct {
	store     mailroom.Store
	acct      *mailroom.Account
	messageID string
	svc       *tracking.Service
	tokens    *tracking.Tokens
	clock     *testClock
}

func newTracked(t *testing.T, e storetest.Engine, limits tracking.Limits) *tracked {
	t.Helper()
	ctx := context.Background()
	s := e.Open(t)
	acct := storetest.NewAccount(t, s, "acme")
	sent := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
	m := storetest.NewMessage(acct, sent, "ann@example.net")
	m.HTML = `<a href="https://shop.example/order?id=7&amp;x=1">order</a>`
	m.Tracking = mailroom.Tracking{Opens: true, Clicks: true}
	if _, err := s.AcceptMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveTrackedLinks(ctx, m.ID, []string{"https://shop.example/order?id=7&x=1"}); err != nil {
		t.Fatal(err)
	}
	qs, err := s.ClaimDueRecipients(ctx, mailroom.Claim{Node: "node_a", Now: sent, Lease: time.Minute, Limit: 10})
	if err != nil || len(qs) != 1 {
		t.Fatalf("claim: %v, %d", err, len(qs))
	}
	q := qs[0]
	delivered := sent.Add(time.Second)
	r := q.Recipient
	r.Status, r.Attempts, r.LastAttemptAt, r.SMTPCode = mailroom.RecipientDelivered, 1, &delivered, 250
	if err := s.RecordAttempts(ctx, []*mailroom.Attempt{{Recipient: &r, Message: q.Message, ClaimToken: q.ClaimToken,
		Event: mailroom.NewEmailEvent(q.Message, &r, mailroom.EventEmailDelivered, delivered)}}); err != nil {
		t.Fatal(err)
	}
	tokens, err := tracking.NewTokens([]byte("the tracking key of this test"))
	if err != nil {
		t.Fatal(err)
	}
	clk := &testClock{t: delivered.Add(time.Minute)}
	svc := &tracking.Service{Tokens: tokens, Store: s, Now: clk.Now, Log: slog.New(slog.DiscardHandler), Limits: limits}
	return &tracked{store: s, acct: acct, messageID: m.ID, svc: svc, tokens: tokens, clock: clk}
}

func (tr *tracked) click(t *testing.T, index int, url string) string {
	t.Helper()
	tok, err := tr.tokens.SealLink(tracking.Link{MessageID: tr.messageID, Recipient: "ann@example.net", Index: index, URL: url})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (tr *tracked) pixel(t *testing.T) string {
	t.Helper()
	tok, err := tr.tokens.SealPixel(tracking.Pixel{MessageID: tr.messageID, Recipient: "ann@example.net"})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// engagement returns the message's recipient and its engagement events.
func (tr *tracked) engagement(t *testing.T) (*mailroom.Recipient, []*mailroom.Event) {
	t.Helper()
	return storetest.Engagement(t, tr.store, tr.acct.ID, tr.messageID)
}

func request(method, ua, client string) tracking.Request {
	h := http.Header{}
	if ua != "" {
		h.Set("User-Agent", ua)
	}
	return tracking.Request{Method: method, Header: h, Client: netip.MustParseAddr(client)}
}

// A reader's click redirects to the link's address and writes
// email.clicked with the address, the truncated IP, the User-Agent and
// machine false; a HEAD is machine; a tampered token is not_found and
// writes nothing.
func TestServiceRecordsClicks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		tr := newTracked(t, e, tracking.Limits{})
		ctx := context.Background()
		const url = "https://shop.example/order?id=7&x=1"
		tok := tr.click(t, 0, url)

		got, err := tr.svc.Click(ctx, tok, request("GET", browser, "203.0.113.77"))
		if err != nil || got != url {
			t.Fatalf("click: %q, %v", got, err)
		}
		got, err = tr.svc.Click(ctx, tok, request("HEAD", browser, "2001:db8:1:2::5"))
		if err != nil || got != url {
			t.Fatalf("HEAD click: %q, %v", got, err)
		}
		bad := []byte(tok)
		bad[10] ^= 1
		if _, err := tr.svc.Click(ctx, string(bad), request("GET", browser, "203.0.113.77")); !mailroom.IsCode(err, mailroom.ECodeNotFound) {
			t.Fatalf("tampered token: %v", err)
		}

		r, events := tr.engagement(t)
		if r.Clicks != 2 || len(events) != 2 {
			t.Fatalf("clicks %d, %d events", r.Clicks, len(events))
		}
		want := []mailroom.Engagement{
			{URL: url, UserAgent: browser, IP: "203.0.113.0", Machine: false},
			{URL: url, UserAgent: browser, IP: "2001:db8:1::", Machine: true},
		}
		for i, ev := range events {
			if ev.Type != mailroom.EventEmailClicked || engagementOf(t, ev) != want[i] {
				t.Errorf("event %d: %s %s, want %+v", i, ev.Type, ev.Data, want[i])
			}
		}
	})
}

// The first open writes email.opened, later ones are counted; a pixel
// of a message that is gone, or no token at all, records nothing and
// fails nothing.
func TestServiceRecordsOpens(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		tr := newTracked(t, e, tracking.Limits{})
		ctx := context.Background()
		tok := tr.pixel(t)
		tr.svc.Open(ctx, tok, request("GET", browser, "198.51.100.9"))
		tr.svc.Open(ctx, tok, request("GET", "Mozilla/5.0", "198.51.100.9"))
		tr.svc.Open(ctx, "garbage", request("GET", browser, "198.51.100.9"))
		gone, _ := tr.tokens.SealPixel(tracking.Pixel{MessageID: mailroom.NewID(mailroom.PrefixMessage, time.Now()), Recipient: "ann@example.net"})
		tr.svc.Open(ctx, gone, request("GET", browser, "198.51.100.9"))

		r, events := tr.engagement(t)
		if r.Opens != 2 || len(events) != 1 || events[0].Type != mailroom.EventEmailOpened {
			t.Fatalf("opens %d, events %v", r.Opens, events)
		}
		if got := engagementOf(t, events[0]); got != (mailroom.Engagement{UserAgent: browser, IP: "198.51.100.0"}) {
			t.Errorf("open event %+v", got)
		}
	})
}

// Over its network's limit, a client's clicks still redirect but are not
// recorded; another network is; the bucket refills with time.
func TestServiceRateLimitsRecording(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		tr := newTracked(t, e, tracking.Limits{PerSecond: 1, Burst: 3, Clients: 100})
		ctx := context.Background()
		const url = "https://shop.example/order?id=7&x=1"
		tok := tr.click(t, 0, url)
		for i := range 6 {
			// Other hosts of one /24 share its bucket.
			if got, err := tr.svc.Click(ctx, tok, request("GET", browser, "203.0.113."+string(rune('1'+i)))); err != nil || got != url {
				t.Fatalf("click %d over the limit: %q, %v", i, got, err)
			}
		}
		if r, _ := tr.engagement(t); r.Clicks != 3 {
			t.Fatalf("%d clicks recorded from one network, want its burst of 3", r.Clicks)
		}
		tr.svc.Click(ctx, tok, request("GET", browser, "192.0.2.1"))
		tr.clock.Advance(time.Second)
		tr.svc.Click(ctx, tok, request("GET", browser, "203.0.113.1"))
		if r, _ := tr.engagement(t); r.Clicks != 5 {
			t.Fatalf("%d clicks recorded, want 5 (another network, and one after a second)", r.Clicks)
		}
		// An IPv6 network is a /48.
		for i := range 5 {
			tr.svc.Click(ctx, tok, request("GET", browser, "2001:db8:7:"+string(rune('1'+i))+"::1"))
		}
		if r, _ := tr.engagement(t); r.Clicks != 8 {
			t.Fatalf("%d clicks recorded, want 8 (a /48's burst of 3 more)", r.Clicks)
		}
	})
}

// Clicks from many networks, each within its own limit, are recorded up to
// the node's limit for all of them, and all redirect.
func TestServiceRateLimitsRecordingAcrossNetworks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		tr := newTracked(t, e, tracking.Limits{PerSecond: 10, Burst: 10, Clients: 100, TotalPerSecond: 1, TotalBurst: 4})
		ctx := context.Background()
		const url = "https://shop.example/order?id=8"
		tok := tr.click(t, 0, url)
		for i := range 10 {
			if got, err := tr.svc.Click(ctx, tok, request("GET", browser, fmt.Sprintf("2001:db8:%x::1", i+1))); err != nil || got != url {
				t.Fatalf("click %d: %q, %v", i, got, err)
			}
		}
		if r, _ := tr.engagement(t); r.Clicks != 4 {
			t.Fatalf("%d clicks recorded from ten networks, want the node's burst of 4", r.Clicks)
		}
		tr.clock.Advance(time.Second)
		tr.svc.Click(ctx, tok, request("GET", browser, "2001:db8:ff::1"))
		if r, _ := tr.engagement(t); r.Clicks != 5 {
			t.Fatalf("%d clicks recorded, want 5 (one more after a second)", r.Clicks)
		}
	})
}

// A User-Agent is kept as valid UTF-8 of at most MaxUserAgent bytes.
func TestServiceCutsUserAgents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		tr := newTracked(t, e, tracking.Limits{})
		long := browser + " \xff"
		for len(long) < 2*mailroom.MaxUserAgent {
			long += "é"
		}
		tr.svc.Open(context.Background(), tr.pixel(t), request("GET", long, "198.51.100.9"))
		_, events := tr.engagement(t)
		if len(events) != 1 {
			t.Fatalf("%d events", len(events))
		}
		ua := engagementOf(t, events[0]).UserAgent
		if len(ua) > mailroom.MaxUserAgent || len(ua) < mailroom.MaxUserAgent-1 || ua[:len(browser)] != browser || !utf8.ValidString(ua) {
			t.Errorf("user agent of %d bytes: %q", len(ua), ua)
		}
	})
}

// engagementOf reads what an engagement event read back from the store
// tells, as webhooks and /v1/events show it.
func engagementOf(t *testing.T, ev *mailroom.Event) mailroom.Engagement {
	t.Helper()
	var g mailroom.Engagement
	if err := json.Unmarshal(ev.Data, &g); err != nil {
		t.Fatalf("event %s data %s: %v", ev.Type, ev.Data, err)
	}
	return g
}
