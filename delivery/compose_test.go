package delivery_test

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/textproto"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-msgauth/dkim"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// countingComposer is the real composer, counting its calls: each call is
// one rendering and one RSA signature.
type countingComposer struct {
	mailroom.Composer
	calls atomic.Int64
}

func (c *countingComposer) Compose(m *mailroom.Message, key mailroom.DKIMKey) ([]byte, error) {
	c.calls.Add(1)
	return c.Composer.Compose(m, key)
}

// countingStore is the real store, counting the reads of a message's
// content (MessageForDelivery is the only store call that reads it on the
// delivery path).
type countingStore struct {
	mailroom.MessageStore
	contentReads atomic.Int64
}

func (s *countingStore) MessageForDelivery(ctx context.Context, id string) (*mailroom.Message, []byte, error) {
	s.contentReads.Add(1)
	return s.MessageStore.MessageForDelivery(ctx, id)
}

// TestMessageToThreeDomainsIsComposedOnce proves docs/design.md "How a message travels"'s "compose
// and sign in the worker, once": a message to recipients at three domains
// is read, composed and RSA-signed once, and the three receivers get the
// same bytes with one DKIM-Signature that verifies against the published
// key. Signing per destination would cost k RSA signatures for k domains
// and could give receivers different bytes.
func TestMessageToThreeDomainsIsComposedOnce(t *testing.T) {
	w := newWorld(t, storetest.SQLite.Open(t))
	domains := []string{"a.example", "b.example", "c.example"}
	for _, d := range domains {
		w.mailDomain(d)
	}
	composer := &countingComposer{Composer: realComposer()}
	store := &countingStore{MessageStore: w.store}
	d, transport := newDeliverer(store, w.domains, composer, w.dns.Addr(), w.mx.Port())
	defer transport.Close()

	to := []string{"ann@a.example", "bob@a.example", "carol@b.example", "dave@c.example"}
	id := w.send(t, time.Now(), &mailroom.SendRequest{
		From: "Shop <orders@" + sendingDomain + ">", To: to, Subject: "Your receipt", Text: "Thanks.",
		Attachments: []mailroom.SendAttachment{attachment(64 << 10)},
	})
	if n := deliverAll(t, d); n != len(to) {
		t.Fatalf("claimed %d recipients, want %d", n, len(to))
	}
	got := w.mx.WaitMessages(t, len(domains), 10*time.Second)
	if len(got) != len(domains) {
		t.Fatalf("received %d transactions, want one per domain (%d)", len(got), len(domains))
	}

	if n := composer.calls.Load(); n != 1 {
		t.Errorf("composed and signed %d times for %d domains, want once", n, len(domains))
	}
	if n := store.contentReads.Load(); n != 1 {
		t.Errorf("read the message's content %d times for %d domains, want once", n, len(domains))
	}
	var rcpts []string
	for i, m := range got {
		rcpts = append(rcpts, m.Rcpts...)
		if !bytes.Equal(m.Data, got[0].Data) {
			t.Errorf("transaction %d (%v) got other bytes than transaction 0 (%v)", i, m.Rcpts, got[0].Rcpts)
		}
	}
	slices.Sort(rcpts)
	if !slices.Equal(rcpts, to) {
		t.Errorf("receivers accepted %v, want %v", rcpts, to)
	}
	if n := headerCount(t, got[0].Data, "DKIM-Signature"); n != 1 {
		t.Errorf("%d DKIM-Signature fields, want 1", n)
	}
	// Checked the way a receiver checks it, against the key in DNS.
	v, err := dkim.VerifyWithOptions(bytes.NewReader(got[0].Data), &dkim.VerifyOptions{
		LookupTXT: func(name string) ([]string, error) { return lookupTXT(w.dns.Addr(), name) },
	})
	if err != nil || len(v) != 1 || v[0].Err != nil || v[0].Domain != sendingDomain {
		t.Fatalf("DKIM: %v %+v", err, v)
	}
	m, _, err := w.store.Message(context.Background(), w.acct.ID, id)
	if err != nil || m.Status != mailroom.MessageDelivered {
		t.Fatalf("message: %v, status %v, want delivered", err, m)
	}
}

// TestDeliveryAllocationIsBoundedByMessage proves that delivery's work is
// bounded by the message, not by message × recipients, with a message
// carrying a 5 MiB attachment: the claim must not read the content at all
// (before this was fixed, one claim of such a message to 50 recipients
// allocated 667 MiB), and delivering it to 50 recipients must allocate
// about as much as delivering it to one.
// An absolute bound keeps copies of the message from creeping in: 20× the
// signed message, where 13.5× was measured (reading the content once,
// about 3×; composing and signing, about 6×; storing and re-reading the
// signed bytes, 2×; the receiver in this process, about 2.3×).
//
// The recipients share one domain, so that the receiver in this process
// (which keeps what it receives, and so allocates a copy or two per
// transaction) takes one copy in either case: TotalAlloc counts every
// goroutine's allocations, the receiver's too. Delivery to many domains is
// measured by BenchmarkDeliveryRSS, with the receiver in another process.
// Nothing else runs in this test binary meanwhile (no test here is
// parallel).
func TestDeliveryAllocationIsBoundedByMessage(t *testing.T) {
	if testing.Short() {
		t.Skip("delivers a 5 MiB attachment twice")
	}
	const size = 5 << 20
	w := newWorld(t, storetest.SQLite.Open(t))
	w.mailDomain("example.net")
	d, transport := newDeliverer(w.store, w.domains, realComposer(), w.dns.Addr(), w.mx.Port())
	defer transport.Close()
	// Warm up (prepared statements, the DKIM key cache, the TLS code)
	// with a small message, so that only the large ones are measured.
	w.send(t, time.Now(), &mailroom.SendRequest{From: "orders@" + sendingDomain, To: []string{"warm@example.net"}, Subject: "Hi", Text: "Hi"})
	deliverAll(t, d)
	received := 1

	type measured struct{ msg, claim, delivery uint64 }
	deliver := func(rcpts int) measured {
		t.Helper()
		w.send(t, time.Now(), &mailroom.SendRequest{
			From: "orders@" + sendingDomain, To: recipientsAt(rcpts, "example.net"), Subject: "Your report", Text: "Attached.",
			Attachments: []mailroom.SendAttachment{attachment(size)},
		})
		var m measured
		// The claim alone, handed back unattempted afterwards.
		before := totalAlloc()
		claimed, err := w.store.ClaimDueRecipients(context.Background(), mailroom.Claim{
			Node: "node_test", Now: time.Now().UTC(), Lease: time.Minute, Limit: 50})
		m.claim = totalAlloc() - before
		if err != nil || len(claimed) != rcpts {
			t.Fatalf("claim: %v, %d recipients, want %d", err, len(claimed), rcpts)
		}
		if err := w.store.ReleaseClaims(context.Background(), claimed[0].ClaimToken, claimed, nil); err != nil {
			t.Fatal(err)
		}

		before = totalAlloc()
		n := deliverAll(t, d)
		m.delivery = totalAlloc() - before
		if n != rcpts {
			t.Fatalf("delivered to %d recipients, want %d", n, rcpts)
		}
		received++
		got := w.mx.WaitMessages(t, received, 10*time.Second)[received-1]
		if len(got.Rcpts) != rcpts {
			t.Fatalf("receiver accepted %d recipients, want %d", len(got.Rcpts), rcpts)
		}
		m.msg = uint64(len(got.Data))
		t.Logf("%d recipients: message %.1f MiB signed (attachment %d MiB); claim allocated %.2f MiB, delivery %.1f MiB (%.1f× the message)",
			rcpts, mib(m.msg), size>>20, mib(m.claim), mib(m.delivery), float64(m.delivery)/float64(m.msg))
		return m
	}
	one, fifty := deliver(1), deliver(mailroom.MaxRecipients)

	// A claim of 50 rows of small columns takes well under a MiB; reading
	// the content would take several times the attachment.
	if fifty.claim > size/8 {
		t.Errorf("the claim allocated %.1f MiB, over %.1f MiB: it reads the message's content", mib(fifty.claim), mib(size/8))
	}
	// 49 more recipients add their rows, RCPT commands and outcomes:
	// kilobytes. But their longer To field can cost one more doubling of
	// the composer's growing buffer (8 MiB more was measured, all in
	// bytes.growSlice under compose), so the slack is two copies of the
	// message; reading or composing per recipient would cost 49 × several.
	if fifty.delivery > one.delivery+2*fifty.msg {
		t.Errorf("delivery to 50 recipients allocated %.1f MiB, to one %.1f MiB: work grows with the recipients",
			mib(fifty.delivery), mib(one.delivery))
	}
	if limit := 20 * fifty.msg; fifty.delivery > limit {
		t.Errorf("delivery allocated %.1f MiB, over 20× the %.1f MiB message", mib(fifty.delivery), mib(fifty.msg))
	}
}

// recipientsAt returns n addresses at domain.
func recipientsAt(n int, domain string) []string {
	return recipients(n, func(int) string { return domain })
}

func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

func mib[T uint64 | int](n T) float64 { return float64(n) / (1 << 20) }

// headerCount counts the fields named name in a message's header.
func headerCount(t *testing.T, data []byte, name string) int {
	t.Helper()
	h, err := textproto.NewReader(bufio.NewReader(bytes.NewReader(data))).ReadMIMEHeader()
	if err != nil {
		t.Fatalf("header: %v", err)
	}
	return len(h.Values(name))
}

// lookupTXT asks the DNS server at addr, as a receiver would ask its own.
func lookupTXT(addr, name string) ([]string, error) {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", addr)
	}}
	txt, err := r.LookupTXT(context.Background(), name)
	return txt, err
}
