package main

import (
	"context"
	"crypto/tls"
	"flag"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom/inbound"
	"github.com/mailroom/mailroom/smtpserver"
)

// inboundFlags are the return-path MX's (docs/api.md "Mail coming back").
type inboundFlags struct {
	listen string
}

func (f *inboundFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.listen, "inbound-listen", "", "the `HOST:PORT` of the SMTP server that receives bounces and complaints for the domains' bounce subdomains (their MX points at it; port 25 from the internet); empty disables it")
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
func (f *inboundFlags) startInbound(reports *inbound.Reports, tlsConfig *tls.Config, hostname string, reg prometheus.Registerer, log *slog.Logger) (stop func(), err error) {
	if f.listen == "" {
		log.Warn("--inbound-listen is not set: bounces and complaints that arrive after delivery (to the bounce subdomains' MX) are not processed")
		return func() {}, nil
	}
	reports.Dropped = reportDropMetrics(reg)
	srv := &inbound.Server{Handler: reports, Config: smtpserver.Config{TLS: tlsConfig, Hostname: hostname, Log: log, Observe: inbound.Metrics(reg)}}
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
