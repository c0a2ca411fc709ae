package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// What comes back from tracked copies (docs/api.md "Engagement tracking"):
// a click-tracked message's links, stored once; each open and click
// counted on its recipient (and a click on its link), the first open (and
// the first reader's open after a machine's) and each click up to
// mailroom.MaxClickEvents written as an event through the
// path of every email event, so that the timeline, the event list and the
// webhook outbox have it; a message or recipient that is gone recorded not
// at all.

func init() {
	extraSuites = append(extraSuites,
		suite{"EngagementRecorded", testEngagementRecorded},
		suite{"EngagementOfNoOne", testEngagementOfNoOne},
		suite{"EngagementMachineClicks", testEngagementMachineClicks},
		suite{"EngagementClickEventCap", testEngagementClickEventCap},
		suite{"EngagementConcurrentFirstOpens", testEngagementConcurrentFirstOpens},
		suite{"EngagementReaderOpenAfterMachine", testEngagementReaderOpenAfterMachine},
		suite{"EngagementLogFilter", testEngagementLogFilter},
		suite{"TrackedLinksRetention", testTrackedLinksRetention},
	)
}

// trackedMessage accepts a message of acct at at to the addresses,
// tracked for opens and clicks.
func trackedMessage(t *testing.T, s mailroom.Store, acct *mailroom.Account, at time.Time, to ...string) *mailroom.Message {
	t.Helper()
	m := NewMessage(acct, at, to...)
	m.HTML = `<p><a href="https://shop.example/a">a</a></p>`
	m.Tracking = mailroom.Tracking{Opens: true, Clicks: true}
	mustAccept(t, s, m)
	return m
}

// deliverAll claims every recipient due at at and records each delivered
// at at, as delivery does (RecordAttempts, with its event).
func deliverAll(t *testing.T, s mailroom.Store, at time.Time) {
	t.Helper()
	var attempts []*mailroom.Attempt
	for _, q := range Try(claim(s, "node_a", at, 1000)).Must(t) {
		r := q.Recipient
		r.Status, r.Attempts, r.LastAttemptAt, r.SMTPCode, r.SMTPResponse = mailroom.RecipientDelivered, 1, &at, 250, "250 ok"
		attempts = append(attempts, &mailroom.Attempt{Recipient: &r, Message: q.Message, ClaimToken: q.ClaimToken,
			Event: mailroom.NewEmailEvent(q.Message, &r, mailroom.EventEmailDelivered, at)})
	}
	if err := s.RecordAttempts(context.Background(), attempts); err != nil {
		t.Fatalf("record deliveries: %v", err)
	}
}

func openHit(m *mailroom.Message, rcpt string, at time.Time) *mailroom.EngagementHit {
	return &mailroom.EngagementHit{Type: mailroom.EventEmailOpened, MessageID: m.ID, Recipient: rcpt,
		UserAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0", IP: "192.0.2.0", At: at}
}

func clickHit(m *mailroom.Message, rcpt string, link int, url string, at time.Time) *mailroom.EngagementHit {
	return &mailroom.EngagementHit{Type: mailroom.EventEmailClicked, MessageID: m.ID, Recipient: rcpt, LinkIndex: link, URL: url,
		UserAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0", IP: "2001:db8:1::", At: at}
}

func recordHit(t *testing.T, s mailroom.Store, hit *mailroom.EngagementHit) *mailroom.Event {
	t.Helper()
	e, err := s.RecordEngagement(context.Background(), hit)
	if err != nil {
		t.Fatalf("record %s of %s: %v", hit.Type, hit.Recipient, err)
	}
	return e
}

// engagementData is the part of an email event's data an engagement
// event adds, as the API shows it.
type engagementData struct {
	MessageID string            `json:"messageId"`
	Recipient string            `json:"recipient"`
	Subject   string            `json:"subject"`
	Tags      map[string]string `json:"tags"`
	URL       *string           `json:"url"`
	UserAgent string            `json:"userAgent"`
	IP        string            `json:"ip"`
	Machine   *bool             `json:"machine"`
}

func dataOf(t *testing.T, e *mailroom.Event) engagementData {
	t.Helper()
	var d engagementData
	data := e.Data
	if e.Email != nil {
		data = e.Email.JSON() // as made, not yet read back
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("event %s data %s: %v", e.Type, e.Data, err)
	}
	return d
}

func testEngagementRecorded(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	hook := addWebhook(t, s, acme, mailroom.EventEmailOpened, mailroom.EventEmailClicked)
	m := trackedMessage(t, s, acme, t0, "a@x.example", "b@x.example")
	links := []string{"https://shop.example/a?x=1&y=2#top", "https://shop.example/zoë/ünï"}
	mustDo(t, s.SaveTrackedLinks(ctx, m.ID, links))
	// Stored once: a second composition's links are those stored.
	mustDo(t, s.SaveTrackedLinks(ctx, m.ID, []string{"https://other.example/", "https://other.example/2", "https://other.example/3"}))
	delivered := t0.Add(time.Minute)
	deliverAll(t, s, delivered)

	later := delivered.Add(time.Hour)
	open := recordHit(t, s, openHit(m, "a@x.example", later))
	if open == nil || open.Type != mailroom.EventEmailOpened || open.MessageID != m.ID || open.Recipient != "a@x.example" {
		t.Fatalf("first open: event %+v", open)
	}
	if again := recordHit(t, s, openHit(m, "a@x.example", later.Add(time.Minute))); again != nil {
		t.Fatalf("a second open wrote %s", again.Type)
	}
	click := recordHit(t, s, clickHit(m, "a@x.example", 1, links[1], later.Add(2*time.Minute)))
	if click == nil || click.Type != mailroom.EventEmailClicked {
		t.Fatalf("click: event %+v", click)
	}
	// A link index the message has no link for counts on the recipient.
	if e := recordHit(t, s, clickHit(m, "b@x.example", 7, "https://shop.example/gone", later.Add(3*time.Minute))); e == nil {
		t.Fatal("a click on an unstored link wrote no event")
	}

	got, timeline := messageOf(t, s, acme.ID, m.ID)
	wantLinks := []mailroom.TrackedLink{{URL: links[0], Clicks: 0}, {URL: links[1], Clicks: 1}}
	if fmt.Sprint(got.Links) != fmt.Sprint(wantLinks) {
		t.Errorf("links %+v, want %+v", got.Links, wantLinks)
	}
	counts := map[string][2]int{}
	for _, r := range got.Recipients {
		counts[r.Address] = [2]int{r.Opens, r.Clicks}
	}
	if counts["a@x.example"] != [2]int{2, 1} || counts["b@x.example"] != [2]int{0, 1} {
		t.Errorf("recipients' opens and clicks %v", counts)
	}
	listed := allMessages(t, s, acme.ID, mailroom.MessageFilter{})
	if len(listed) != 1 || len(listed[0].Recipients) != 2 || listed[0].Recipients[0].Opens != 2 || listed[0].Recipients[0].Clicks != 1 {
		t.Errorf("the list's recipients: %+v", listed[0].Recipients)
	}
	if listed[0].Links != nil {
		t.Errorf("the list reads links: %+v", listed[0].Links)
	}

	// The timeline, the event list and the outbox show each event
	// whole: its message's subject and tags, and what the hit told.
	wantData := map[string]string{
		open.ID:  `{"url":null,"ua":"Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0","ip":"192.0.2.0","machine":false,"subject":"Your receipt","kind":"receipt"}`,
		click.ID: `{"url":"https://shop.example/zoë/ünï","ua":"Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0","ip":"2001:db8:1::","machine":false,"subject":"Your receipt","kind":"receipt"}`,
	}
	show := func(d engagementData) string {
		b, _ := json.Marshal(struct {
			URL     *string `json:"url"`
			UA      string  `json:"ua"`
			IP      string  `json:"ip"`
			Machine *bool   `json:"machine"`
			Subject string  `json:"subject"`
			Kind    string  `json:"kind"`
		}{d.URL, d.UserAgent, d.IP, d.Machine, d.Subject, d.Tags["kind"]})
		return string(b)
	}
	seen := map[string]int{}
	check := func(where string, events []*mailroom.Event) {
		t.Helper()
		for _, e := range events {
			if w, ok := wantData[e.ID]; ok {
				seen[where]++
				if got := show(dataOf(t, e)); got != w {
					t.Errorf("%s: %s data %s, want %s", where, e.Type, got, w)
				}
			}
		}
	}
	check("timeline", timeline)
	check("returned", []*mailroom.Event{open, click})
	check("events", allEvents(t, s, acme.ID))
	opened, _ := Try2(s.ListEvents(ctx, acme.ID, mailroom.EventFilter{Type: mailroom.EventEmailOpened}, mailroom.Page{Limit: 10})).Must(t)
	check("events of type", opened)
	check("event", []*mailroom.Event{Try(s.Event(ctx, acme.ID, click.ID)).Must(t)})
	var outbox []*mailroom.Event
	for _, d := range claimHooks(t, s, time.Now().Add(time.Hour)) {
		if d.EndpointID == hook.ID {
			outbox = append(outbox, d.Event)
		}
	}
	if len(outbox) != 3 {
		t.Errorf("the outbox has %d deliveries to the endpoint, want 3 (an open, two clicks)", len(outbox))
	}
	check("outbox", outbox)
	for _, where := range []string{"timeline", "returned", "events", "outbox"} {
		if seen[where] != 2 {
			t.Errorf("%s shows %d of the two events", where, seen[where])
		}
	}
	if seen["events of type"] != 1 || seen["event"] != 1 {
		t.Errorf("filtered: %v", seen)
	}
}

// A hit of a message or recipient that is not there (retention removed
// it; or never was) is not found and records nothing.
func testEngagementOfNoOne(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	m := trackedMessage(t, s, acme, t0, "a@x.example")
	mustDo(t, s.SaveTrackedLinks(ctx, m.ID, []string{"https://shop.example/a"}))
	deliverAll(t, s, t0)
	before := len(allEvents(t, s, acme.ID))
	ghost := NewMessage(acme, t0.Add(time.Millisecond), "a@x.example")
	for _, hit := range []*mailroom.EngagementHit{
		openHit(ghost, "a@x.example", t0.Add(time.Hour)),
		clickHit(ghost, "a@x.example", 0, "https://shop.example/a", t0.Add(time.Hour)),
		openHit(m, "b@x.example", t0.Add(time.Hour)),
		clickHit(m, "b@x.example", 0, "https://shop.example/a", t0.Add(time.Hour)),
		// Addresses compare as the store keeps them: exactly.
		openHit(m, "A@x.example", t0.Add(time.Hour)),
	} {
		e, err := s.RecordEngagement(ctx, hit)
		if e != nil {
			t.Errorf("%s of %s %s wrote %+v", hit.Type, hit.MessageID, hit.Recipient, e)
		}
		wantCode(t, err, mailroom.ECodeNotFound)
	}
	got, _ := messageOf(t, s, acme.ID, m.ID)
	if r := got.Recipients[0]; r.Opens != 0 || r.Clicks != 0 || got.Links[0].Clicks != 0 {
		t.Errorf("hits of no one counted: %+v %+v", r, got.Links)
	}
	if after := len(allEvents(t, s, acme.ID)); after != before {
		t.Errorf("hits of no one wrote %d events", after-before)
	}
	if err := s.SaveTrackedLinks(ctx, ghost.ID, []string{"https://shop.example/a"}); mailroom.ErrorCode(err) != mailroom.ECodeNotFound {
		t.Errorf("links of no message: %v", err)
	}
}

// A click within mailroom.ClickScanWindow of its recipient's delivery, as
// stored, is a link scanner's (mailroom.NewEngagementEvent); one before
// any delivery too; and a hit the request marked machine stays so.
func testEngagementMachineClicks(t *testing.T, s mailroom.Store) {
	acme := NewAccount(t, s, "acme")
	m := trackedMessage(t, s, acme, t0, "a@x.example")
	// Scheduled past the delivery: it stays undelivered.
	waiting := NewMessage(acme, t0.Add(time.Millisecond), "w@x.example")
	waiting.HTML, waiting.Tracking = m.HTML, m.Tracking
	scheduleMessage(waiting, t0.Add(24*time.Hour))
	mustAccept(t, s, waiting)
	delivered := t0.Add(time.Minute)
	deliverAll(t, s, delivered)
	machine := func(e *mailroom.Event) bool {
		t.Helper()
		if e == nil {
			t.Fatal("no event")
		}
		d := dataOf(t, e)
		if d.Machine == nil {
			t.Fatalf("event %s has no machine: %s", e.Type, e.Data)
		}
		return *d.Machine
	}
	if !machine(recordHit(t, s, clickHit(m, "a@x.example", 0, "https://shop.example/a", delivered.Add(2*time.Second)))) {
		t.Error("a click 2 s after delivery is not machine")
	}
	if machine(recordHit(t, s, clickHit(m, "a@x.example", 0, "https://shop.example/a", delivered.Add(30*time.Second)))) {
		t.Error("a click 30 s after delivery is machine")
	}
	if !machine(recordHit(t, s, clickHit(waiting, "w@x.example", 0, "https://shop.example/a", delivered.Add(time.Hour)))) {
		t.Error("a click before delivery is not machine")
	}
	proxy := openHit(m, "a@x.example", delivered.Add(time.Hour))
	proxy.Machine = true
	if !machine(recordHit(t, s, proxy)) {
		t.Error("an open the request marked machine is not")
	}
	late := clickHit(m, "a@x.example", 0, "https://shop.example/a", delivered.Add(time.Hour))
	late.Machine = true
	if !machine(recordHit(t, s, late)) {
		t.Error("a click the request marked machine is not")
	}
}

// Clicks past mailroom.MaxClickEvents are counted, on the recipient and
// the link, and write no event.
func testEngagementClickEventCap(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	m := trackedMessage(t, s, acme, t0, "a@x.example", "b@x.example")
	mustDo(t, s.SaveTrackedLinks(ctx, m.ID, []string{"https://shop.example/a"}))
	deliverAll(t, s, t0)
	const over = 5
	events := 0
	for i := range mailroom.MaxClickEvents + over {
		if recordHit(t, s, clickHit(m, "a@x.example", 0, "https://shop.example/a", t0.Add(time.Hour+time.Duration(i)*time.Millisecond))) != nil {
			events++
		}
	}
	if events != mailroom.MaxClickEvents {
		t.Errorf("%d clicks wrote %d events, want %d", mailroom.MaxClickEvents+over, events, mailroom.MaxClickEvents)
	}
	// Another recipient's copy has a cap of its own.
	if recordHit(t, s, clickHit(m, "b@x.example", 0, "https://shop.example/a", t0.Add(2*time.Hour))) == nil {
		t.Error("the other recipient's first click wrote no event")
	}
	got, _ := messageOf(t, s, acme.ID, m.ID)
	if got.Recipients[0].Clicks != mailroom.MaxClickEvents+over || got.Links[0].Clicks != mailroom.MaxClickEvents+over+1 {
		t.Errorf("counted %d clicks of a, %d on the link", got.Recipients[0].Clicks, got.Links[0].Clicks)
	}
	if n := len(eventsWhere(t, s, acme.ID, mailroom.EventFilter{Type: mailroom.EventEmailClicked, MessageID: m.ID})); n != mailroom.MaxClickEvents+1 {
		t.Errorf("%d email.clicked stored, want %d", n, mailroom.MaxClickEvents+1)
	}
}

// Opens of one recipient at once: each is counted, and exactly one is
// the first, with the one email.opened, whatever the engine.
func testEngagementConcurrentFirstOpens(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	m := trackedMessage(t, s, acme, t0, "a@x.example")
	deliverAll(t, s, t0)
	const n = 16
	firsts := opensAtOnce(t, s, m, "a@x.example", t0.Add(time.Hour), n)
	if len(firsts) != 1 {
		t.Errorf("%d opens at once returned %d first-open events, want 1", n, len(firsts))
	}
	opened, _ := Try2(s.ListEvents(ctx, acme.ID, mailroom.EventFilter{Type: mailroom.EventEmailOpened}, mailroom.Page{Limit: 100})).Must(t)
	if len(opened) != 1 {
		t.Errorf("%d email.opened stored, want 1", len(opened))
	}
	if got, _ := messageOf(t, s, acme.ID, m.ID); got.Recipients[0].Opens != n {
		t.Errorf("counted %d opens of %d", got.Recipients[0].Opens, n)
	}
}

// A first open that looked automated (a filter fetching the pixel as the
// message arrives) does not hide the reader's: the first open not marked
// machine after it writes email.opened too, once, even when many come at
// once; a reader's first open is not followed by a machine's event.
func testEngagementReaderOpenAfterMachine(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	m := trackedMessage(t, s, acme, t0, "a@x.example", "b@x.example")
	deliverAll(t, s, t0)
	at := t0.Add(time.Hour)
	machineOpen := func(rcpt string) *mailroom.EngagementHit {
		h := openHit(m, rcpt, at)
		h.UserAgent, h.Machine = "Mozilla/5.0 (via ggpht.com GoogleImageProxy)", true
		return h
	}

	// a: a machine first, twice, then readers at once, then a machine.
	if e := recordHit(t, s, machineOpen("a@x.example")); e == nil || dataOf(t, e).Machine == nil || !*dataOf(t, e).Machine {
		t.Fatalf("a machine's first open: event %+v", e)
	}
	if e := recordHit(t, s, machineOpen("a@x.example")); e != nil {
		t.Fatalf("a machine's second open wrote %s", e.Type)
	}
	const n = 8
	readers := opensAtOnce(t, s, m, "a@x.example", at, n)
	if len(readers) != 1 {
		t.Fatalf("%d reader opens at once after a machine's returned %d events, want 1", n, len(readers))
	}
	if d := dataOf(t, readers[0]); d.Machine == nil || *d.Machine || d.Recipient != "a@x.example" {
		t.Errorf("the reader's open: %+v", d)
	}
	if e := recordHit(t, s, machineOpen("a@x.example")); e != nil {
		t.Errorf("a machine's open after the reader's wrote %s", e.Type)
	}

	// b: a reader first; neither a machine nor the reader again writes.
	if e := recordHit(t, s, openHit(m, "b@x.example", at)); e == nil {
		t.Fatal("b's first open wrote no event")
	}
	for _, h := range []*mailroom.EngagementHit{machineOpen("b@x.example"), openHit(m, "b@x.example", at)} {
		if e := recordHit(t, s, h); e != nil {
			t.Errorf("an open after b's first (machine %v) wrote %s", h.Machine, e.Type)
		}
	}

	opened, _ := Try2(s.ListEvents(ctx, acme.ID, mailroom.EventFilter{Type: mailroom.EventEmailOpened}, mailroom.Page{Limit: 100})).Must(t)
	if len(opened) != 3 {
		t.Errorf("%d email.opened stored, want 3 (a's machine and reader, b's reader)", len(opened))
	}
	got, _ := messageOf(t, s, acme.ID, m.ID)
	for _, r := range got.Recipients {
		if want := map[string]int{"a@x.example": 3 + n, "b@x.example": 3}[r.Address]; r.Opens != want {
			t.Errorf("%s: %d opens counted, want %d", r.Address, r.Opens, want)
		}
	}
}

// opensAtOnce records n reader opens of rcpt's copy of m at once, a
// millisecond apart from at, and returns the events they wrote.
func opensAtOnce(t *testing.T, s mailroom.Store, m *mailroom.Message, rcpt string, at time.Time, n int) []*mailroom.Event {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var events []*mailroom.Event
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			e, err := s.RecordEngagement(context.Background(), openHit(m, rcpt, at.Add(time.Duration(i)*time.Millisecond)))
			if err != nil {
				t.Errorf("open %d: %v", i, err)
			}
			if e != nil {
				mu.Lock()
				events = append(events, e)
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	return events
}

// The log's event filter (?event=opened, ?event=clicked) keeps the
// messages some recipient of which opened, or clicked, alone and beside
// other filters, page after page, in either order.
func testEngagementLogFilter(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	other := NewAccount(t, s, "globex")
	var ms []*mailroom.Message
	want := map[mailroom.EngagementFilter][]string{}
	wantBounce := map[mailroom.EngagementFilter][]string{} // opened or clicked, and to b@x.example
	for i := range 24 {
		to := []string{"a@x.example"}
		if i%4 == 0 {
			to = append(to, "b@x.example")
		}
		m := trackedMessage(t, s, acme, t0.Add(time.Duration(i)*time.Millisecond), to...)
		ms = append(ms, m)
	}
	// The other account's message is opened and clicked too: never listed.
	stranger := trackedMessage(t, s, other, t0.Add(time.Second), "a@x.example")
	deliverAll(t, s, t0.Add(time.Minute))
	at := t0.Add(time.Hour)
	recordHit(t, s, openHit(stranger, "a@x.example", at))
	recordHit(t, s, clickHit(stranger, "a@x.example", 0, "https://shop.example/a", at))
	// Newest first, as the log lists by default.
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		rcpt := "a@x.example"
		if i%4 == 0 {
			rcpt = "b@x.example" // the second recipient alone engages
		}
		if i%3 == 0 {
			recordHit(t, s, openHit(m, rcpt, at))
			recordHit(t, s, openHit(m, rcpt, at)) // counted twice, listed once
			want[mailroom.EngagementOpened] = append(want[mailroom.EngagementOpened], m.ID)
			if i%4 == 0 {
				wantBounce[mailroom.EngagementOpened] = append(wantBounce[mailroom.EngagementOpened], m.ID)
			}
		}
		if i%2 == 1 || i%8 == 0 {
			recordHit(t, s, clickHit(m, rcpt, 0, "https://shop.example/a", at))
			want[mailroom.EngagementClicked] = append(want[mailroom.EngagementClicked], m.ID)
			if i%4 == 0 {
				wantBounce[mailroom.EngagementClicked] = append(wantBounce[mailroom.EngagementClicked], m.ID)
			}
		}
	}
	ids := func(f mailroom.MessageFilter, limit int) []string {
		t.Helper()
		var out []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 30 {
				t.Fatalf("filter %+v: paging does not end", f)
			}
			page, next := Try2(s.ListMessages(ctx, acme.ID, f, mailroom.Page{Limit: limit, Cursor: cursor})).Must(t)
			for _, m := range page {
				out = append(out, m.ID)
			}
			if next == "" {
				return out
			}
			cursor = next
		}
	}
	reversed := func(x []string) []string {
		out := make([]string, len(x))
		for i, v := range x {
			out[len(x)-1-i] = v
		}
		return out
	}
	for _, ev := range []mailroom.EngagementFilter{mailroom.EngagementOpened, mailroom.EngagementClicked} {
		if got := ids(mailroom.MessageFilter{Event: ev}, 3); fmt.Sprint(got) != fmt.Sprint(want[ev]) {
			t.Errorf("?event=%s: %v, want %v", ev, got, want[ev])
		}
		if got := ids(mailroom.MessageFilter{Event: ev, OldestFirst: true}, 2); fmt.Sprint(got) != fmt.Sprint(reversed(want[ev])) {
			t.Errorf("?event=%s oldest first: %v, want %v", ev, got, reversed(want[ev]))
		}
		if got := ids(mailroom.MessageFilter{Event: ev, To: "b@x.example"}, 1); fmt.Sprint(got) != fmt.Sprint(wantBounce[ev]) {
			t.Errorf("?event=%s&to=b@x.example: %v, want %v", ev, got, wantBounce[ev])
		}
		// Beside a filter that keeps every message, the event filter
		// still decides (whichever of them drives).
		if got := ids(mailroom.MessageFilter{Event: ev, Status: mailroom.MessageDelivered}, 4); fmt.Sprint(got) != fmt.Sprint(want[ev]) {
			t.Errorf("?event=%s&status=delivered: %v, want %v", ev, got, want[ev])
		}
	}
	_, _, err := s.ListMessages(ctx, acme.ID, mailroom.MessageFilter{Event: "bounced"}, mailroom.Page{})
	wantCode(t, err, mailroom.ECodeValidation)
}

// Retention removes a message's links with it: a message removed cannot
// be given links again, and a hit of it is not found.
func testTrackedLinksRetention(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	m := trackedMessage(t, s, acme, t0, "a@x.example")
	kept := trackedMessage(t, s, acme, t0.Add(2*time.Hour), "a@x.example")
	for _, x := range []*mailroom.Message{m, kept} {
		mustDo(t, s.SaveTrackedLinks(ctx, x.ID, []string{"https://shop.example/a"}))
	}
	deliverAll(t, s, t0.Add(3*time.Hour))
	recordHit(t, s, clickHit(m, "a@x.example", 0, "https://shop.example/a", t0.Add(4*time.Hour)))
	if n := Try(s.DeleteExpiredMessages(ctx, t0.Add(time.Hour), 100)).Must(t); n != 1 {
		t.Fatalf("retention removed %d messages, want 1", n)
	}
	if _, err := s.RecordEngagement(ctx, clickHit(m, "a@x.example", 0, "https://shop.example/a", t0.Add(5*time.Hour))); mailroom.ErrorCode(err) != mailroom.ECodeNotFound {
		t.Errorf("a click of a removed message: %v", err)
	}
	if got, _ := messageOf(t, s, acme.ID, kept.ID); len(got.Links) != 1 {
		t.Errorf("the message kept lost its links: %+v", got.Links)
	}
}
