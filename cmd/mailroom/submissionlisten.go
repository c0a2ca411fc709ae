package main

import (
	"context"
	"crypto/tls"
	"flag"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom/membudget"
	"github.com/mailroom/mailroom/smtpserver"
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

// check refuses a malformed listen address before serve touches storage.
func (f *submissionFlags) check(ctx context.Context) error {
	for _, l := range []struct{ flag, addr string }{{"--submission-listen", f.starttls}, {"--submissions-listen", f.implicit}} {
		if l.addr == "" {
			continue
		}
		if err := checkListenAddr(ctx, l.flag, l.addr); err != nil {
			return err
		}
	}
	return nil
}

// startSubmission starts the submission listeners that are set and
// returns a function that stops them, letting the messages being taken
// get their answer (up to 30 s). Messages take their memory from memory,
// the node's budget the HTTPS API takes from too, counting its refusals
// in refusals.
func (f *submissionFlags) startSubmission(h submission.Handler, memory *membudget.Budget, refusals *membudget.Refusals, tlsConfig *tls.Config, hostname string, reg prometheus.Registerer, log *slog.Logger) (stop func(), err error) {
	if f.starttls == "" && f.implicit == "" {
		return func() {}, nil
	}
	srv := &submission.Server{Handler: h, Config: smtpserver.Config{TLS: tlsConfig, Hostname: hostname, Log: log, Observe: submission.Metrics(reg)},
		Memory: memory, MemoryRefusals: refusals}
	var ports []smtpPort
	if f.starttls != "" {
		ports = append(ports, smtpPort{addr: f.starttls, serve: srv.Serve, attrs: []any{"tls", "STARTTLS"}})
	}
	if f.implicit != "" {
		ports = append(ports, smtpPort{addr: f.implicit, serve: srv.ServeTLS, attrs: []any{"tls", "implicit TLS"}})
	}
	s := smtpServer{role: "submission", stopped: "SMTP submission server stopped", shutdown: srv.Shutdown, log: log}
	return s.start(ports...)
}
