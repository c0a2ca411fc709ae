package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The scale benchmark (issue 17, item 5; scripts/scale runs it) fills a
// store through the API with the attributes of storetest's TestLogScale
// and then times the email log's filters over HTTPS. It is two runs of
// this command, -scale fill and then -scale log, so that the script can
// run ANALYZE on PostgreSQL between them; the fill hands the log run what
// it learned (when each batch was sent, which values it used) in a state
// file.

// scaleState is what the fill learned, for the log run.
type scaleState struct {
	// Messages is how many the fill added, Batch how many a request held.
	Messages, Batch int
	// Sent and Answered are when each batch's request was sent and
	// answered, in the order of the fill (batch i holds messages i*Batch
	// onwards): every message of batch i was created between the two, so
	// they place since (Sent) and until (Answered) at a message.
	Sent, Answered []time.Time
	// Domain is the senders' domain; User the recipient of the fill's
	// middle message, who has about 20.
	Domain, User string
	// Ops and Kind count the accepted messages to ops@example.net and
	// tagged kind:k3, to place the cursors of those filters.
	Ops, Kind int64
	// Failed counts the items the server did not accept.
	Failed int64
}

// scaleItem is one send of the fill: a batch item of POST /v1/send/batch.
type scaleItem struct {
	From      string            `json:"from"`
	To        string            `json:"to"`
	Subject   string            `json:"subject,omitempty"`
	HTML      string            `json:"html,omitempty"`
	Template  string            `json:"template,omitempty"`
	Variables map[string]string `json:"variables,omitempty"`
	Category  string            `json:"category,omitempty"`
	Tags      map[string]string `json:"tags"`
}

// The fixed values the log run filters on.
const (
	scaleOps      = "ops@example.net"
	scaleKind     = "k3"
	scaleTemplate = "welcome"
)

// scaleItems makes batch b of a fill of n messages. Each batch draws from
// a generator seeded by its number, so that a fill stores the same
// attributes whatever order its clients send the batches in, and the
// attributes are drawn independently, as in TestLogScale: from one of 100
// senders; tags kind (10 values), campaign (100 values) and order (2
// messages a value); a tenth to ops@example.net, the rest to one of n/20
// addresses; 20% marketing; 5% from the template "welcome".
func scaleItems(b, batch, n int, domain string) []scaleItem {
	rng := rand.New(rand.NewPCG(17, uint64(b)))
	var items []scaleItem
	for i := b * batch; i < min(n, (b+1)*batch); i++ {
		it := scaleItem{
			From: fmt.Sprintf("sender%d@%s", rng.IntN(100), domain),
			To:   fmt.Sprintf("rcpt%d@example.net", rng.IntN(max(1, n/20))),
			Tags: map[string]string{
				"kind":     fmt.Sprintf("k%d", rng.IntN(10)),
				"campaign": fmt.Sprintf("c%d", rng.IntN(100)),
				"order":    fmt.Sprintf("o%d", i/2),
			},
		}
		if rng.IntN(10) == 0 {
			it.To = scaleOps
		}
		if rng.IntN(5) == 0 {
			it.Category = "marketing"
		}
		if rng.IntN(20) == 0 {
			it.Template, it.Variables = scaleTemplate, map[string]string{"name": fmt.Sprintf("Customer %d", i)}
		} else {
			it.Subject, it.HTML = fmt.Sprintf("Your receipt #%d", i), "<p>Thanks for your order.</p>"
		}
		items = append(items, it)
	}
	return items
}

// scaleFill adds n messages through POST /v1/send/batch from clients
// clients, printing progress every 100,000 (every tenth below a million),
// and writes what the log run needs to statePath.
func scaleFill(c *http.Client, url, key, from string, n, clients, batch int, statePath string) {
	_, domain, ok := strings.Cut(from, "@")
	if !ok {
		fail("-from %q has no domain", from)
	}
	createScaleTemplate(c, url, key)
	st := scaleState{Messages: n, Batch: batch, Domain: domain}
	batches := (n + batch - 1) / batch
	st.Sent, st.Answered = make([]time.Time, batches), make([]time.Time, batches)
	// The first recipient from the middle on who is not ops@.
	for i := n / 2; i < n && st.User == ""; i++ {
		if to := scaleItems(i/batch, batch, n, domain)[i%batch].To; to != scaleOps {
			st.User = to
		}
	}
	step := int64(100000)
	if n < 1000000 {
		step = int64(max(1, n/10))
	}
	var next, accepted, failed, ops, kind atomic.Int64
	var firstErr sync.Once
	report := func(format string, args ...any) {
		firstErr.Do(func() { fmt.Fprintf(os.Stderr, "mailroom-load: first failure: "+format+"\n", args...) })
	}
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for {
				b := int(next.Add(1) - 1)
				if b >= batches {
					return
				}
				items := scaleItems(b, batch, n, domain)
				body, _ := json.Marshal(map[string]any{"messages": items})
				st.Sent[b] = time.Now()
				status, answer, err := post(c, url+"/v1/send/batch", key, body)
				st.Answered[b] = time.Now()
				var res struct {
					Data []struct{ Status, Error, Message string }
				}
				if err == nil && status == 200 {
					err = json.Unmarshal(answer, &res)
				}
				if err != nil || status != 200 || len(res.Data) != len(items) {
					failed.Add(int64(len(items)))
					report("POST /v1/send/batch: %s", describe(status, answer, err))
					continue
				}
				var ok int64
				for i, d := range res.Data {
					if d.Status == "" {
						failed.Add(1)
						report("POST /v1/send/batch: an item answered %s: %s", d.Error, d.Message)
						continue
					}
					ok++
					if items[i].To == scaleOps {
						ops.Add(1)
					}
					if items[i].Tags["kind"] == scaleKind {
						kind.Add(1)
					}
				}
				done := accepted.Add(ok)
				if done/step > (done-ok)/step {
					secs := time.Since(start).Seconds()
					fmt.Printf("filled %d of %d in %.0fs: %.0f messages/s\n", done, n, secs, float64(done)/secs)
				}
			}
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	st.Ops, st.Kind, st.Failed = ops.Load(), kind.Load(), failed.Load()
	fmt.Printf("filled %d of %d in %.1fs: %.0f messages/s, batches of %d, %d clients (%d failed)\n",
		accepted.Load(), n, secs, float64(accepted.Load())/secs, batch, clients, st.Failed)
	out, _ := json.Marshal(st)
	if err := os.WriteFile(statePath, out, 0o644); err != nil {
		fail("write -scale-state: %v", err)
	}
	if st.Failed > 0 {
		fail("%d messages were not accepted", st.Failed)
	}
}

// createScaleTemplate saves the template the fill sends 5% of its
// messages with (the template filter needs messages rendered from one); a
// store that has it already keeps it.
func createScaleTemplate(c *http.Client, url, key string) {
	body, _ := json.Marshal(map[string]string{
		"name": scaleTemplate, "subject": "Welcome, {{name}}", "html": "<p>Hello {{name}}, welcome aboard.</p>",
	})
	status, answer, err := post(c, url+"/v1/templates", key, body)
	if err != nil || status != 201 && status != 409 {
		fail("create the template %q: %s", scaleTemplate, describe(status, answer, err))
	}
}
