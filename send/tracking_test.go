package send_test

import (
	"context"
	"crypto/rand"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/domain"
	"github.com/mailroom/mailroom/mustache"
	"github.com/mailroom/mailroom/sealer"
	"github.com/mailroom/mailroom/send"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/template"
)

// acceptedStore is the real store, keeping what the sender handed it to
// accept: the tracking a message was resolved to is what delivery composes
// by.
type acceptedStore struct {
	mailroom.MessageStore
	mu       sync.Mutex
	accepted []*mailroom.Message
}

func (s *acceptedStore) AcceptMessage(ctx context.Context, m *mailroom.Message) (mailroom.AcceptResult, error) {
	s.mu.Lock()
	s.accepted = append(s.accepted, m)
	s.mu.Unlock()
	return s.MessageStore.AcceptMessage(ctx, m)
}

func (s *acceptedStore) AcceptMessages(ctx context.Context, ms []*mailroom.Message) ([]mailroom.AcceptOutcome, error) {
	s.mu.Lock()
	s.accepted = append(s.accepted, ms...)
	s.mu.Unlock()
	return s.MessageStore.AcceptMessages(ctx, ms)
}

// last is the tracking of the last message accepted.
func (s *acceptedStore) last(t *testing.T) mailroom.Tracking {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.accepted) == 0 {
		t.Fatal("nothing was accepted")
	}
	return s.accepted[len(s.accepted)-1].Tracking
}

// trackingWorld is an account with two sandbox domains, quiet.example
// (tracking off, the default) and loud.example (opens and clicks on, with
// PATCH's update), a template that renders HTML, and a sender over the
// real store.
type trackingWorld struct {
	acct   *mailroom.Account
	key    *mailroom.APIKey
	store  *acceptedStore
	sender *send.Sender
}

func newTrackingWorld(t *testing.T, e storetest.Engine, needDomainTracking bool) *trackingWorld {
	ctx := context.Background()
	store := e.Open(t)
	acct := storetest.NewAccount(t, store, "acme")
	seal, err := sealer.New([]byte(rand.Text() + rand.Text())[:32])
	if err != nil {
		t.Fatal(err)
	}
	domains := &domain.Service{Store: store, Sealer: seal, Settings: mailroom.DefaultRecordSettings("mail.mailroom.test"),
		Now: time.Now, Log: slog.New(slog.DiscardHandler)}
	for _, name := range []string{"quiet.example", "loud.example"} {
		if _, err := domains.AddSandbox(ctx, acct.ID, name); err != nil {
			t.Fatal(err)
		}
	}
	on := true
	if _, err := domains.Update(ctx, acct.ID, "loud.example", mailroom.DomainUpdate{OpenTracking: &on, ClickTracking: &on}); err != nil {
		t.Fatal(err)
	}
	if tr, err := domains.CheckSendingDomain(ctx, acct.ID, "loud.example"); needDomainTracking && (err != nil || tr != (mailroom.Tracking{Opens: true, Clicks: true})) {
		// Storage keeps a domain's tracking on branch t33-store.
		t.Skipf("the store does not keep a domain's tracking yet: %+v %v", tr, err)
	}
	templates := &template.Service{Store: store, Engine: mustache.Engine{}, Now: time.Now}
	name := "receipt"
	if _, err := templates.Create(ctx, acct.ID, &template.Request{Name: &name, Subject: "Receipt {{n}}",
		HTML: `<p>Order {{n}}: <a href="https://shop.example/o/{{n}}">view</a></p>`}); err != nil {
		t.Fatal(err)
	}
	accepted := &acceptedStore{MessageStore: store}
	return &trackingWorld{acct: acct, key: &mailroom.APIKey{AccountID: acct.ID}, store: accepted,
		sender: &send.Sender{Store: accepted, Domains: domains, Templates: templates, Now: time.Now}}
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

func htmlSend(from string, o *mailroom.TrackingOverride) *mailroom.SendRequest {
	return &mailroom.SendRequest{From: from, To: mailroom.AddressList{"ann@x.example"}, Subject: "Hi",
		HTML: `<p>Hi, <a href="https://shop.example/">shop</a></p>`, Tracking: o}
}

// A send's tracking overrides its domain's field by field: a field given
// wins, a field left out follows the domain; a message without HTML is
// never tracked (only the HTML part is rewritten), whatever is asked.
func TestSendTrackingOverridesTheDomains(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newTrackingWorld(t, e, true)
		ctx := context.Background()
		for _, c := range []struct {
			name string
			req  *mailroom.SendRequest
			want mailroom.Tracking
		}{
			{"domain off, no override", htmlSend("a@quiet.example", nil), mailroom.Tracking{}},
			{"domain off, send turns opens on", htmlSend("a@quiet.example", &mailroom.TrackingOverride{Opens: yes()}),
				mailroom.Tracking{Opens: true}},
			{"domain on, no override", htmlSend("a@loud.example", nil), mailroom.Tracking{Opens: true, Clicks: true}},
			{"domain on, send turns both off", htmlSend("a@loud.example", &mailroom.TrackingOverride{Opens: no(), Clicks: no()}),
				mailroom.Tracking{}},
			{"domain on, send turns clicks off, opens follow", htmlSend("a@loud.example", &mailroom.TrackingOverride{Clicks: no()}),
				mailroom.Tracking{Opens: true}},
			{"domain on, empty override follows", htmlSend("a@loud.example", &mailroom.TrackingOverride{}),
				mailroom.Tracking{Opens: true, Clicks: true}},
			{"text only, domain on", &mailroom.SendRequest{From: "a@loud.example", To: mailroom.AddressList{"ann@x.example"},
				Subject: "Hi", Text: "Hi, https://shop.example/"}, mailroom.Tracking{}},
			{"text only, send turns both on", &mailroom.SendRequest{From: "a@quiet.example", To: mailroom.AddressList{"ann@x.example"},
				Subject: "Hi", Text: "Hi, https://shop.example/", Tracking: &mailroom.TrackingOverride{Opens: yes(), Clicks: yes()}},
				mailroom.Tracking{}},
		} {
			if _, err := w.sender.Send(ctx, w.key, c.req, nil); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if got := w.store.last(t); got != c.want {
				t.Errorf("%s: tracked for %+v, want %+v", c.name, got, c.want)
			}
		}
	})
}

// A batch item and a template send are resolved as a single send is: each
// batch item from its own domain's answer (checked once per domain) and
// its own override; a template's rendered HTML is tracked.
func TestBatchAndTemplateSendsAreTracked(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newTrackingWorld(t, e, true)
		ctx := context.Background()
		items := []send.BatchItem{
			{Request: htmlSend("a@loud.example", nil)},
			{Request: htmlSend("b@loud.example", &mailroom.TrackingOverride{Opens: no()})},
			{Request: htmlSend("c@quiet.example", &mailroom.TrackingOverride{Clicks: yes()})},
			{Request: htmlSend("d@quiet.example", nil)},
		}
		out, err := w.sender.SendBatch(ctx, w.key, items)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range out {
			if o.Err != nil {
				t.Fatalf("item %d: %v", i, o.Err)
			}
		}
		want := []mailroom.Tracking{{Opens: true, Clicks: true}, {Clicks: true}, {Clicks: true}, {}}
		w.store.mu.Lock()
		got := w.store.accepted
		w.store.mu.Unlock()
		if len(got) != len(want) {
			t.Fatalf("accepted %d, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i].Tracking != want[i] {
				t.Errorf("item %d: tracked for %+v, want %+v", i, got[i].Tracking, want[i])
			}
		}

		tpl := "receipt"
		req := &mailroom.SendRequest{From: "a@loud.example", To: mailroom.AddressList{"ann@x.example"}, Template: &tpl,
			Variables: mailroom.Variables(`{"n":"42"}`), Tracking: &mailroom.TrackingOverride{Opens: no()}}
		if _, err := w.sender.Send(ctx, w.key, req, nil); err != nil {
			t.Fatal(err)
		}
		if got := w.store.last(t); got != (mailroom.Tracking{Clicks: true}) {
			t.Errorf("template send: tracked for %+v, want clicks", got)
		}
	})
}

// Tracking is part of what an idempotency key stands for: the same
// request again is the first one's duplicate, one that asks for other
// tracking under the key is refused as idempotency_key_reused.
func TestTrackingIsPartOfTheIdempotencyDigest(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newTrackingWorld(t, e, false)
		ctx := context.Background()
		key := []string{"order-42"}
		first, err := w.sender.Send(ctx, w.key, htmlSend("a@quiet.example", &mailroom.TrackingOverride{Opens: no()}), key)
		if err != nil {
			t.Fatal(err)
		}
		again, err := w.sender.Send(ctx, w.key, htmlSend("a@quiet.example", &mailroom.TrackingOverride{Opens: no()}), key)
		if err != nil || !again.Duplicate || again.MessageID != first.MessageID {
			t.Fatalf("the same send again: %+v %v", again, err)
		}
		for name, o := range map[string]*mailroom.TrackingOverride{
			"opens on":         {Opens: yes()},
			"no override":      nil,
			"clicks added":     {Opens: no(), Clicks: yes()},
			"opens left out":   {},
			"clicks off added": {Opens: no(), Clicks: no()},
		} {
			_, err := w.sender.Send(ctx, w.key, htmlSend("a@quiet.example", o), key)
			if !mailroom.IsCode(err, mailroom.ECodeIdempotencyKeyReused) {
				t.Errorf("%s under the same key: %v, want idempotency_key_reused", name, err)
			}
		}
	})
}
