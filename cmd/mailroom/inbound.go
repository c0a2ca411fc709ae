package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/inbound"
	"github.com/mailroom/mailroom/membudget"
	"github.com/mailroom/mailroom/smtpserver"
)

// inboundFlags are the return-path MX's (docs/api.md "Mail coming back"),
// which also takes mail for receiving domains (docs/api.md "Receiving
// mail").
type inboundFlags struct {
	listen         string
	receiveMaxSize receiveSizeFlag
}

func (f *inboundFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.listen, "inbound-listen", "", "the `HOST:PORT` of the SMTP server that receives bounces and complaints for the domains' bounce subdomains, and mail for receiving domains (their MX points at it; port 25 from the internet); empty disables it")
	f.receiveMaxSize = mailroom.DefaultReceiveMaxSize
	fs.Var(&f.receiveMaxSize, "receive-max-size", "the largest message the inbound MX takes, in bytes or with a unit (`SIZE` such as 25MiB), advertised in EHLO's SIZE and refused beyond with 552")
}

// receiveSizeFlag is --receive-max-size: bytes, or 25MiB, 10MB.
type receiveSizeFlag int64

func (s *receiveSizeFlag) String() string { return membudget.FormatSize(int64(*s)) }

func (s *receiveSizeFlag) Set(v string) error {
	n, err := membudget.ParseSize(v)
	if err != nil {
		return err
	}
	// A bounce with its original message must still fit, and a message
	// this large is held in memory whole while it is checked and stored.
	if n < 64<<10 || n > 1<<30 {
		return fmt.Errorf("%q is not between 64KiB and 1GiB", v)
	}
	*s = receiveSizeFlag(n)
	return nil
}

// check refuses a malformed --inbound-listen before serve touches storage.
func (f *inboundFlags) check(ctx context.Context) error {
	if f.listen == "" {
		return nil
	}
	return checkListenAddr(ctx, "--inbound-listen", f.listen)
}

// startInbound starts the return-path MX when --inbound-listen is set, and
// returns a function that stops it (letting the reports being read finish,
// for up to 30 s). Without it, serve warns: bounces and complaints that
// arrive after the SMTP exchange are not processed.
//
// The receiver takes mail for receiving domains at the same MX, up to
// --receive-max-size.
func (f *inboundFlags) startInbound(reports *inbound.Reports, receiver mailroom.MailReceiver, tlsConfig *tls.Config, hostname string, reg prometheus.Registerer, log *slog.Logger) (stop func(), err error) {
	if f.listen == "" {
		log.Warn("--inbound-listen is not set: bounces and complaints that arrive after delivery (to the bounce subdomains' MX) are not processed, and receiving domains take no mail")
		return func() {}, nil
	}
	reports.Dropped = reportDropMetrics(reg)
	srv := &inbound.Server{Handler: reports, Receiver: receiver, Config: smtpserver.Config{TLS: tlsConfig, Hostname: hostname, Log: log, Observe: inbound.Metrics(reg)}}
	srv.MaxBytes = int64(f.receiveMaxSize)
	s := smtpServer{role: "inbound", stopped: "inbound SMTP server stopped", shutdown: srv.Shutdown, log: log}
	return s.start(smtpPort{addr: f.listen, serve: srv.Serve})
}

// reportDropMetrics counts the reports that change nothing, by reason.
func reportDropMetrics(reg prometheus.Registerer) func(reason string) {
	dropped := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mailroom_inbound_reports_dropped_total",
		Help: "Reports received at the return-path MX that changed nothing, by reason (auto_reply, unknown, unverified: a return-path token that does not verify, unmatched: no such recipient).",
	}, []string{"reason"})
	reg.MustRegister(dropped)
	for _, r := range []string{"auto_reply", "unknown", "unverified", "unmatched"} {
		dropped.WithLabelValues(r)
	}
	return func(reason string) { dropped.WithLabelValues(reason).Inc() }
}
