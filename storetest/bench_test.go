package storetest_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

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
