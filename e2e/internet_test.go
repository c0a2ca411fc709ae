package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/smtp/smtptest/internet"
	"github.com/mailroom/mailroom/storetest"
)

// The harness of the tests of how mail leaves (issue 28): a node that
// delivers directly into an internet in a box (package
// smtp/smtptest/internet), its receiving sites on loopback addresses of
// their own, found through the box's DNS server.

// operatorHost is the nodes' --hostname, with forward and reverse records
// in the box's DNS, so that serve's reverse DNS check of it holds.
const operatorHost = "mail.operator.test"

// netNode is a node delivering into a box, with the account acme and its
// verified domain shop.example.
type netNode struct {
	*server
	box     *internet.Box
	key     string
	work    string   // the directory commands run in
	storage []string // the flags that name its store, for commands
}

// quickSpec is the box of the tests: the standard one with transactions
// of 20 to 60 ms, so that hundreds of messages take seconds.
func quickSpec() internet.Spec {
	spec := internet.Standard()
	spec.Latency = [2]time.Duration{20 * time.Millisecond, 60 * time.Millisecond}
	return spec
}

// startNetNode starts a node on eng delivering into box, with flags added
// (the retry schedule starts at an hour unless flags say otherwise, so
// that mail arrives in a test's time only by the paths under test).
func startNetNode(t *testing.T, eng storetest.Engine, box *internet.Box, flags ...string) *netNode {
	t.Helper()
	box.SetHost(operatorHost, "127.0.0.1")
	work := t.TempDir()
	dataDir := filepath.Join(work, "data")
	storage := append([]string{"--data-dir", dataDir}, eng.Storage(t)...)
	args := append(append(box.Flags(), "--hostname", operatorHost, "--delivery", "direct", "--retry-min-delay", "1h"), storage...)
	// The account first, its request rate lifted (the tests send hundreds
	// at once), so that the node reads the limit at start rather than
	// within its next 5 s.
	key := printedKey.FindString(cli(t, work, nil, append([]string{"accounts", "create", "acme"}, storage...)...))
	cli(t, work, nil, append([]string{"accounts", "update", "acme", "--rate", "100000", "--burst", "100000"}, storage...)...)
	// Later flags win, so a test's own --retry-min-delay replaces ours.
	node := startServer(t, dataDir, append(args, flags...)...)
	publishAndVerify(t, box.DNS, node.client, key, "shop.example")
	return &netNode{server: node, box: box, key: key, work: work, storage: storage}
}

// publishAndVerify adds name through c, publishes its records in dns and
// verifies it.
func publishAndVerify(t *testing.T, dns *dnstest.Server, c *apitest.Client, key, name string) {
	t.Helper()
	r := c.Do(apitest.Request{Method: "POST", Path: "/v1/domains", Key: key, Body: map[string]string{"name": name}})
	var d struct {
		Records []mailroom.DNSRecord `json:"records"`
	}
	if err := json.Unmarshal(r.Body, &d); err != nil || r.Status != 201 {
		t.Fatalf("add domain: %d %s", r.Status, r.Body)
	}
	for _, rec := range d.Records {
		if rec.Type == "MX" {
			dns.SetMX(rec.Name, uint16(*rec.Priority), rec.Value)
		} else {
			dns.SetTXT(rec.Name, rec.Value)
		}
	}
	if r := c.Do(apitest.Request{Method: "POST", Path: "/v1/domains/" + name + "/verify", Key: key}); r.Str("status") != "verified" {
		t.Fatalf("verify: %s", r.Body)
	}
}

// sendTo sends one message to each recipient from 8 clients at once and
// returns the message ids by recipient.
func (n *netNode) sendTo(t *testing.T, recipients []string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, to := range recipients {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			r := n.client.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: n.key, Body: map[string]any{
				"from": "orders@shop.example", "to": to, "subject": fmt.Sprintf("Order %d", i), "text": "Thanks"}})
			if r.Status != 200 {
				t.Errorf("send to %s: %d %s", to, r.Status, r.Body)
				return
			}
			mu.Lock()
			ids[to] = r.Str("messageId")
			mu.Unlock()
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return ids
}

// recipients are n addresses of site, at its domains in turn.
func recipients(site *internet.Site, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = site.Recipient(i)
	}
	return out
}

// waitDelivered polls until site has received n recipients' messages.
func waitDelivered(t *testing.T, site *internet.Site, n int, within time.Duration) {
	t.Helper()
	if !poll.Within(within, func() bool { return site.Delivered() >= n }) {
		t.Fatalf("%s received %d of %d within %v; %s", site.Name, site.Delivered(), n, within, site.Report())
	}
}

// logRecipient is what a test reads of a recipient in the email log.
type logRecipient struct {
	Address            string `json:"address"`
	Status             string `json:"status"`
	Attempts           int    `json:"attempts"`
	Site               string `json:"site"`
	LastDeferralReason string `json:"lastDeferralReason"`
	NextAttemptAt      string `json:"nextAttemptAt"`
}

// logEntry is a message of the email log, with its recipients.
type logEntry struct {
	ID         string         `json:"id"`
	Recipients []logRecipient `json:"recipients"`
}

func (n *netNode) message(t *testing.T, id string) logEntry {
	t.Helper()
	r := n.client.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: n.key})
	var m logEntry
	if err := json.Unmarshal(r.Body, &m); err != nil || r.Status != 200 {
		t.Fatalf("GET /v1/messages/%s: %d %s", id, r.Status, r.Body)
	}
	return m
}

// deferral is an email.deferred event as GET /v1/events lists it.
type deferral struct {
	ID        string `json:"id"`
	MessageID string `json:"messageId"`
	Recipient string `json:"recipient"`
	Data      struct {
		Reason       string `json:"reason"`
		Site         string `json:"site"`
		SMTPCode     int    `json:"smtpCode"`
		SMTPResponse string `json:"smtpResponse"`
	} `json:"data"`
}

// deferrals are every email.deferred event of the account, newest first.
func (n *netNode) deferrals(t *testing.T) []deferral {
	t.Helper()
	var all []deferral
	cursor := ""
	for {
		path := "/v1/events?type=email.deferred&limit=100"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		r := n.client.Do(apitest.Request{Method: "GET", Path: path, Key: n.key})
		var page struct {
			Data       []deferral `json:"data"`
			NextCursor *string    `json:"nextCursor"`
		}
		if err := json.Unmarshal(r.Body, &page); err != nil || r.Status != 200 {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		all = append(all, page.Data...)
		if page.NextCursor == nil {
			return all
		}
		cursor = *page.NextCursor
	}
}

// checkDeferralReasons fails the test unless every email.deferred event
// carries one of the reasons, and every recipient of ids that was ever
// deferred shows its last reason in the log. It returns the count of each
// reason among the events.
func (n *netNode) checkDeferralReasons(t *testing.T, ids map[string]string) map[string]int {
	t.Helper()
	reasons := map[string]int{}
	deferred := map[string]bool{}
	for _, d := range n.deferrals(t) {
		if !slices.Contains(mailroom.DeferralReasons, mailroom.DeferralReason(d.Data.Reason)) {
			t.Errorf("email.deferred %s for %s has reason %q (%d %s)", d.ID, d.Recipient, d.Data.Reason, d.Data.SMTPCode, d.Data.SMTPResponse)
		}
		reasons[d.Data.Reason]++
		deferred[d.MessageID+" "+d.Recipient] = true
	}
	for to, id := range ids {
		if !deferred[id+" "+to] {
			continue
		}
		for _, r := range n.message(t, id).Recipients {
			if r.Address == to && r.LastDeferralReason == "" {
				t.Errorf("%s was deferred, and the log shows no lastDeferralReason: %+v", to, r)
			}
		}
	}
	return reasons
}

// sitesJSON runs `mailroom sites --json` against the node's metrics
// listener.
func (n *netNode) sitesJSON(t *testing.T) []siteState {
	t.Helper()
	out := cli(t, n.work, nil, "sites", "--json", "--metrics-url", "http://"+n.metricsAddr(t))
	var sites []siteState
	if err := json.Unmarshal([]byte(out), &sites); err != nil {
		t.Fatalf("mailroom sites --json: %v\n%s", err, out)
	}
	return sites
}

// siteState is one site of `mailroom sites --json` (docs/api.md "Reading a
// site's state").
type siteState struct {
	Site           string   `json:"site"`
	Source         string   `json:"source"`
	MX             []string `json:"mx"`
	Rate           float64  `json:"rate"`
	MaxRate        float64  `json:"maxRate"`
	Connections    int      `json:"connections"`
	MaxConnections int      `json:"maxConnections"`
	SuspendedUntil *string  `json:"suspendedUntil"`
	RecentReplies  []struct {
		At       string `json:"at"`
		Code     int    `json:"code"`
		Enhanced string `json:"enhanced"`
		Text     string `json:"text"`
		MX       string `json:"mx"`
	} `json:"recentReplies"`
}

// metricsAddr is the node's metrics listener, from its log.
func (s *server) metricsAddr(t *testing.T) string {
	t.Helper()
	var m []string
	if !poll.Within(10*time.Second, func() bool { m = metricsLine.FindStringSubmatch(s.Stderr()); return m != nil }) {
		t.Fatalf("no metrics address in the log:\n%s", s.Stderr())
	}
	return m[1] + m[2]
}

// siteNamed finds a site of `mailroom sites --json` by name, or by one of
// its MX hosts.
func siteNamed(sites []siteState, name string) *siteState {
	for i, s := range sites {
		if s.Site == name || slices.Contains(s.MX, name) || strings.Contains(s.Site, name) {
			return &sites[i]
		}
	}
	return nil
}
