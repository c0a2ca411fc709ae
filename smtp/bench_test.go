package smtp

import (
	"bytes"
	"context"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/smtp/smtptest"
)

// BenchmarkDirectDeliver measures messages delivered per second to one MX
// host on loopback, over the per-host cap of pooled sessions, the way the
// delivery worker drives the transport.
func BenchmarkDirectDeliver(b *testing.B) {
	mx := smtptest.Start(b)
	dnsSrv := dnstest.Start(b)
	dnsSrv.SetMX("example.test", 10, "mx.example.test")
	dnsSrv.SetA("mx.example.test", "127.0.0.1")
	d := NewDirect(nil, ehloName)
	d.Resolver = newResolver(dnsSrv)
	d.Port = mx.Port()
	b.Cleanup(func() { _ = d.Close() })
	body := bytes.Repeat([]byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\r\n"), 64)

	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			del := &mailroom.Delivery{
				Domain:     "example.test",
				MailFrom:   "bounce@bounces.mailroom.test",
				Recipients: []string{"a@example.test"},
				Data:       body,
			}
			if res := d.Deliver(context.Background(), del); res[0].Outcome != mailroom.Delivered {
				b.Errorf("delivery: %+v", res[0])
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}
