package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/smtp/smtptest"
)

// world is the outside a node delivers into: a DNS server that says where
// example.net's mail goes, and that mail server.
type world struct {
	dns *dnstest.Server
	mx  *smtptest.Server
}

func newWorld(t *testing.T) *world {
	w := &world{dns: dnstest.Start(t), mx: smtptest.Start(t)}
	w.dns.SetA("mail.operator.test", "127.0.0.1")
	w.dns.SetMX("example.net", 10, "mx.example.net")
	w.dns.SetA("mx.example.net", "127.0.0.1")
	return w
}

// flags point a node at the world.
func (w *world) flags() []string {
	return []string{"--dns-server", w.dns.Addr(), "--hostname", "mail.operator.test",
		"--smtp-port", fmt.Sprint(w.mx.Port()), "--retry-min-delay", "200ms"}
}

// verifyDomain adds name through node s, publishes its records in the
// world's DNS and verifies it.
func (w *world) verifyDomain(t *testing.T, c *apitest.Client, key, name string) {
	t.Helper()
	publishAndVerify(t, w.dns, c, key, name)
}

// receivedByMessageID counts the copies of each message the server got.
func (w *world) receivedByMessageID() map[string]int {
	out := map[string]int{}
	for _, m := range w.mx.Messages() {
		out[messageIDOf(m.Data)] += len(m.Rcpts)
	}
	return out
}

func messageIDOf(data []byte) string {
	for _, line := range strings.Split(string(data), "\r\n") {
		if v, ok := strings.CutPrefix(line, "Message-ID: "); ok {
			return v
		}
		if line == "" {
			break
		}
	}
	return ""
}

// Two nodes on one PostgreSQL deliver 1,000 messages, each exactly once.
func TestTwoNodesDeliverOnce(t *testing.T) {
	dbURL := postgresOrSkip(t)
	w := newWorld(t)
	work := t.TempDir()
	secret := "--secret-key=" + strings.Repeat("A", 43) + "="
	args := append(w.flags(), "--database-url", dbURL, secret)
	key := printedKey.FindString(cli(t, work, nil, "accounts", "create", "acme", "--database-url", dbURL))
	// 1,000 sends as fast as 16 clients go: above the default 100 a second.
	cli(t, work, nil, "accounts", "update", "acme", "--rate", "100000", "--burst", "100000", "--database-url", dbURL)
	a := startServer(t, filepath.Join(work, "a"), args...)
	b := startServer(t, filepath.Join(work, "b"), args...)
	w.verifyDomain(t, a.client, key, "shop.example")

	const total = 1000
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range total {
		node := a
		if i%2 == 1 {
			node = b
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			r := node.client.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: key, Body: map[string]any{
				"from": "orders@shop.example", "to": fmt.Sprintf("r%d@example.net", i), "subject": "Order", "text": "Thanks"}})
			if r.Status != 200 {
				t.Errorf("send %d: %d %s", i, r.Status, r.Body)
			}
		})
	}
	wg.Wait()
	poll.Within(2*time.Minute, func() bool { return len(w.receivedByMessageID()) >= total })
	got := w.receivedByMessageID()
	if len(got) != total {
		t.Fatalf("%d of %d messages arrived", len(got), total)
	}
	for id, n := range got {
		if n != 1 {
			t.Errorf("message %s arrived %d times", id, n)
		}
	}
}
