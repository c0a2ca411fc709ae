package http_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/delivery"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/membudget"
	"github.com/mailroom/mailroom/rss"
	"github.com/mailroom/mailroom/storetest"
)

// BenchmarkRequestMemoryRSS measures the peak resident memory (the
// kernel's VmHWM) of an API server under hostile concurrency: 48 clients
// each sending 13 MiB sends (half of them 5 MiB of html and an 8 MiB
// attachment, half one 13 MiB attachment, all in base64) three times back
// to back without waiting for Retry-After, from one account or from four,
// with a 1 GiB budget; and, for comparison, 24 concurrent sends with no
// budget (the finding of issue 27). Run it with
//
//	go test ./http -run '^$' -bench BenchmarkRequestMemoryRSS -benchtime 1x
//
// Each case runs the server in a fresh child process (this test binary
// running TestRequestMemoryRSSChild): the real handlers on a real SQLite
// store over TLS, delivery off, with the budget and Go's soft memory
// limit set as `mailroom serve --request-memory 1GiB` sets them. The child
// makes the accounts and their verified domains, warms up with one small
// send from each, collects garbage and returns it to the OS, reads its
// RSS (idle) and resets the peak (writing 5 to /proc/self/clear_refs),
// then tells this process, which sends the load and then asks for the
// peak. The clients run in this process, so their memory is not counted.
//
// Reported per case: budget-MiB, idle-RSS-MiB, peak-RSS-MiB,
// above-idle-MiB, admitted (200) and refused (503 with Retry-After) sends,
// other answers (should be 0), and peak/budget.
func BenchmarkRequestMemoryRSS(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc/self/status and /proc/self/clear_refs (Linux)")
	}
	cases := []rssLoad{
		{name: "48-clients-1-account-1GiB", budget: 1 << 30, accounts: 1, clients: 48, rounds: 3},
		{name: "48-clients-4-accounts-1GiB", budget: 1 << 30, accounts: 4, clients: 48, rounds: 3},
		{name: "24-clients-1-account-no-budget", accounts: 1, clients: 24, rounds: 1},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var r rssLoadResult
			for range b.N {
				r = runRSSLoad(b, c)
			}
			b.ReportMetric(float64(c.budget)/(1<<20), "budget-MiB")
			b.ReportMetric(float64(r.Idle)/(1<<20), "idle-RSS-MiB")
			b.ReportMetric(float64(r.Peak)/(1<<20), "peak-RSS-MiB")
			b.ReportMetric(float64(r.Peak-r.Idle)/(1<<20), "above-idle-MiB")
			b.ReportMetric(float64(r.Admitted), "admitted")
			b.ReportMetric(float64(r.Refused), "refused-503")
			b.ReportMetric(float64(r.Other), "other")
			if c.budget > 0 {
				b.ReportMetric(float64(r.Peak)/float64(c.budget), "peak/budget")
			}
		})
	}
}

// rssLoad is one case: clients sending rounds sends each, spread over
// accounts, against a budget (0: none).
type rssLoad struct {
	name                      string
	budget                    int64
	accounts, clients, rounds int
}

type rssLoadResult struct {
	Idle, Peak               uint64
	Admitted, Refused, Other int
}

// rssServer is what the child tells the parent once it is ready.
type rssServer struct {
	URL   string
	Keys  []string
	Froms []string
}

const rssLoadEnv = "MAILROOM_REQUEST_RSS_CHILD"

func runRSSLoad(b *testing.B, c rssLoad) rssLoadResult {
	b.StopTimer()
	spec, _ := json.Marshal(c.childSpec())
	cmd := exec.Command(os.Args[0], "-test.run=^TestRequestMemoryRSSChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), rssLoadEnv+"="+string(spec))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Wait()
	lines := bufio.NewScanner(stdout)
	var srv rssServer
	var r rssLoadResult
	for lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "request-rss-ready: "); ok {
			if err := json.Unmarshal([]byte(rest), &srv); err != nil {
				b.Fatal(err)
			}
			break
		}
	}
	if srv.URL == "" {
		stdin.Close()
		b.Fatalf("the child did not start:\n%s", stderr.Bytes())
	}

	bodies := make([][]byte, 2*len(srv.Keys))
	for i, from := range srv.Froms {
		bodies[2*i] = largeSend(from, 13<<20, 0)
		bodies[2*i+1] = largeSend(from, 13<<20, 5<<20-100)
	}
	client := &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the child's test certificate, on loopback
		MaxConnsPerHost: 0, MaxIdleConnsPerHost: c.clients,
	}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	b.StartTimer()
	for i := range c.clients {
		account := i % len(srv.Keys)
		body := bodies[2*account+i/len(srv.Keys)%2]
		wg.Go(func() {
			for range c.rounds {
				req, _ := http.NewRequest("POST", srv.URL+"/v1/send", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+srv.Keys[account])
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				status, retry := 0, ""
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					status, retry = resp.StatusCode, resp.Header.Get("Retry-After")
				}
				mu.Lock()
				switch {
				case status == 200:
					r.Admitted++
				case status == 503 && retry != "":
					r.Refused++
				default:
					r.Other++
					b.Logf("an answer other than 200 or 503: %d %v", status, err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	stdin.Close()
	for lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "request-rss: "); ok {
			var m rssLoadResult
			if err := json.Unmarshal([]byte(rest), &m); err != nil {
				b.Fatal(err)
			}
			r.Idle, r.Peak = m.Idle, m.Peak
		}
	}
	if r.Peak == 0 {
		b.Fatalf("the child reported nothing:\n%s", stderr.Bytes())
	}
	return r
}

// rssChildSpec is what the child is told.
type rssChildSpec struct {
	Budget   int64
	Accounts int
}

func (c rssLoad) childSpec() rssChildSpec {
	return rssChildSpec{Budget: c.budget, Accounts: c.accounts}
}

// TestRequestMemoryRSSChild is BenchmarkRequestMemoryRSS's child process;
// it does nothing in a normal test run.
func TestRequestMemoryRSSChild(t *testing.T) {
	raw := os.Getenv(rssLoadEnv)
	if raw == "" {
		t.Skip("runs only as the child process of BenchmarkRequestMemoryRSS")
	}
	var spec rssChildSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		t.Fatal(err)
	}
	var budget *membudget.Budget
	if spec.Budget > 0 {
		// As serve sets them (cmd/mailroom/requestmemory.go): one account
		// at most half, Go's soft limit twice the budget.
		budget = membudget.New(spec.Budget, spec.Budget/2)
		debug.SetMemoryLimit(2 * spec.Budget)
	}
	e := newEnvWithStore(t, storetest.SQLite.Open(t), func(s *mhttp.Server, d *delivery.Deliverer) {
		s.Memory = budget
		d.Healthy = func() bool { return false } // accept only
	})
	srv := rssServer{URL: e.Base}
	for i := range spec.Accounts {
		name := fmt.Sprintf("tenant%d", i)
		acct := storetest.NewAccount(t, e.store, name)
		key := e.newKey(t, acct, mailroom.Scopes{mailroom.ScopeSend, mailroom.ScopeDomains})
		domainName := name + ".example"
		d := decodeDomain(e.domainCall(t, "POST", "/v1/domains", key, map[string]string{"name": domainName}))
		e.publish(d)
		if d = decodeDomain(e.domainCall(t, "POST", "/v1/domains/"+domainName+"/verify", key, nil)); d.Status != api.DomainVerified {
			t.Fatalf("%s did not verify", domainName)
		}
		from := "orders@" + domainName
		warm := map[string]any{"from": from, "to": "ann@example.com", "subject": "Warm-up", "text": "Hello."}
		if r := e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: key, Body: warm}); r.Status != 200 {
			t.Fatalf("warm-up send: %d %s", r.Status, r.Body)
		}
		srv.Keys, srv.Froms = append(srv.Keys, key), append(srv.Froms, from)
	}
	runtime.GC()
	debug.FreeOSMemory()
	idle := storetest.Try(rss.Current()).Must(t)
	if err := rss.ResetPeak(); err != nil {
		t.Fatal(err)
	}
	ready, _ := json.Marshal(srv)
	fmt.Printf("request-rss-ready: %s\n", ready)
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent's load is over
	out, _ := json.Marshal(rssLoadResult{Idle: idle, Peak: storetest.Try(rss.Peak()).Must(t)})
	fmt.Printf("request-rss: %s\n", out)
}
