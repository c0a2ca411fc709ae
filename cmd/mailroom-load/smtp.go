package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
)

// loadSMTP submits n messages over c SMTP submission connections (STARTTLS
// and AUTH once per connection, then one message after another, each
// answered 250 only once stored), and prints submitted messages per second
// and the latency of each message from MAIL to its 250.
func loadSMTP(addr, key string, roots *x509.CertPool, n, c int, msg func(int64) message) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		fail("-smtp: %v", err)
	}
	if host == "127.0.0.1" || host == "" {
		host = "localhost" // the self-signed certificate's name
	}
	var next, ok, failed atomic.Int64
	var firstErr sync.Once
	latencies := make([][]time.Duration, c)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range c {
		wg.Go(func() {
			cl, err := gosmtp.DialStartTLS(addr, &tls.Config{RootCAs: roots, ServerName: host})
			if err == nil {
				err = cl.Auth(sasl.NewPlainClient("", "load", key))
			}
			if err != nil {
				firstErr.Do(func() { fmt.Printf("mailroom-load: smtp connection: %v\n", err) })
				return
			}
			defer cl.Close()
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				m := msg(i)
				body := "From: " + m.From + "\r\nTo: " + m.To + "\r\nSubject: " + m.Subject +
					"\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" + m.HTML + "\r\n"
				t0 := time.Now()
				if err := cl.SendMail(m.From, []string{m.To}, strings.NewReader(body)); err != nil {
					failed.Add(1)
					firstErr.Do(func() { fmt.Printf("mailroom-load: first smtp failure: %v\n", err) })
					if cl.Reset() != nil {
						return
					}
					continue
				}
				ok.Add(1)
				latencies[w] = append(latencies[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	all := slices.Concat(latencies...)
	slices.Sort(all)
	fmt.Printf("submitted %d of %d over SMTP in %.2fs: %.0f messages/s (%d failed), %d connections\n",
		ok.Load(), n, secs, float64(ok.Load())/secs, failed.Load(), c)
	if len(all) > 0 {
		fmt.Printf("submission latency: p50 %s  p90 %s  p99 %s  max %s\n", pct(all, 0.50), pct(all, 0.90), pct(all, 0.99), pct(all, 1))
	}
}
