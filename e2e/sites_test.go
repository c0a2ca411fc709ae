package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/smtp/smtptest"
	"github.com/mailroom/mailroom/smtp/smtptest/internet"
	"github.com/mailroom/mailroom/storetest"
)

// The tests of how mail leaves (issue 28, docs/api.md "How mail leaves"),
// against an internet in a box.

// learnCap watches site for its first 421 on connecting; once the site has
// received learnAfter more messages (time for the sender to hear it), it
// starts the site's peaks again, so that what they show at the end is how
// many connections the sender opened once the receiver had said its cap.
// The function it returns stops watching (as does the end of the test)
// and says whether that happened.
func learnCap(t *testing.T, site *internet.Site, learnAfter int) (stop func() bool) {
	done := make(chan struct{})
	var learned bool
	var wg sync.WaitGroup
	wg.Go(func() {
		at := -1
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond): // polling
			}
			st := site.Server.Stats()
			if st.Refused == 0 {
				continue
			}
			if at < 0 {
				at = st.Messages
			}
			if st.Messages >= at+learnAfter {
				site.Server.ResetPeaks()
				learned = true
				return
			}
		}
	})
	var once sync.Once
	stop = func() bool { once.Do(func() { close(done); wg.Wait() }); return learned }
	t.Cleanup(func() { stop() })
	return stop
}

// Hundreds of messages to thirty domains of one provider that caps
// connections (421 beyond 5 from one address) and rate (450 4.7.28
// beyond 1,200 a minute): all are delivered, once; once the provider has
// said its cap, the node never tries more connections than it allows;
// the throttle replies are a small fraction of the messages; each
// deferral says why; and `mailroom sites` shows the throttled site.
func TestProviderLimitsAreLearned(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		// 100 to 300 ms a transaction: one connection carries 5 messages
		// a second, so the node needs several to go as fast as the
		// provider's rate allows, and meets its cap.
		spec := internet.Standard()
		spec.GreylistDomains, spec.SlowDomains, spec.DeadDomains, spec.SmallDomains = 0, 0, 0, 0
		box := internet.Start(t, spec)
		n := startNetNode(t, eng, box)
		p := box.Provider

		const total = 200
		stop := learnCap(t, p, 20)
		ids := n.sendTo(t, recipients(p, total))
		waitDelivered(t, p, total, 4*time.Minute)
		learned := stop()
		st := p.Server.Stats()
		t.Logf("%s; the sender heard the cap: %v", p.Report(), learned)

		got := map[string]int{}
		for _, m := range p.Server.Messages() {
			for _, r := range m.Rcpts {
				got[r]++
			}
		}
		for to := range ids {
			if got[to] != 1 {
				t.Errorf("%s received %d times", to, got[to])
			}
		}
		if st.MaxAttempted > p.MaxConnections {
			t.Errorf("the node tried %d connections at once after the provider said its cap of %d (%d refused in all)",
				st.MaxAttempted, p.MaxConnections, st.Refused)
		}
		throttles := st.Refused + st.Throttled
		if throttles > total/10 {
			t.Errorf("%d throttle replies (%d × 421, %d × 450 4.7.28) for %d messages: more than a tenth", throttles, st.Refused, st.Throttled, total)
		}

		reasons := n.checkDeferralReasons(t, ids)
		t.Logf("deferrals by reason: %v", reasons)
		if throttles > 0 && reasons["throttled"] == 0 {
			t.Errorf("the provider throttled %d times and no deferral says throttled: %v", throttles, reasons)
		}

		sites := n.sitesJSON(t)
		s := siteNamed(sites, "mx1.bigmail.test")
		if s == nil {
			t.Fatalf("mailroom sites --json does not show the provider: %+v", sites)
		}
		if throttles > 0 && len(s.RecentReplies) == 0 {
			t.Errorf("mailroom sites shows no throttle of the provider, which gave %d: %+v", throttles, *s)
		}
		if st.Refused > 0 && s.MaxConnections > p.MaxConnections {
			t.Errorf("mailroom sites shows %d connections allowed to the provider, which refused beyond %d", s.MaxConnections, p.MaxConnections)
		}
		if out := cli(t, n.work, nil, "sites", "--metrics-url", "http://"+n.metricsAddr(t)); !strings.Contains(out, s.Site) {
			t.Errorf("mailroom sites does not name %s:\n%s", s.Site, out)
		}
	})
}

// A greylister refuses every first attempt; with --greylist-retry 2s (and
// the retry schedule at an hour) the mail arrives on the second attempt,
// each deferral saying greylisted.
func TestGreylistedMailArrivesAfterGreylistRetry(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		spec := quickSpec()
		spec.ProviderDomains, spec.SlowDomains, spec.DeadDomains, spec.SmallDomains = 0, 0, 0, 0
		spec.GreylistDelay = time.Second
		box := internet.Start(t, spec)
		n := startNetNode(t, eng, box, "--greylist-retry", "2s")
		g := box.Greylist

		const total = 20
		ids := n.sendTo(t, recipients(g, total))
		waitDelivered(t, g, total, time.Minute)
		if st := g.Server.Stats(); st.Greylisted < total {
			t.Errorf("the greylister refused %d first attempts, want %d", st.Greylisted, total)
		}
		reasons := n.checkDeferralReasons(t, ids)
		if reasons["greylisted"] < total {
			t.Errorf("deferrals by reason %v, want %d greylisted", reasons, total)
		}
		for to, id := range ids {
			for _, r := range n.message(t, id).Recipients {
				if r.Address != to {
					continue
				}
				if r.Status != "delivered" || r.Attempts != 2 || r.LastDeferralReason != "greylisted" {
					t.Errorf("%s in the log: %+v, want delivered on the second attempt after greylisting", to, r)
				}
			}
		}
	})
}

// A dead site (it accepts connections and never greets) and a slow one (a
// minute a transaction) take their mail first, on a node with one unit of
// delivery workers (50 in flight): mail to small sites sent after them
// still arrives at once, long before the dead site's 30 s connect timeout
// or the slow site's first reply.
func TestDeadAndSlowSitesHoldNobodyBack(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		spec := quickSpec()
		spec.ProviderDomains, spec.GreylistDomains = 0, 0
		spec.SlowLatency = [2]time.Duration{time.Minute, time.Minute}
		box := internet.Start(t, spec)
		n := startNetNode(t, eng, box, "--delivery-workers", "1")

		ids := n.sendTo(t, recipients(box.Dead, 60))
		for k, v := range n.sendTo(t, recipients(box.Slow, 60)) {
			ids[k] = v
		}
		small := make([]string, 60)
		for i := range small {
			small[i] = box.Small[i%len(box.Small)].Recipient(i)
		}
		n.sendTo(t, small)
		delivered := func() int {
			total := 0
			for _, s := range box.Small {
				total += s.Delivered()
			}
			return total
		}
		if !poll.Within(20*time.Second, func() bool { return delivered() >= len(small) }) {
			t.Fatalf("%d of %d messages to small sites arrived while the dead and slow sites held their connections; %s; %s",
				delivered(), len(small), box.Dead.Report(), box.Slow.Report())
		}
		t.Logf("%s; %s", box.Dead.Report(), box.Slow.Report())

		// The dead site's connections time out: those recipients are
		// deferred for the connection.
		var reasons map[string]int
		if !poll.Within(2*time.Minute, func() bool {
			for _, d := range n.deferrals(t) {
				if box.SiteOf(d.Recipient[strings.IndexByte(d.Recipient, '@')+1:]) == box.Dead {
					return true
				}
			}
			return false
		}) {
			t.Fatal("no mail to the dead site was deferred")
		}
		reasons = n.checkDeferralReasons(t, ids)
		if reasons["connection"] == 0 {
			t.Errorf("deferrals by reason %v, want the dead site's as connection", reasons)
		}
	})
}

// A pool of two addresses: connections leave from both, each giving its
// own EHLO name; the address without a PTR record is warned about at
// start; a domain moved to another pool sends from that pool's address.
func TestIPPoolAddressesWithTheirEHLONames(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		spec := quickSpec()
		spec.ProviderDomains, spec.GreylistDomains, spec.SlowDomains, spec.DeadDomains = 0, 0, 0, 0
		spec.SmallDomains = 40
		box := internet.Start(t, spec)
		box.SetHost("out1.example.test", "127.0.0.10")
		box.DNS.SetA("out2.example.test", "127.0.0.11") // and no PTR
		box.SetHost("out3.example.test", "127.0.0.12")
		n := startNetNode(t, eng, box,
			"--ip-pool", "main=127.0.0.10@out1.example.test,127.0.0.11@out2.example.test",
			"--ip-pool", "other=127.0.0.12@out3.example.test")

		warned := func() string { return grepLines(n.Stderr(), "127.0.0.11") }
		if !poll.Within(10*time.Second, func() bool { return strings.Contains(strings.ToUpper(warned()), "PTR") }) {
			t.Errorf("no warning about 127.0.0.11's missing PTR record in the log:\n%s", n.Stderr())
		}
		for _, ip := range []string{"127.0.0.10", "127.0.0.12"} {
			if l := grepLines(n.Stderr(), ip); strings.Contains(strings.ToUpper(l), "PTR") {
				t.Errorf("a warning about %s, whose reverse DNS holds:\n%s", ip, l)
			}
		}

		// One message to each of 40 domains, each a site of its own, as
		// most of a sender's destinations are: new connections to them
		// leave from both addresses in turn.
		const total = 40
		small := make([]string, total)
		for i := range small {
			s := box.Small[i%len(box.Small)]
			small[i] = fmt.Sprintf("user%d@%s", i, s.Domains[i/len(box.Small)])
		}
		n.sendTo(t, small)
		delivered := func() []smtptest.Received {
			var all []smtptest.Received
			for _, s := range box.Small {
				all = append(all, s.Server.Messages()...)
			}
			return all
		}
		if !poll.Within(time.Minute, func() bool { return len(delivered()) >= total }) {
			t.Fatalf("%d of %d arrived", len(delivered()), total)
		}
		want := map[string]string{"127.0.0.10": "out1.example.test", "127.0.0.11": "out2.example.test"}
		used := map[string]int{}
		for _, m := range delivered() {
			ip := internet.ClientIP(m.Client)
			if want[ip] == "" || m.Helo != want[ip] {
				t.Errorf("a message came from %s with EHLO %s, want one of %v", ip, m.Helo, want)
			}
			used[ip]++
		}
		if len(used) != 2 {
			t.Errorf("messages by source address %v, want both of the pool's", used)
		}

		// The domain moves to the pool "other"; running nodes apply it
		// within 10 s.
		cli(t, n.work, nil, append([]string{"domains", "update", "shop.example", "--account", "acme", "--ip-pool", "other"}, n.storage...)...)
		i := total
		if !poll.Within(30*time.Second, func() bool {
			to := box.Small[0].Recipient(i)
			i++
			n.sendTo(t, []string{to})
			var from string
			poll.Within(10*time.Second, func() bool {
				for _, m := range box.Small[0].Server.Messages() {
					if m.Rcpts[0] == to {
						from = internet.ClientIP(m.Client)
						return true
					}
				}
				return false
			})
			return from == "127.0.0.12"
		}) {
			t.Fatal("mail of shop.example does not leave from the pool other's 127.0.0.12 after domains update")
		}
		after := len(box.Small[0].Server.Messages())
		n.sendTo(t, recipients(box.Small[0], 10))
		if !poll.Within(time.Minute, func() bool { return len(box.Small[0].Server.Messages()) >= after+10 }) {
			t.Fatal("the last 10 messages did not arrive")
		}
		for _, m := range box.Small[0].Server.Messages()[after:] {
			if ip := internet.ClientIP(m.Client); ip != "127.0.0.12" || m.Helo != "out3.example.test" {
				t.Errorf("after the move a message came from %s with EHLO %s, want 127.0.0.12 and out3.example.test", ip, m.Helo)
			}
		}
	})
}

// --delivery-policy: its limits hold; SIGHUP reads it again and a good
// file takes effect; a bad one is refused in the log with its line and
// the running policy stays; serve refuses to start on a bad one.
func TestDeliveryPolicyReloadedOnSIGHUP(t *testing.T) {
	spec := quickSpec()
	spec.GreylistDomains, spec.SlowDomains, spec.DeadDomains, spec.SmallDomains = 0, 0, 0, 0
	spec.ProviderMaxRate = 0
	box := internet.Start(t, spec)
	p := box.Provider
	policy := filepath.Join(t.TempDir(), "policy.toml")
	write := func(maxConnections int) {
		t.Helper()
		text := fmt.Sprintf("[[site]]\nname = \"bigmail\"\nmx = [\"*.bigmail.test\"]\nmax_connections = %d\n", maxConnections)
		if err := os.WriteFile(policy, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(2)
	n := startNetNode(t, storetest.SQLite, box, "--delivery-policy", policy)

	bigmail := func() *siteState {
		for _, s := range n.sitesJSON(t) {
			if s.Site == "bigmail" {
				return &s
			}
		}
		return nil
	}
	n.sendTo(t, recipients(p, 60))
	waitDelivered(t, p, 60, time.Minute)
	if st := p.Server.Stats(); st.MaxAttempted > 2 || st.Refused > 0 {
		t.Errorf("with max_connections = 2 the node had %d connections open at once (%d refused)", st.MaxAttempted, st.Refused)
	}
	if s := bigmail(); s == nil || s.MaxConnections != 2 {
		t.Fatalf("mailroom sites shows bigmail as %+v, want 2 connections allowed", s)
	}

	write(4)
	if err := n.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "the policy read again on SIGHUP: bigmail allowed 4 connections", func() bool {
		s := bigmail()
		return s != nil && s.MaxConnections == 4
	})

	// A bad file: max_connections on line 4 is 0.
	write(0)
	if err := n.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "the bad policy refused in the log with its line", func() bool {
		return strings.Contains(grepLines(n.Stderr(), "max_connections"), "line 4")
	})
	if s := bigmail(); s == nil || s.MaxConnections != 4 {
		t.Errorf("after a bad policy mailroom sites shows bigmail as %+v, want the running policy's 4 connections", s)
	}
	p.Server.ResetPeaks()
	more := make([]string, 60)
	for i := range more {
		more[i] = p.Recipient(100 + i)
	}
	n.sendTo(t, more)
	waitDelivered(t, p, 120, time.Minute)
	if st := p.Server.Stats(); st.MaxAttempted > 4 {
		t.Errorf("with the running policy's max_connections = 4 the node had %d connections open at once", st.MaxAttempted)
	}

	// serve refuses to start on the bad file (exit 2), naming the line.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--data-dir", filepath.Join(t.TempDir(), "data"),
		"--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--delivery-policy", policy)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(errOut.String(), "line 4") {
		t.Errorf("serve with a bad policy: %v, want exit 2 naming line 4\nstderr: %s", err, errOut.String())
	}
}
