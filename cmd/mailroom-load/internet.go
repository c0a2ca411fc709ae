package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/smtp/smtptest"
	"github.com/mailroom/mailroom/smtp/smtptest/internet"
)

// The delivery benchmark that looks like the internet (issue 28, item 7;
// scripts/bench-internet runs it): an internet in a box (package
// smtp/smtptest/internet) of a provider hosting 30 domains that caps
// connections and rate, a greylister and 200 small domains, every
// transaction taking 100–300 ms; a real `mailroom serve` delivering to it
// directly (--delivery direct, --dns-server and --smtp-port pointing at the
// box); n messages sent through the API to all of them, and the time until
// the box has them all.

// internetFlags are -internet's settings.
type internetFlags struct {
	bin, dataDir, databaseURL string
	providerShare, greyShare  float64
	providerCap, providerRate int
	providerWindow            time.Duration
	greylistDelay             time.Duration
}

func (f *internetFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.bin, "mailroom", "mailroom", "-internet: the mailroom `BINARY` to start")
	fs.StringVar(&f.dataDir, "data-dir", "", "-internet: the server's data `DIR` (fresh; a temporary one by default)")
	fs.StringVar(&f.databaseURL, "database-url", "", "-internet: the server's PostgreSQL `URL` (a fresh database; SQLite in -data-dir without)")
	fs.Float64Var(&f.providerShare, "provider-share", 0.4, "-internet: the share of messages to the provider's 30 domains")
	fs.Float64Var(&f.greyShare, "greylist-share", 0.05, "-internet: the share of messages to the greylister's 10 domains (the rest go to 200 small domains)")
	fs.IntVar(&f.providerCap, "provider-connections", 5, "-internet: the provider's cap on connections from one address (421 beyond)")
	fs.IntVar(&f.providerRate, "provider-rate", 1200, "-internet: the provider's cap on messages a minute from one address (450 4.7.28 beyond)")
	fs.DurationVar(&f.providerWindow, "provider-rate-window", 10*time.Second, "-internet: the window the provider counts -provider-rate over (a minute's rate of 1,200 over 10 s is 200 in any 10 s)")
	fs.DurationVar(&f.greylistDelay, "greylist-delay", 2*time.Second, "-internet: how long the greylister refuses a new triplet (keep --greylist-retry above it)")
}

// sender is the verified sending domain of the benchmark, and hostname
// the server's --hostname, both published in the box's DNS.
const (
	internetSender   = "sender.test"
	internetHostname = "mail.sender.test"
)

// runInternet runs the benchmark: n messages from c clients, waiting at
// most wait for delivery; serveFlags go to mailroom serve as they are
// (--delivery-policy, --greylist-retry...).
func runInternet(f internetFlags, n, c int, wait time.Duration, serveFlags []string) {
	if f.providerShare < 0 || f.greyShare < 0 || f.providerShare+f.greyShare > 1 {
		fail("-provider-share and -greylist-share must be shares of 1")
	}
	spec := internet.Standard()
	spec.ProviderMaxConnections, spec.ProviderMaxRate, spec.ProviderRateWindow = f.providerCap, f.providerRate, f.providerWindow
	spec.GreylistDelay = f.greylistDelay
	// The slow and dead sites are for the end-to-end tests: mail to them
	// is never all delivered, which is what this run waits for.
	spec.SlowDomains, spec.DeadDomains = 0, 0
	box, err := internet.New(spec)
	if err != nil {
		fail("%v", err)
	}
	defer box.Close()
	box.SetHost(internetHostname, "127.0.0.1")

	if f.dataDir == "" {
		dir, err := os.MkdirTemp("", "mailroom-internet-")
		if err != nil {
			fail("%v", err)
		}
		defer os.RemoveAll(dir)
		f.dataDir = filepath.Join(dir, "data")
	}
	storage := []string{"--data-dir", f.dataDir}
	if f.databaseURL != "" {
		storage = append(storage, "--database-url", f.databaseURL)
	}
	if err := os.MkdirAll(filepath.Dir(f.dataDir), 0o700); err != nil {
		fail("%v", err)
	}
	work := filepath.Dir(f.dataDir)
	out, err := runCLI(f.bin, work, append([]string{"accounts", "create", "load"}, storage...)...)
	if err != nil {
		fail("%v", err)
	}
	key := printedKey.FindString(out)
	if key == "" {
		fail("mailroom accounts create printed no key: %s", out)
	}
	if _, err := runCLI(f.bin, work, append([]string{"accounts", "update", "load", "--rate", "100000", "--burst", "1000000"}, storage...)...); err != nil {
		fail("%v", err)
	}
	flags := append(append(append([]string{}, storage[2:]...), box.Flags()...),
		"--hostname", internetHostname, "--delivery", "direct", "--log-format", "json")
	srv, err := startServe(f.bin, f.dataDir, append(flags, serveFlags...))
	if err != nil {
		fail("%v", err)
	}
	defer srv.stop()
	client, err := srv.client()
	if err != nil {
		fail("%v", err)
	}
	if err := verifyDomain(client, srv.Base(), key, box, internetSender); err != nil {
		fail("%v", err)
	}

	// The recipients, interleaved so that every site's mail is mixed in
	// time: message i goes where the fractional part of i×φ falls (a
	// sequence spread evenly over [0, 1) however many there are): below
	// the provider's share to the provider, then the greylister's, the
	// rest to the small sites.
	recipients := make([]string, n)
	smallDomains := 0
	for _, s := range box.Small {
		smallDomains += len(s.Domains)
	}
	domains := map[string]bool{}
	for i := range recipients {
		r := math.Mod(float64(i)*0.6180339887498949, 1)
		switch {
		case r < f.providerShare:
			recipients[i] = box.Provider.Recipient(i)
		case r < f.providerShare+f.greyShare:
			recipients[i] = box.Greylist.Recipient(i)
		default:
			s := box.Small[i%len(box.Small)]
			recipients[i] = s.Recipient(i / len(box.Small))
		}
		domains[recipients[i][strings.IndexByte(recipients[i], '@')+1:]] = true
	}
	expect := map[*internet.Site]int{}
	for _, r := range recipients {
		expect[box.SiteOf(r[strings.IndexByte(r, '@')+1:])]++
	}
	fmt.Printf("== internet: %d messages to %d domains (%d at the provider, %d at the greylister, %d at %d small domains), %d clients\n",
		n, len(domains), expect[box.Provider], expect[box.Greylist], n-expect[box.Provider]-expect[box.Greylist], smallDomains, c)
	fmt.Printf("mailroom serve %s\n", strings.Join(append(flags, serveFlags...), " "))

	// The provider's peak is read twice: over the whole run, and from the
	// moment the sender has had time to learn the cap (50 more messages
	// delivered after the first 421) to the end.
	learned := make(chan internetSnapshot, 1)
	stopWatch := make(chan struct{})
	var watch sync.WaitGroup
	watch.Go(func() { watchProvider(box, stopWatch, learned) })

	start := time.Now()
	var next, sent, refused atomic.Int64
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				body := message{From: "load@" + internetSender, To: recipients[i],
					Subject: fmt.Sprintf("Your receipt #%d", i), HTML: "<p>Thanks for your order.</p>",
					Tags: map[string]string{"run": "internet"}}
				if _, err := call(client, "POST", srv.Base()+"/v1/send", key, body, nil); err != nil {
					if refused.Add(1) == 1 {
						fmt.Fprintf(os.Stderr, "mailroom-load: first failure: %v\n", err)
					}
					continue
				}
				sent.Add(1)
			}
		})
	}
	wg.Wait()
	acceptTime := time.Since(start)
	fmt.Printf("accepted %d of %d in %.2fs (%d failed)\n", sent.Load(), n, acceptTime.Seconds(), refused.Load())

	// Wait until every site has its mail, or the log holds nothing left
	// to deliver (what is missing failed), or the time is up.
	deadline := start.Add(wait)
	delivered := func() int {
		total := 0
		for _, s := range box.Sites {
			total += s.Delivered()
		}
		return total
	}
	var done time.Time
	for {
		if delivered() >= int(sent.Load()) {
			done = time.Now()
			break
		}
		if empty(client, srv.Base(), key, "queued") && empty(client, srv.Base(), key, "deferred") {
			done = time.Now()
			fmt.Printf("nothing left to deliver, but %d of %d arrived: the rest failed\n", delivered(), sent.Load())
			break
		}
		if time.Now().After(deadline) {
			fmt.Printf("delivery did not finish within %v: %d of %d arrived\n", wait, delivered(), sent.Load())
			break
		}
		time.Sleep(100 * time.Millisecond) // polling with a deadline
	}
	close(stopWatch)
	watch.Wait()
	elapsed := done.Sub(start)
	got := delivered()

	var st smtptest.Stats
	for _, s := range box.Sites {
		x := s.Server.Stats()
		st.Refused += x.Refused
		st.Throttled += x.Throttled
		st.Greylisted += x.Greylisted
	}
	throttles := st.Refused + st.Throttled
	pst := box.Provider.Server.Stats()
	if !done.IsZero() {
		fmt.Printf("delivered %d of %d in %.2fs from the first send: %.0f messages/s\n", got, sent.Load(), elapsed.Seconds(), float64(got)/elapsed.Seconds())
	}
	fmt.Printf("throttle replies received: %d (%d × 421 on connecting, %d × 450 4.7.28): %.2f%% of messages; greylisting replies %d\n",
		throttles, st.Refused, st.Throttled, 100*float64(throttles)/float64(max(1, got)), st.Greylisted)
	select {
	case s := <-learned:
		after := (pst.Refused + pst.Throttled) - s.throttles
		msgs := pst.Messages - s.messages
		fmt.Printf("provider after it first said 421 and %d more messages arrived: %d throttle replies over %d messages (%.2f%%), peak connections %d (cap %d)\n",
			learnAfter, after, msgs, 100*float64(after)/float64(max(1, msgs)), box.Provider.Server.Stats().MaxAttempted, box.Provider.MaxConnections)
	default:
		fmt.Printf("provider: never refused a connection\n")
	}
	// The provider's bound: its rate cap, and its connections each taking
	// the mean latency a transaction.
	mean := (spec.Latency[0] + spec.Latency[1]).Seconds() / 2
	perSec := float64(box.Provider.MaxConnections) / mean
	if box.Provider.MaxRate > 0 {
		perSec = min(perSec, float64(box.Provider.MaxRate)/60)
	}
	if perSec > 0 && expect[box.Provider] > 0 {
		bound := float64(expect[box.Provider]) / perSec
		fmt.Printf("the provider's limits allow its %d messages in %.1fs at best (%.1f messages/s): this run took %.2f× that\n",
			expect[box.Provider], bound, perSec, elapsed.Seconds()/bound)
	}
	fmt.Println("-- per site (peak: the most connections one address had open or tried to open at once)")
	for _, s := range box.Sites {
		fmt.Println("  " + s.Report())
	}
	if m := srv.Metrics(); m != "" {
		fmt.Println("-- the server's own count (mailroom_deferrals_total; mailroom_site_* but the small sites')")
		for _, l := range metricLines("http://"+m+"/metrics", "mailroom_deferrals_total", "mailroom_site_") {
			if !strings.Contains(l, `site="mx.shop-`) {
				fmt.Println("  " + l)
			}
		}
	}
	if got < int(sent.Load()) {
		os.Exit(1)
	}
}

// learnAfter is how many messages the provider takes after its first 421
// before its peak is read again: time for the sender to hear it.
const learnAfter = 50

type internetSnapshot struct{ throttles, messages int }

// watchProvider waits for the provider's first refusal and learnAfter
// messages more, then starts its peaks again and sends what it had seen.
func watchProvider(box *internet.Box, stop <-chan struct{}, learned chan<- internetSnapshot) {
	srv := box.Provider.Server
	at := -1
	for {
		select {
		case <-stop:
			return
		case <-time.After(20 * time.Millisecond): // polling
		}
		st := srv.Stats()
		if st.Refused == 0 {
			continue
		}
		if at < 0 {
			at = st.Messages
		}
		if st.Messages >= at+learnAfter {
			srv.ResetPeaks()
			learned <- internetSnapshot{throttles: st.Refused + st.Throttled, messages: st.Messages}
			return
		}
	}
}

// verifyDomain adds name, publishes its records in the box's DNS and
// verifies it, as an operator does at their DNS provider.
func verifyDomain(c *http.Client, base, key string, box *internet.Box, name string) error {
	var d struct {
		Records []mailroom.DNSRecord `json:"records"`
	}
	if _, err := call(c, "POST", base+"/v1/domains", key, map[string]string{"name": name}, &d); err != nil {
		return err
	}
	for _, rec := range d.Records {
		if rec.Type == "MX" && rec.Priority != nil {
			box.DNS.SetMX(rec.Name, uint16(*rec.Priority), rec.Value)
		} else {
			box.DNS.SetTXT(rec.Name, rec.Value)
		}
	}
	var v struct {
		Status string `json:"status"`
	}
	if _, err := call(c, "POST", base+"/v1/domains/"+name+"/verify", key, nil, &v); err != nil {
		return err
	}
	if v.Status != "verified" {
		return fmt.Errorf("domain %s: %s after verify", name, v.Status)
	}
	return nil
}

// metricLines are the lines of a Prometheus text page that start with any
// of prefixes.
func metricLines(url string, prefixes ...string) []string {
	resp, err := http.Get(url)
	if err != nil {
		return []string{"(metrics: " + err.Error() + ")"}
	}
	defer resp.Body.Close()
	var out []string
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 16<<20))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		for _, p := range prefixes {
			if strings.HasPrefix(sc.Text(), p) {
				out = append(out, sc.Text())
				break
			}
		}
	}
	return out
}
