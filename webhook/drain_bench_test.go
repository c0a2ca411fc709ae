package webhook

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/sealer"
	"github.com/mailroom/mailroom/storetest"
)

// BenchmarkDrainToOneEndpoint measures events delivered per second to one
// fast local HTTPS endpoint (it answers 204 at once) from a backlog: each
// iteration accepts 1,000 messages whose email.queued events fan out to
// the endpoint, then times the dispatcher delivering all of them, signed
// and recorded. The receiver and the dispatcher share the machine.
func BenchmarkDrainToOneEndpoint(b *testing.B) {
	const perRound = 1000
	for _, eng := range []storetest.Engine{storetest.SQLite, storetest.Postgres} {
		b.Run(eng.Name, func(b *testing.B) {
			if eng.Name == "postgres" {
				storetest.RequirePostgres(b)
			}
			s := eng.Open(b)
			acct := storetest.NewAccount(b, s, "bench")
			var got atomic.Int64
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				got.Add(1)
				w.WriteHeader(http.StatusNoContent)
			}))
			b.Cleanup(srv.Close)
			seal, _ := sealer.New([]byte(strings.Repeat("k", sealer.KeySize)))
			svc := &Service{Store: s, Sealer: seal, Now: time.Now, CheckURL: func(context.Context, string) error { return nil }}
			url, events := srv.URL+"/hook", []string{mailroom.EventEmailQueued}
			if _, _, err := svc.Create(context.Background(), acct.ID, &Request{URL: &url, Events: &events}); err != nil {
				b.Fatal(err)
			}
			roots := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
			d := &Dispatcher{Store: s, Keys: svc.SigningKeys, Node: "bench", AllowPrivate: true, RootCAs: roots,
				Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: time.Now}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); d.Run(ctx) }()
			b.Cleanup(func() { cancel(); <-done })

			n := 0
			var delivering time.Duration
			for b.Loop() {
				b.StopTimer()
				ms := make([]*mailroom.Message, perRound)
				for i := range ms {
					n++
					ms[i] = storetest.NewMessage(acct, time.Now(), fmt.Sprintf("r%d@example.net", n))
				}
				before := got.Load()
				if _, err := s.AcceptMessages(context.Background(), ms); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				t0 := time.Now()
				d.Wake()
				for got.Load() < before+perRound {
					time.Sleep(time.Millisecond)
				}
				delivering += time.Since(t0)
			}
			b.ReportMetric(float64(b.N*perRound)/delivering.Seconds(), "events/s")
		})
	}
}
