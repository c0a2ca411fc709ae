package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"time"

	"github.com/mailroom/mailroom/smtpserver"
)

// smtpPort is one port of an SMTP server: its address, the Serve that
// takes its listener, and what the log says of it beside its address.
type smtpPort struct {
	addr  string
	serve func(net.Listener) error
	attrs []any
}

// smtpServer is an SMTP server as serve starts it: role names it in the
// errors and log lines ("inbound listener on …", "inbound SMTP
// listening"); stopped is the line logged when a Serve fails.
type smtpServer struct {
	role     string
	stopped  string
	shutdown func(context.Context) error
	log      *slog.Logger
}

// start listens on every port, serves each, and returns a function that
// stops the server, letting the messages being taken get their answer (up
// to 30 s), and waits for every Serve to return.
func (s smtpServer) start(ports ...smtpPort) (stop func(), err error) {
	lns := make([]net.Listener, 0, len(ports))
	for _, p := range ports {
		ln, err := net.Listen("tcp", p.addr)
		if err != nil {
			for _, ln := range lns {
				_ = ln.Close()
			}
			return nil, fmt.Errorf("%s listener on %s: %w", s.role, p.addr, err)
		}
		lns = append(lns, ln)
	}
	done := make(chan struct{}, len(ports))
	for i, p := range ports {
		ln := lns[i]
		go func() {
			defer func() { done <- struct{}{} }()
			if err := p.serve(ln); err != nil && !errors.Is(err, smtpserver.ErrServerClosed) {
				s.log.Error(s.stopped, slices.Concat(p.attrs, []any{"err", err})...)
			}
		}()
		s.log.Info(s.role+" SMTP listening", slices.Concat(p.attrs, []any{"addr", ln.Addr().String()})...)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.shutdown(ctx)
		for range ports {
			<-done
		}
	}, nil
}
