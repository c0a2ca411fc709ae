package submission_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
	"github.com/mailroom/mailroom/storetest"
)

// BenchmarkSubmitMemory measures MessageExpansion: the bytes allocated by
// one large message submitted over SMTP (a client and the submission
// server on loopback, STARTTLS and AUTH done before, the real Service over
// each engine with the real DKIM signer) divided by the message's size
// (alloc/msg). What a submission allocates bounds what it can hold at
// once, so the largest ratio, rounded up, is what a message reserves per
// byte:
//
//	go test ./submission -run '^$' -bench BenchmarkSubmitMemory -benchtime 10x
//
// The cases: an attachment in base64 lines, as mail clients write one;
// plain text lines; and a body of bare LFs, which a client writing raw
// bytes may send and Submit turns into CRLF (doubling them), sent over a
// plain connection since go-smtp's client writes CRLF itself.
func BenchmarkSubmitMemory(b *testing.B) {
	for _, e := range []storetest.Engine{storetest.SQLite, storetest.Postgres} {
		for _, c := range []struct {
			name string
			make func(from string, size int) []byte
			size int
		}{{"attachment-13MiB", largeMessage, 13 << 20}, {"attachment-16MiB", largeMessage, 16<<20 - 64<<10},
			{"text-13MiB", textMessage, 13 << 20}, {"bare-LF-13MiB", bareLFMessage, 13 << 20}} {
			b.Run(e.Name+"/"+c.name, func(b *testing.B) {
				if e.Name == storetest.Postgres.Name {
					storetest.RequirePostgres(b)
				}
				w := newMemoryWorld(b, e, nil)
				msg := c.make(w.acmeFrom, c.size)
				submit := w.submitter(b, strings.HasPrefix(c.name, "bare-LF"))
				var ms0, ms1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms0)
				n := 0
				for b.Loop() {
					submit(msg)
					n++
				}
				runtime.ReadMemStats(&ms1)
				b.ReportMetric(float64(len(msg))/(1<<20), "msg-MiB")
				b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(n)/float64(len(msg)), "alloc/msg")
			})
		}
	}
}

// submitter logs in as acme and returns a function that submits a message
// and fails unless it is queued: with go-smtp's client, or with raw
// writes of the message as it is (raw).
func (w *memoryWorld) submitter(b *testing.B, raw bool) func(msg []byte) {
	if !raw {
		client := w.ts.dialTLS(b, w.acmeKey)
		return func(msg []byte) {
			if _, err := send(client, w.acmeFrom, []string{"ann@x.example"}, msg); err != nil {
				b.Fatal(err)
			}
		}
	}
	c := smtpservertest.Dial(b, w.ts.addr)
	c.StartTLS(w.ts.client)
	authPlain(c, w.acmeKey)
	c.Expect("235 ")
	return func(msg []byte) {
		c.Send("MAIL FROM:<" + w.acmeFrom + ">\r\nRCPT TO:<ann@x.example>\r\nDATA\r\n")
		c.Expect("250 ")
		c.Expect("250 ")
		c.Expect("354 ")
		c.Send(string(msg) + "\r\n.\r\n")
		c.Expect("250 ")
	}
}

// bareLFMessage is a message of size bytes whose body is empty lines
// ending in a bare LF.
func bareLFMessage(from string, size int) []byte {
	header := "From: Shop <" + from + ">\r\nTo: ann@x.example\r\nSubject: Lines\r\n\r\n"
	return []byte(header + strings.Repeat("\n", size-len(header)))
}
