package delivery_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-message"
	"github.com/emersion/go-msgauth/dkim"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/delivery"
	"github.com/mailroom/mailroom/storetest"
)

// testTracker stands in for package tracking (which delivery must not
// import): it sends each http(s) link through a click address naming the
// recipient and the link's index, and puts a pixel naming the recipient
// at the end, the way the real one does with sealed tokens.
type testTracker struct{ prepared atomic.Int64 }

var hrefPattern = regexp.MustCompile(`href="(https?://[^"]+)"`)

func (tr *testTracker) Prepare(messageID, html string, t mailroom.Tracking) (mailroom.TrackedHTML, error) {
	tr.prepared.Add(1)
	p := &testTrackedHTML{html: html, t: t}
	if t.Clicks {
		for _, m := range hrefPattern.FindAllStringSubmatch(html, -1) {
			p.links = append(p.links, m[1])
		}
	}
	return p, nil
}

type testTrackedHTML struct {
	html  string
	t     mailroom.Tracking
	links []string
}

func (p *testTrackedHTML) Links() []string { return p.links }

func (p *testTrackedHTML) For(rcpt string) (string, error) {
	html, i := p.html, 0
	if p.t.Clicks {
		html = hrefPattern.ReplaceAllStringFunc(html, func(string) string {
			i++
			return fmt.Sprintf(`href="%s"`, clickAddress(rcpt, i-1))
		})
	}
	if p.t.Opens {
		html += `<img src="` + pixelAddress(rcpt) + `" width="1" height="1" alt="">`
	}
	return html, nil
}

func clickAddress(rcpt string, i int) string {
	return fmt.Sprintf("https://%s/t/c/%s-%d", serviceHost, hex.EncodeToString([]byte(rcpt)), i)
}

func pixelAddress(rcpt string) string {
	return "https://" + serviceHost + "/t/o/" + hex.EncodeToString([]byte(rcpt))
}

// trackedStore is the real store; it records the links the Signer saves,
// in order with the raw bytes it saves, and gives message id the tracking
// it was accepted with (set here until the store keeps a message's
// tracking, branch t33-store).
type trackedStore struct {
	mailroom.MessageStore
	id       string
	tracking mailroom.Tracking
	mu       sync.Mutex
	saves    []string // "links" or "raw", in order
	links    [][]string
}

func (s *trackedStore) ClaimDueRecipients(ctx context.Context, c mailroom.Claim) ([]*mailroom.QueuedRecipient, error) {
	qs, err := s.MessageStore.ClaimDueRecipients(ctx, c)
	for _, q := range qs {
		if q.Message.ID == s.id {
			q.Message.Tracking = s.tracking
		}
	}
	return qs, err
}

func (s *trackedStore) MessageForDelivery(ctx context.Context, id string) (*mailroom.Message, []byte, error) {
	m, raw, err := s.MessageStore.MessageForDelivery(ctx, id)
	if m != nil && id == s.id {
		m.Tracking = s.tracking
	}
	return m, raw, err
}

func (s *trackedStore) SaveRaw(ctx context.Context, id string, raw []byte) ([]byte, error) {
	s.mu.Lock()
	s.saves = append(s.saves, "raw")
	s.mu.Unlock()
	return s.MessageStore.SaveRaw(ctx, id, raw)
}

func (s *trackedStore) SaveTrackedLinks(ctx context.Context, id string, links []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saves = append(s.saves, "links")
	s.links = append(s.links, links)
	return nil
}

// TestTrackedMailIsDeliveredOneCopyPerRecipient: each recipient of a
// tracked message gets a transaction and a copy of its own, whose HTML
// part carries that recipient's click addresses and pixel (a mailto link
// untouched), and whose DKIM signature verifies against the published
// key; the message's text part is the same for all. The links are saved
// once, before the message's bytes, which keep the original HTML; the
// tracker prepares the HTML once per Signed call; a copy made again (a
// retry) is the very bytes sent.
func TestTrackedMailIsDeliveredOneCopyPerRecipient(t *testing.T) {
	w := newWorld(t, storetest.SQLite.Open(t))
	w.mailDomain("a.example")
	w.mailDomain("b.example")
	store := &trackedStore{MessageStore: w.store, tracking: mailroom.Tracking{Opens: true, Clicks: true}}
	d, transport := newDeliverer(store, w.domains, realComposer(), w.dns.Addr(), w.mx.Port())
	defer transport.Close()
	tracker := &testTracker{}
	d.Signer.(*delivery.Signer).SetTracker(tracker)

	to := []string{"ann@a.example", "bob@a.example", "carol@b.example"}
	html := `<p>Your order: <a href="https://shop.example/o/42?x=1&amp;y=2#top">view</a>, ` +
		`<a href="mailto:help@shop.example">mail us</a>, <a href="https://shop.example/help">help</a></p>`
	store.id = w.send(t, time.Now(), &mailroom.SendRequest{
		From: "Shop <orders@" + sendingDomain + ">", To: to, Subject: "Your order", HTML: html, Text: "Your order shipped.",
	})
	if n := deliverAll(t, d); n != len(to) {
		t.Fatalf("claimed %d recipients, want %d", n, len(to))
	}
	got := w.mx.WaitMessages(t, len(to), 10*time.Second)
	if len(got) != len(to) {
		t.Fatalf("received %d transactions, want one per recipient (%d)", len(got), len(to))
	}
	received := map[string][]byte{}
	for _, m := range got {
		if len(m.Rcpts) != 1 {
			t.Fatalf("a transaction of tracked mail has recipients %v, want one", m.Rcpts)
		}
		rcpt := m.Rcpts[0]
		received[rcpt] = m.Data
		v, err := dkim.VerifyWithOptions(bytes.NewReader(m.Data), &dkim.VerifyOptions{
			LookupTXT: func(name string) ([]string, error) { return lookupTXT(w.dns.Addr(), name) },
		})
		if err != nil || len(v) != 1 || v[0].Err != nil || v[0].Domain != sendingDomain {
			t.Fatalf("%s: DKIM: %v %+v", rcpt, err, v)
		}
		if bytes.Contains(m.Data, []byte("List-Unsubscribe")) {
			t.Errorf("%s: transactional tracked mail carries List-Unsubscribe", rcpt)
		}
		parts := leafParts(t, m.Data)
		body := parts["text/html"]
		for _, want := range []string{clickAddress(rcpt, 0), clickAddress(rcpt, 1), pixelAddress(rcpt), `href="mailto:help@shop.example"`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the HTML part lacks %s: %s", rcpt, want, body)
			}
		}
		for _, other := range to {
			if other != rcpt && strings.Contains(body, hex.EncodeToString([]byte(other))) {
				t.Errorf("%s: the HTML part carries %s's addresses", rcpt, other)
			}
		}
		if strings.Contains(body, "https://shop.example/") {
			t.Errorf("%s: a link is left as it was: %s", rcpt, body)
		}
		if parts["text/plain"] != "Your order shipped.\r\n" && parts["text/plain"] != "Your order shipped." {
			t.Errorf("%s: the text part is %q", rcpt, parts["text/plain"])
		}
	}
	if len(received) != len(to) {
		t.Fatalf("received copies for %d recipients, want %d", len(received), len(to))
	}

	store.mu.Lock()
	saves, links := strings.Join(store.saves, " "), store.links
	store.mu.Unlock()
	if saves != "links raw" || len(links) != 1 ||
		strings.Join(links[0], " ") != "https://shop.example/o/42?x=1&amp;y=2#top https://shop.example/help" {
		t.Fatalf("saved %q, links %q; want the two http(s) links once, before the bytes", saves, links)
	}
	_, raw, err := w.store.MessageForDelivery(context.Background(), store.id)
	if err != nil || mailroom.IsSigned(raw) || !strings.Contains(leafParts(t, raw)["text/html"], `href="https://shop.example/help"`) {
		t.Fatalf("the stored bytes are not the unsigned common part with the original HTML (%v)", err)
	}
	prepared := tracker.prepared.Load()

	// A retry: the copy made again is the one sent, and nothing more is
	// saved.
	signed, err := d.Signer.Signed(context.Background(), &mailroom.MessageSummary{ID: store.id, AccountID: w.acct.ID,
		Domain: sendingDomain, Tracking: store.tracking})
	if err != nil {
		t.Fatal(err)
	}
	for _, rcpt := range to {
		if again, err := signed.For(rcpt); err != nil || !bytes.Equal(again, received[rcpt]) {
			t.Errorf("%s's copy made again differs from the one sent (%v)", rcpt, err)
		}
	}
	if n := tracker.prepared.Load() - prepared; n != 1 {
		t.Errorf("the tracker prepared the HTML %d times for one Signed call, want once", n)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if len(store.links) != 1 {
		t.Errorf("links saved %d times, want once", len(store.links))
	}
}

// Without a tracker (no --public-url), a click-tracked message is not
// stored and nothing is sent: its links could not be saved first.
func TestTrackedMailWaitsForATracker(t *testing.T) {
	w := newWorld(t, storetest.SQLite.Open(t))
	w.mailDomain("a.example")
	store := &trackedStore{MessageStore: w.store, tracking: mailroom.Tracking{Clicks: true}}
	d, transport := newDeliverer(store, w.domains, realComposer(), w.dns.Addr(), w.mx.Port())
	defer transport.Close()
	store.id = w.send(t, time.Now(), &mailroom.SendRequest{From: "orders@" + sendingDomain, To: []string{"ann@a.example"},
		Subject: "Hi", HTML: `<a href="https://shop.example/">shop</a>`})
	deliverAll(t, d)
	if _, raw, err := w.store.MessageForDelivery(context.Background(), store.id); err != nil || raw != nil {
		t.Fatalf("the message's bytes were stored without its links (%v)", err)
	}
	if n := len(w.mx.Messages()); n != 0 {
		t.Fatalf("%d transactions sent", n)
	}
}

// leafParts are the decoded leaf parts of raw by media type.
func leafParts(t *testing.T, raw []byte) map[string]string {
	t.Helper()
	e, err := message.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	err = e.Walk(func(_ []int, p *message.Entity, err error) error {
		if err != nil {
			return err
		}
		if mt, _, _ := p.Header.ContentType(); !strings.HasPrefix(mt, "multipart/") {
			b, err := io.ReadAll(p.Body)
			if err != nil {
				return err
			}
			out[mt] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
