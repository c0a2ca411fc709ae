package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/webhook"
)

// webhookSink is a local receiver for -webhooks: it verifies each request
// as a consumer would (webhook.Verify), and keeps when each event
// arrived and how long after its own timestamp (the lag from the state
// change to its webhook; both clocks are this machine's).
type webhookSink struct {
	key []byte
	mu  sync.Mutex
	// seen holds each event id once: deliveries are at least once.
	seen       map[string]bool
	lags       []time.Duration
	first      time.Time
	last       time.Time
	dups, bads int
	srv        *http.Server
	url        string
}

func startWebhookSink() *webhookSink {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail("webhook receiver: %v", err)
	}
	s := &webhookSink{seen: map[string]bool{}, url: "http://" + ln.Addr().String() + "/hook"}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s
}

func (s *webhookSink) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	now := time.Now()
	id := r.Header.Get("webhook-id")
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || webhook.Verify(s.key, id, r.Header.Get("webhook-timestamp"), r.Header.Get("webhook-signature"), body, now) != nil {
		s.bads++
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var p struct {
		Timestamp time.Time `json:"timestamp"`
	}
	_ = json.Unmarshal(body, &p)
	if s.seen[id] {
		s.dups++
		return
	}
	s.seen[id] = true
	s.lags = append(s.lags, now.Sub(p.Timestamp))
	if s.first.IsZero() {
		s.first = now
	}
	s.last = now
}

func (s *webhookSink) count() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.seen) }

// createEndpoint subscribes the sink to email.queued: one event a send,
// written in the transaction that accepts it.
func (s *webhookSink) createEndpoint(c *http.Client, url, key string) string {
	body, _ := json.Marshal(map[string]any{"url": s.url, "events": []string{mailroom.EventEmailQueued}, "description": "mailroom-load"})
	status, answer, err := post(c, url+"/v1/webhooks", key, body)
	if err != nil || status != 201 {
		fail("create the webhook (the server needs --webhooks-allow-private, or --dev): %s", describe(status, answer, err))
	}
	var e struct{ ID, Secret string }
	if err := json.Unmarshal(answer, &e); err != nil {
		fail("create the webhook: %v", err)
	}
	if s.key, err = webhook.ParseSecret(e.Secret); err != nil {
		fail("create the webhook: %v", err)
	}
	return e.ID
}

// report waits for an event per accepted send and prints the figures.
func (s *webhookSink) report(c *http.Client, url, key, endpoint string, accepted int, start time.Time, wait time.Duration) {
	deadline := time.Now().Add(wait)
	for s.count() < accepted && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lags := slices.Clone(s.lags)
	slices.Sort(lags)
	n := len(s.seen)
	if n == 0 {
		fail("no webhook arrived within %s", wait)
	}
	elapsed := s.last.Sub(start)
	fmt.Printf("webhooks: %d of %d events delivered in %.2fs from the first send: %.0f events/s (%d repeats, %d failed verification)\n",
		n, accepted, elapsed.Seconds(), float64(n)/elapsed.Seconds(), s.dups, s.bads)
	fmt.Printf("webhook lag (event to arrival): p50 %s  p90 %s  p99 %s  max %s\n",
		pct(lags, 0.50), pct(lags, 0.90), pct(lags, 0.99), pct(lags, 1))
	req, _ := http.NewRequest("DELETE", url+"/v1/webhooks/"+endpoint, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if resp, err := c.Do(req); err == nil {
		resp.Body.Close()
	}
	if n < accepted {
		fail("%d events did not arrive within %s", accepted-n, wait)
	}
}
