package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/mail"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/compose"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/domain"
	"github.com/mailroom/mailroom/submission"
	"github.com/mailroom/mailroom/tlsrpt"
)

// minTLSRptInterval is the shortest --tls-rpt-interval: short enough to
// see a report in a test or a trial, long enough that the nodes' flushes
// (every few seconds) and the reporter's grace fit in a window.
const minTLSRptInterval = time.Minute

// tlsRptFlags are TLS reporting's (RFC 8460; docs/design.md "TLS
// reports"): who reports come from, and how long a report's window is.
type tlsRptFlags struct {
	tlsRptFrom     string
	tlsRptInterval time.Duration

	// tlsCollector is made once per serve (tlsReportCollector).
	tlsCollector *tlsrpt.Collector
}

func (f *tlsRptFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.tlsRptFrom, "tls-rpt-from", "", "send TLS reports (RFC 8460) from this `ADDRESS`, on a verified sending domain of an account; empty sends none")
	fs.DurationVar(&f.tlsRptInterval, "tls-rpt-interval", 24*time.Hour, "the period each TLS report covers, aligned to the Unix epoch (24h: UTC days); at least 1m")
}

// check refuses an address that is not one and a window too short.
func (f *tlsRptFlags) check() error {
	if f.tlsRptInterval < minTLSRptInterval {
		return usageError{fmt.Sprintf("--tls-rpt-interval must be at least %s", minTLSRptInterval)}
	}
	if f.tlsRptFrom == "" {
		return nil
	}
	a, err := mail.ParseAddress(f.tlsRptFrom)
	if err != nil || a.Name != "" || a.Address != f.tlsRptFrom || !strings.Contains(a.Address, "@") {
		return usageError{fmt.Sprintf("--tls-rpt-from must be a bare mail address such as tls-reports@example.com, not %q", f.tlsRptFrom)}
	}
	return nil
}

// tlsReportCollector is this node's mailroom.TLSObserver (the one
// smtp.Direct's TLSObserver is given): it counts the metric always, and
// the reports' counts when --tls-rpt-from is set.
func (f *tlsRptFlags) tlsReportCollector(store mailroom.TLSReportStore, log *slog.Logger) *tlsrpt.Collector {
	if f.tlsCollector == nil {
		opts := tlsrpt.Options{Interval: f.tlsRptInterval, Now: time.Now, Log: log}
		if f.tlsRptFrom != "" {
			opts.Store = store
		}
		f.tlsCollector = tlsrpt.NewCollector(opts)
	}
	return f.tlsCollector
}

// startTLSReports registers the metric and, with --tls-rpt-from, runs the
// collector's flushes and the reporter on workers until ctx ends (the
// last flush after delivery has drained). mailto: reports go through
// mailer.
func (f *tlsRptFlags) startTLSReports(ctx context.Context, workers *sync.WaitGroup, collector *tlsrpt.Collector,
	registry prometheus.Registerer, store mailroom.TLSReportStore, resolver *dns.Resolver, mailer *reportMailer,
	allowPrivate bool, log *slog.Logger) {
	collector.Register(registry)
	if f.tlsRptFrom == "" {
		return
	}
	reporter := &tlsrpt.Reporter{Store: store, Resolver: resolver, Mailer: mailer,
		HTTP: tlsrpt.NewHTTPClient(resolver, nil, allowPrivate), AllowPrivate: allowPrivate,
		From: f.tlsRptFrom, Now: time.Now, Log: log}
	workers.Go(func() { collector.Run(ctx) })
	workers.Go(func() { reporter.Run(ctx) })
	workers.Go(func() {
		if _, err := mailer.account(ctx); err != nil {
			log.Warn("--tls-rpt-from "+f.tlsRptFrom+": "+err.Error()+"; mailto: TLS reports wait until it is", "from", f.tlsRptFrom)
		}
	})
}

// reportMailer sends mailto: TLS reports as SMTP submission's messages
// are accepted (submission.Service.Submit): checked against the account's
// verified domains, DKIM-signed with the From domain's key, logged and
// delivered with retries like any message. The account is the one with
// the --tls-rpt-from address's domain verified, found at each report
// (the domain may be added and verified after the node starts): reports
// show in that account's log and events.
type reportMailer struct {
	from    string
	store   mailroom.AccountStore
	domains *domain.Service
	submit  *submission.Service
}

func (f *tlsRptFlags) newReportMailer(store mailroom.Store, domains *domain.Service, queued func()) *reportMailer {
	return &reportMailer{from: f.tlsRptFrom, store: store, domains: domains, submit: &submission.Service{Auth: trustedKeys{}, Store: store,
		Domains: domains, Signer: compose.Composer{}, Now: time.Now, Queued: queued}}
}

// SendReport accepts raw from from to to as the account's message.
func (m *reportMailer) SendReport(ctx context.Context, from string, to []string, raw []byte) error {
	acct, err := m.account(ctx)
	if err != nil {
		return err
	}
	_, err = m.submit.Submit(ctx, &mailroom.APIKey{AccountID: acct.ID}, submission.Envelope{MailFrom: from, Rcpts: to}, bytes.NewReader(raw))
	return err
}

// account is the first account that may send from the --tls-rpt-from
// domain.
func (m *reportMailer) account(ctx context.Context) (*mailroom.Account, error) {
	name := strings.ToLower(m.from[strings.LastIndexByte(m.from, '@')+1:])
	accounts, err := m.store.ListAccounts(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range accounts {
		if _, err := m.domains.CheckSendingDomain(ctx, a.ID, name); err == nil {
			return a, nil
		}
	}
	return nil, fmt.Errorf("no account has the domain %s verified for sending; add and verify it", name)
}

// trustedKeys stands for an API key in reports the node itself sends:
// there is no client to authenticate.
type trustedKeys struct{}

func (trustedKeys) Authenticate(context.Context, string) (*mailroom.APIKey, error) {
	return nil, mailroom.Errorf(mailroom.ECodeInvalidAPIKey, "TLS reports take no API key")
}
func (trustedKeys) Recheck(context.Context, *mailroom.APIKey) error { return nil }
