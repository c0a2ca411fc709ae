// Command mailroom-load measures a running Mailroom: it sends messages
// through the HTTPS API over kept-alive connections from many goroutines,
// and reports accepted sends per second, accept latency percentiles, and,
// once the log shows nothing left queued or deferred, delivered messages
// per second. scripts/bench starts a server and an SMTP sink and runs it.
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
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	url := flag.String("url", "https://localhost:8443", "the server")
	key := flag.String("key", os.Getenv("MAILROOM_KEY"), "an API key with the send scope")
	cacert := flag.String("cacert", "mailroom-data/tls/cert.pem", "the server's certificate")
	from := flag.String("from", "load@mailroom.test", "the sender, on a verified domain")
	n := flag.Int("n", 10000, "messages to send")
	concurrency := flag.Int("c", 64, "concurrent clients")
	wait := flag.Duration("wait", 5*time.Minute, "how long to wait for delivery to finish; 0 does not wait (an API-only node)")
	flag.Parse()

	pem, err := os.ReadFile(*cacert)
	if err != nil {
		fail("read --cacert: %v", err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots}, MaxIdleConnsPerHost: *concurrency, ForceAttemptHTTP2: false,
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}, // HTTP/1.1: one connection per client
	}}

	var next atomic.Int64
	var failed atomic.Int64
	latencies := make([][]time.Duration, *concurrency)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range *concurrency {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(*n) {
					return
				}
				body, _ := json.Marshal(map[string]any{
					"from": *from, "to": fmt.Sprintf("user%d@example.net", i),
					"subject": fmt.Sprintf("Your receipt #%d", i), "html": "<p>Thanks for your order.</p>",
					"tags": map[string]string{"run": "load"},
				})
				t0 := time.Now()
				status, err := post(client, *url+"/v1/send", *key, body)
				if err != nil || status != 200 {
					failed.Add(1)
					continue
				}
				latencies[w] = append(latencies[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	acceptElapsed := time.Since(start)
	all := slices.Concat(latencies...)
	slices.Sort(all)
	ok := len(all)
	fmt.Printf("accepted %d of %d in %.2fs: %.0f sends/s (%d failed), %d clients\n",
		ok, *n, acceptElapsed.Seconds(), float64(ok)/acceptElapsed.Seconds(), failed.Load(), *concurrency)
	if ok > 0 {
		fmt.Printf("accept latency: p50 %s  p90 %s  p99 %s  max %s\n",
			pct(all, 0.50), pct(all, 0.90), pct(all, 0.99), all[len(all)-1])
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

func post(c *http.Client, url, key string, body []byte) (int, error) {
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
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
