package storetest_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// BenchmarkAcceptMessage measures durable accepts through the group
// committer, from many goroutines at once, per engine.
func BenchmarkAcceptMessage(b *testing.B) {
	for _, eng := range []storetest.Engine{storetest.SQLite, storetest.Postgres} {
		b.Run(eng.Name, func(b *testing.B) {
			s := eng.Open(b)
			acct := storetest.NewAccount(b, s, "bench")
			var n atomic.Int64
			b.SetParallelism(32)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					m := storetest.NewMessage(acct, time.Now(), fmt.Sprintf("r%d@example.net", i))
					if _, err := s.AcceptMessage(context.Background(), m); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "accepts/s")
		})
	}
}

// BenchmarkAcceptMessages measures batch accepts (POST /v1/send/batch):
// one AcceptMessages call, one transaction, for batchSize small messages
// like BenchmarkAcceptMessage's, per engine, so that messages/s here and
// accepts/s there compare.
func BenchmarkAcceptMessages(b *testing.B) {
	const batchSize = 500
	for _, eng := range []storetest.Engine{storetest.SQLite, storetest.Postgres} {
		b.Run(eng.Name, func(b *testing.B) {
			s := eng.Open(b)
			acct := storetest.NewAccount(b, s, "bench")
			n := 0
			ms := make([]*mailroom.Message, batchSize)
			for b.Loop() {
				for i := range ms {
					n++
					ms[i] = storetest.NewMessage(acct, time.Now(), fmt.Sprintf("r%d@example.net", n))
				}
				out, err := s.AcceptMessages(context.Background(), ms)
				if err != nil {
					b.Fatal(err)
				}
				for _, o := range out {
					if o.Err != nil {
						b.Fatal(o.Err)
					}
				}
			}
			b.ReportMetric(float64(b.N*batchSize)/b.Elapsed().Seconds(), "messages/s")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/batch")
		})
	}
}
