// Command mailroom-load measures a running Mailroom: it sends messages
// through the HTTPS API over kept-alive connections from many goroutines,
// and reports accepted sends per second, accept latency percentiles, and,
// once the log shows nothing left queued or deferred, delivered messages
// per second. With -batch N each request is one POST /v1/send/batch of N
// such messages, and it reports accepted messages per second, batches per
// second and batch latency percentiles instead. With -webhooks a local
// receiver subscribed to email.queued reports events delivered per second
// and the lag from each event to its arrival. With -serve-bare it loads
// nothing and is instead the bare HTTPS JSON handler that scripts/bench
// compares Mailroom's accepts with. scripts/bench starts a server and an
// SMTP sink and runs it. With -scale fill and then -scale log it fills a
// store with messages of many senders, recipients and tags and times the
// email log's filters (scale.go; scripts/scale runs it). With -internet it
// starts an internet in a box and a mailroom serve delivering to it, and
// times the delivery of -n messages to its sites (internet.go;
// scripts/bench-internet runs it).
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// message is the small send request of every load: one HTML part, one
// recipient, one tag. A batch item is the same object.
type message struct {
	From    string            `json:"from"`
	To      string            `json:"to"`
	Subject string            `json:"subject"`
	HTML    string            `json:"html"`
	Tags    map[string]string `json:"tags"`
}

func main() {
	url := flag.String("url", "https://localhost:8443", "the server")
	key := flag.String("key", os.Getenv("MAILROOM_KEY"), "an API key with the send scope")
	cacert := flag.String("cacert", "mailroom-data/tls/cert.pem", "the server's certificate")
	from := flag.String("from", "load@mailroom.test", "the sender, on a verified domain")
	n := flag.Int("n", 10000, "messages to send")
	concurrency := flag.Int("c", 64, "concurrent clients")
	batch := flag.Int("batch", 0, "messages per request to POST /v1/send/batch (the last one may hold fewer); 0 sends one message per request to POST /v1/send")
	wait := flag.Duration("wait", 5*time.Minute, "how long to wait for delivery to finish; 0 does not wait (an API-only node)")
	smtpAddr := flag.String("smtp", "", "submit over SMTP submission at `HOST:PORT` (STARTTLS, AUTH PLAIN with -key) instead of the HTTPS API, -c connections, one message after another on each")
	rate := flag.Float64("rate", 0, "send at most this many requests a second in all (0: as fast as the clients go), to measure latency and webhook lag below saturation")
	webhooks := flag.Bool("webhooks", false, "subscribe a local receiver to email.queued and report events delivered per second and the lag from each event to its arrival (the server needs --webhooks-allow-private or --dev)")
	bare := flag.String("serve-bare", "", "load nothing: serve a bare POST /v1/send at `HOST:PORT` (no storage, a self-signed certificate in ./mailroom-data/tls) until killed, the reference of scripts/bench's accept ratio")
	scale := flag.String("scale", "", "the scale benchmark: `fill` adds -n messages of 100 senders, many recipients and tags through POST /v1/send/batch (-batch, 500 if 0) and writes -scale-state; log reads it and times GET /v1/messages's filters")
	statePath := flag.String("scale-state", "scale-state.json", "the file -scale fill writes and -scale log reads")
	internetRun := flag.Bool("internet", false, "the delivery benchmark that looks like the internet: start an internet in a box and -mailroom serve delivering to it (flags after -- go to serve), send -n messages from -c clients to its sites, and report the time to deliver them all and the throttle replies (internet.go; scripts/bench-internet runs it)")
	var inet internetFlags
	inet.register(flag.CommandLine)
	flag.Parse()
	if *internetRun {
		runInternet(inet, *n, *concurrency, *wait, flag.Args())
		return
	}
	if *bare != "" {
		serveBare(*bare)
		return
	}
	if *n < 0 || *concurrency < 1 || *batch < 0 {
		fail("-n must be at least 0, -c at least 1, -batch at least 0")
	}
	if *scale != "" && *scale != "fill" && *scale != "log" {
		fail("-scale is fill or log, not %q", *scale)
	}
	if *scale == "fill" && *batch == 0 {
		*batch = 500
	}

	pem, err := os.ReadFile(*cacert)
	if err != nil {
		fail("read --cacert: %v", err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	// A batch is up to 500 messages committed before the answer, and all
	// the clients' batches wait on the same store: give it longer.
	timeout := 30 * time.Second
	if *batch > 0 {
		timeout = 5 * time.Minute
	}
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots}, MaxIdleConnsPerHost: *concurrency, ForceAttemptHTTP2: false,
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}, // HTTP/1.1: one connection per client
	}}
	msg := func(i int64) message {
		return message{
			From: *from, To: fmt.Sprintf("user%d@example.net", i),
			Subject: fmt.Sprintf("Your receipt #%d", i), HTML: "<p>Thanks for your order.</p>",
			Tags: map[string]string{"run": "load"},
		}
	}

	var next atomic.Int64     // the last message claimed by a client, from 1
	var accepted atomic.Int64 // messages the server accepted
	var failed atomic.Int64   // messages it did not: non-200 answers, errors, failed batch items
	var badBatch atomic.Int64 // batch requests not answered 200
	var firstErr sync.Once    // says what the first failure was, on stderr
	report := func(format string, args ...any) {
		firstErr.Do(func() { fmt.Fprintf(os.Stderr, "mailroom-load: first failure: "+format+"\n", args...) })
	}
	switch *scale {
	case "fill":
		scaleFill(client, *url, *key, *from, *n, *concurrency, *batch, *statePath)
		return
	case "log":
		scaleLog(client, *url, *key, *statePath)
		return
	}
	if *smtpAddr != "" {
		loadSMTP(*smtpAddr, *key, roots, *n, *concurrency, msg)
		return
	}
	var sink *webhookSink
	var endpoint string
	if *webhooks {
		sink = startWebhookSink()
		endpoint = sink.createEndpoint(client, *url, *key)
	}
	latencies := make([][]time.Duration, *concurrency)
	pace := pacer(*rate)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range *concurrency {
		wg.Go(func() {
			for {
				pace()
				if *batch == 0 {
					i := next.Add(1)
					if i > int64(*n) {
						return
					}
					body, _ := json.Marshal(msg(i))
					t0 := time.Now()
					status, answer, err := post(client, *url+"/v1/send", *key, body)
					if err != nil || status != 200 {
						failed.Add(1)
						report("POST /v1/send: %s", describe(status, answer, err))
						continue
					}
					accepted.Add(1)
					latencies[w] = append(latencies[w], time.Since(t0))
					continue
				}

				last := next.Add(int64(*batch))
				first := last - int64(*batch) + 1
				if first > int64(*n) {
					return
				}
				last = min(last, int64(*n))
				items := make([]message, 0, last-first+1)
				for i := first; i <= last; i++ {
					items = append(items, msg(i))
				}
				body, _ := json.Marshal(map[string]any{"messages": items})
				t0 := time.Now()
				status, answer, err := post(client, *url+"/v1/send/batch", *key, body)
				if err != nil || status != 200 {
					failed.Add(int64(len(items)))
					badBatch.Add(1)
					report("POST /v1/send/batch: %s", describe(status, answer, err))
					continue
				}
				elapsed := time.Since(t0)
				var res struct {
					Data []struct {
						Status  string `json:"status"`
						Error   string `json:"error"`
						Message string `json:"message"`
					} `json:"data"`
					Accepted int `json:"accepted"`
					Failed   int `json:"failed"`
				}
				if err := json.Unmarshal(answer, &res); err != nil {
					failed.Add(int64(len(items)))
					badBatch.Add(1)
					report("POST /v1/send/batch: 200 with an answer that is not the batch result: %v: %s", err, snippet(answer))
					continue
				}
				// Whatever the answer does not count as accepted failed.
				ok := min(max(res.Accepted, 0), len(items))
				accepted.Add(int64(ok))
				failed.Add(int64(len(items) - ok))
				latencies[w] = append(latencies[w], elapsed)
				switch {
				case res.Accepted+res.Failed != len(items) || len(res.Data) != len(items):
					report("POST /v1/send/batch of %d: accepted %d, failed %d, %d items in data", len(items), res.Accepted, res.Failed, len(res.Data))
				case ok < len(items):
					for _, d := range res.Data {
						if d.Error != "" || d.Status == "" {
							report("POST /v1/send/batch: an item answered %s: %s", d.Error, d.Message)
							break
						}
					}
				}
			}
		})
	}
	wg.Wait()
	acceptElapsed := time.Since(start)
	all := slices.Concat(latencies...)
	slices.Sort(all)
	ok := int(accepted.Load())
	secs := acceptElapsed.Seconds()
	if *batch == 0 {
		fmt.Printf("accepted %d of %d in %.2fs: %.0f sends/s (%d failed), %d clients\n",
			ok, *n, secs, float64(ok)/secs, failed.Load(), *concurrency)
		if len(all) > 0 {
			fmt.Printf("accept latency: p50 %s  p90 %s  p99 %s  max %s\n",
				pct(all, 0.50), pct(all, 0.90), pct(all, 0.99), pct(all, 1))
		}
	} else {
		requests := (*n + *batch - 1) / *batch
		fmt.Printf("accepted %d of %d in %.2fs: %.0f messages/s (%d failed), %d clients\n",
			ok, *n, secs, float64(ok)/secs, failed.Load(), min(*concurrency, requests))
		fmt.Printf("batches of %d: %d answered 200 of %d in %.2fs: %.1f batches/s (%d failed)\n",
			*batch, len(all), requests, secs, float64(len(all))/secs, badBatch.Load())
		if len(all) > 0 {
			fmt.Printf("batch latency: p50 %s  p90 %s  p99 %s  max %s\n",
				pct(all, 0.50), pct(all, 0.90), pct(all, 0.99), pct(all, 1))
		}
	}

	if sink != nil {
		sink.report(client, *url, *key, endpoint, ok, start, max(*wait, time.Minute))
	}
	if *wait == 0 {
		return
	}
	deadline := time.Now().Add(*wait)
	for time.Now().Before(deadline) {
		if empty(client, *url, *key, "queued") && empty(client, *url, *key, "deferred") {
			elapsed := time.Since(start)
			fmt.Printf("delivered %d in %.2fs from the first send: %.0f messages/s\n", ok, elapsed.Seconds(), float64(ok)/elapsed.Seconds())
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	fail("delivery did not finish within %s", *wait)
}

// pacer returns a function that each request calls first: with a rate, it
// lets the requests of all clients start at most rate a second, on a
// schedule (not in bursts); without, it returns at once.
func pacer(rate float64) func() {
	if rate <= 0 {
		return func() {}
	}
	var mu sync.Mutex
	interval := time.Duration(float64(time.Second) / rate)
	next := time.Now()
	return func() {
		mu.Lock()
		at := next
		next = next.Add(interval)
		mu.Unlock()
		time.Sleep(time.Until(at))
	}
}

// post sends body and returns the status and the answer's body.
func post(c *http.Client, url, key string, body []byte) (int, []byte, error) {
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	return resp.StatusCode, answer, err
}

func describe(status int, answer []byte, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d %s", status, snippet(answer))
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// empty reports whether the log holds no message with status.
func empty(c *http.Client, url, key, status string) bool {
	req, _ := http.NewRequest("GET", url+"/v1/messages?limit=1&status="+status, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var page struct{ Data []json.RawMessage }
	return json.NewDecoder(resp.Body).Decode(&page) == nil && resp.StatusCode == 200 && len(page.Data) == 0
}

func pct(sorted []time.Duration, p float64) time.Duration {
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p))].Round(10 * time.Microsecond)
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "mailroom-load: "+format+"\n", args...)
	os.Exit(1)
}
