package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom/submission"
)

// submissionFlags are SMTP submission's listeners (docs/api.md "SMTP
// submission").
type submissionFlags struct {
	starttls string
	implicit string
}

func (f *submissionFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.starttls, "submission-listen", "", "the `HOST:PORT` of SMTP submission with STARTTLS, typically :587 (AUTH with an API key of scope send); empty disables it")
	fs.StringVar(&f.implicit, "submissions-listen", "", "the `HOST:PORT` of SMTP submission over implicit TLS, typically :465; empty disables it")
}

// startSubmission starts the submission listeners that are set and
// returns a function that stops them, letting the messages being taken
// get their answer (up to 30 s).
func (f *submissionFlags) startSubmission(h submission.Handler, tlsConfig *tls.Config, hostname string, reg prometheus.Registerer, log *slog.Logger) (stop func(), err error) {
	if f.starttls == "" && f.implicit == "" {
		return func() {}, nil
	}
	srv := &submission.Server{Handler: h, TLS: tlsConfig, Hostname: hostname, Log: log, Observe: submission.Metrics(reg)}
	var lns []net.Listener
	closeAll := func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}
	done := make(chan struct{}, 2)
	for _, l := range []struct {
		addr, what string
		serve      func(net.Listener) error
	}{{f.starttls, "STARTTLS", srv.Serve}, {f.implicit, "implicit TLS", srv.ServeTLS}} {
		if l.addr == "" {
			done <- struct{}{}
			continue
		}
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("submission listener on %s: %w", l.addr, err)
		}
		lns = append(lns, ln)
		go func() {
			defer func() { done <- struct{}{} }()
			if err := l.serve(ln); err != nil && !errors.Is(err, submission.ErrServerClosed) {
				log.Error("SMTP submission server stopped", "tls", l.what, "err", err)
			}
		}()
		log.Info("submission SMTP listening", "tls", l.what, "addr", ln.Addr().String())
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
		<-done
	}, nil
}
