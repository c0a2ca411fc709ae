package delivery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/rss"
	"github.com/mailroom/mailroom/sqlite"
	"github.com/mailroom/mailroom/storetest"
)

// BenchmarkDeliveryRSS measures the peak resident memory (RSS) of the
// delivery runtime while it delivers one message with a 5 MiB attachment
// to 50 recipients at 50 domains, beside 50 small one-recipient messages
// to the same 50 domains, each as growth above the same process's idle
// RSS. Run it with scripts/membench (one iteration per case:
// -benchtime 1x); BENCHMARKS.md has the method and results.
//
// Why a child process per measurement: the kernel's high-water mark
// (VmHWM) is per process, and a process that has already held a large
// heap keeps some of it (the Go heap's goal, the allocator's spans,
// SQLite's page cache), so measuring two cases in one process would let
// the first colour the second. So this process only prepares: it accepts
// the messages into a fresh SQLite data directory through the real send
// path, closes the store, and runs the DNS and SMTP servers on loopback
// (the receiver keeps every copy it gets: 50 × 6.8 MiB that must not be
// counted). A fresh child, this test binary running
// TestDeliveryRSSChild, opens the store, builds the Deliverer, Signer,
// Composer and Direct transport as `mailroom serve` wires them, delivers
// a small warm-up message (so that idle includes the code and state every
// delivery needs, as on a running server), collects garbage and returns it
// to the OS, reads its idle RSS, resets the high-water mark (writing 5 to
// /proc/self/clear_refs), delivers the measured mail, and reads the
// high-water mark: the peak of the delivery alone, in the kernel's own
// count, which no sampling can miss.
//
// Reported per case: idle-RSS-MiB, peak-RSS-MiB, above-idle-MiB (peak −
// idle), message-MiB (one signed message, as received), alloc-MiB (bytes
// the child allocated while delivering), kept-MiB (RSS after the delivery,
// garbage collected and returned to the OS, minus idle: what the process
// keeps) and, for the large message, above-idle/message (the aim: under
// 3).
func BenchmarkDeliveryRSS(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc/self/status and /proc/self/clear_refs (Linux)")
	}
	cases := []rssCase{
		{name: "one-5MiB-message-50-domains", messages: 1, recipients: 50, attachment: 5 << 20},
		{name: "50-small-messages-50-domains", messages: 50, recipients: 1},
		// The same large message to one domain, and to 50 domains with
		// its signed bytes already stored (as a retry finds them): they
		// tell the fan-out's share of the peak from composing's.
		{name: "one-5MiB-message-1-domain", messages: 1, recipients: 1, attachment: 5 << 20},
		{name: "one-5MiB-message-50-domains-signed-before", messages: 1, recipients: 50, attachment: 5 << 20, signedBefore: true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var r rssResult
			for range b.N {
				r = measureRSS(b, c)
			}
			b.ReportMetric(mib(r.Idle), "idle-RSS-MiB")
			b.ReportMetric(mib(r.Peak), "peak-RSS-MiB")
			b.ReportMetric(mib(r.Peak-r.Idle), "above-idle-MiB")
			b.ReportMetric(mib(r.Message), "message-MiB")
			b.ReportMetric(mib(r.Alloc), "alloc-MiB")
			b.ReportMetric(mib(r.After)-mib(r.Idle), "kept-MiB")
			if c.attachment > 0 {
				b.ReportMetric(float64(r.Peak-r.Idle)/float64(r.Message), "above-idle/message")
			}
		})
	}
}

// rssCase is what one measurement delivers: messages, each to recipients
// at as many domains, with an attachment of that many bytes (none: a
// small text message).
type rssCase struct {
	name                 string
	messages, recipients int
	attachment           int
	// signedBefore has the child compose, sign and store the messages
	// before it measures idle, so that only sending them is measured.
	signedBefore bool
}

// rssResult is one measurement, in bytes.
type rssResult struct {
	Idle, Peak, After, Alloc uint64
	Message                  uint64 `json:"-"`
}

// rssChildEnv names the variable that makes TestDeliveryRSSChild run, and
// holds its rssChild as JSON.
const rssChildEnv = "MAILROOM_DELIVERY_RSS_CHILD"

// rssChild is what the child needs to reach the prepared store and the
// servers.
type rssChild struct {
	Dir        string
	DNS        string
	MXPort     int
	SealKey    []byte
	Recipients int // to be delivered after the warm-up
	// SignBefore lists the messages to sign before idle is measured.
	SignBefore []*mailroom.MessageSummary
}

// rssDomain is the i-th recipient domain.
func rssDomain(i int) string { return fmt.Sprintf("d%02d.example", i) }

// measureRSS prepares a store for c, runs the child and checks what the
// receiver got.
func measureRSS(b *testing.B, c rssCase) rssResult {
	b.StopTimer()
	ctx := context.Background()
	dir := b.TempDir()
	store, err := sqlite.Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	w := newWorld(b, store)
	w.mailDomain("warm.example")
	for i := range max(c.messages, c.recipients) {
		w.mailDomain(rssDomain(i))
	}
	now := time.Now()
	w.send(b, now, &mailroom.SendRequest{From: "orders@" + sendingDomain, To: []string{"warm@warm.example"},
		Subject: "Warm-up", Text: "Hello."})
	// The measured mail is accepted an hour ahead, so that it is not due
	// yet for the child's warm-up pass, which must take the warm-up alone.
	later := now.Add(time.Hour)
	var signBefore []*mailroom.MessageSummary
	for m := range c.messages {
		req := &mailroom.SendRequest{From: "Shop <orders@" + sendingDomain + ">", Subject: fmt.Sprintf("Your receipt #%d", m),
			To: recipients(c.recipients, func(i int) string { return rssDomain(m + i) })}
		if c.attachment > 0 {
			req.Text = "Your report is attached."
			req.Attachments = []mailroom.SendAttachment{attachment(c.attachment)}
		} else {
			req.HTML = "<p>Thanks for your order.</p>"
		}
		id := w.send(b, later, req)
		if c.signedBefore {
			signBefore = append(signBefore, &mailroom.MessageSummary{ID: id, AccountID: w.acct.ID, Domain: sendingDomain})
		}
	}
	if err := store.Close(); err != nil {
		b.Fatal(err)
	}

	spec, _ := json.Marshal(rssChild{Dir: dir, DNS: w.dns.Addr(), MXPort: w.mx.Port(), SealKey: w.sealKey,
		Recipients: c.messages * c.recipients, SignBefore: signBefore})
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeliveryRSSChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), rssChildEnv+"="+string(spec))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b.StartTimer()
	out, err := cmd.Output()
	b.StopTimer()
	if err != nil {
		b.Fatalf("child: %v\n%s%s", err, out, stderr.Bytes())
	}
	var r rssResult
	for line := range strings.Lines(string(out)) {
		if rest, ok := strings.CutPrefix(line, "delivery-rss: "); ok {
			if err := json.Unmarshal([]byte(rest), &r); err != nil {
				b.Fatal(err)
			}
		}
	}
	if r.Peak == 0 {
		b.Fatalf("the child reported nothing:\n%s", out)
	}

	// One transaction per domain of each message, after the warm-up's.
	got := w.mx.Messages()
	if want := 1 + c.messages*c.recipients; len(got) != want {
		b.Fatalf("received %d transactions, want %d", len(got), want)
	}
	for _, m := range got[1:] {
		if c.messages == 1 && !bytes.Equal(m.Data, got[1].Data) {
			b.Fatal("the domains received different bytes")
		}
	}
	r.Message = uint64(len(got[len(got)-1].Data))
	return r
}

// TestDeliveryRSSChild is BenchmarkDeliveryRSS's child process; it does
// nothing in a normal test run.
func TestDeliveryRSSChild(t *testing.T) {
	spec := os.Getenv(rssChildEnv)
	if spec == "" {
		t.Skip("runs only as the child process of BenchmarkDeliveryRSS")
	}
	var c rssChild
	if err := json.Unmarshal([]byte(spec), &c); err != nil {
		t.Fatal(err)
	}
	store, err := sqlite.Open(context.Background(), c.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	d, transport := newDeliverer(store, newDomains(t, store, c.DNS, c.SealKey), realComposer(), c.DNS, c.MXPort)
	defer transport.Close()
	if n := deliverAll(t, d); n != 1 {
		t.Fatalf("the warm-up pass claimed %d recipients, want 1", n)
	}

	for _, m := range c.SignBefore {
		if _, err := d.Signer.Signed(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}

	runtime.GC()
	debug.FreeOSMemory()
	idle := storetest.Try(rss.Current()).Must(t)
	if err := rss.ResetPeak(); err != nil {
		t.Fatal(err)
	}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	// The measured mail was accepted an hour ahead.
	d.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if n := deliverAll(t, d); n != c.Recipients {
		t.Fatalf("delivered to %d recipients, want %d", n, c.Recipients)
	}
	peak := storetest.Try(rss.Peak()).Must(t)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	// What stays once the garbage is collected and returned: memory the
	// process keeps (SQLite's page caches and buffers are outside the Go
	// heap and are not returned).
	runtime.GC()
	debug.FreeOSMemory()
	out, _ := json.Marshal(rssResult{Idle: idle, Peak: peak, After: storetest.Try(rss.Current()).Must(t),
		Alloc: after.TotalAlloc - before.TotalAlloc})
	fmt.Printf("delivery-rss: %s\n", out)
}
