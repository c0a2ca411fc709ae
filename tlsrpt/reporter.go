package tlsrpt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/netguard"
)

// Reporter timing and bounds.
const (
	// DefaultGrace is how long after a window's end its reports wait, so
	// that every node's last counts of it (flushed every
	// DefaultFlushEvery) are in the store.
	DefaultGrace = 3 * DefaultFlushEvery
	// DefaultPoll is how often a Reporter looks for windows to report.
	DefaultPoll = 10 * time.Second
	// reportLease is how long a node holds a report it builds: sending
	// takes a DNS lookup and a POST or an accept per destination; a node
	// that dies lets another send it when the lease runs out.
	reportLease = 10 * time.Minute
	// giveUpAfter is how long after its window a report whose every
	// destination failed stops being tried.
	giveUpAfter = 24 * time.Hour
	// maxDetails bounds the failure details of a report, the most
	// frequent kept; the totals count every session.
	maxDetails = 1000
	// claimBatch is how many reports one claim takes.
	claimBatch = 10
)

// Reporter sends the reports of ended windows (RFC 8460 §4, §5). Every
// node may run one: the store's lease makes sure one node sends each
// window's report for a domain.
type Reporter struct {
	Store mailroom.TLSReportStore
	// Resolver looks up the TLS-RPT records and, when it is a
	// netguard.Resolver too, the https destinations' hosts (--dns-server).
	Resolver TXTResolver
	// Mailer takes mailto: reports; nil leaves them unsent (logged).
	Mailer ReportMailer
	// HTTP posts https: reports: NewHTTPClient.
	HTTP *http.Client
	// AllowPrivate lets https destinations be private addresses (tests,
	// local development), as --webhook-allow-private.
	AllowPrivate bool
	// From is --tls-rpt-from: the reports' From and contact-info; its
	// domain is the submitter and, unless Organization is set, the
	// organization-name.
	From         string
	Organization string
	// Grace and Poll: DefaultGrace and DefaultPoll when zero.
	Grace, Poll time.Duration
	Now         func() time.Time
	Log         *slog.Logger
}

// Run sends due reports every Poll until ctx ends.
func (r *Reporter) Run(ctx context.Context) {
	poll := r.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if _, err := r.ReportDue(ctx); err != nil && ctx.Err() == nil {
			r.Log.Warn("TLS reports: could not claim reports to send", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ReportDue claims and handles every report due now, and returns how many
// it handled (sent, or found unwanted).
func (r *Reporter) ReportDue(ctx context.Context) (int, error) {
	grace := r.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	done := 0
	for {
		now := r.Now()
		windows, err := r.Store.ClaimTLSReports(ctx, now, now.Add(-grace), reportLease, claimBatch)
		if err != nil || len(windows) == 0 {
			return done, err
		}
		for _, w := range windows {
			err := r.report(ctx, w)
			switch {
			case err == nil:
			case r.Now().Sub(w.End) > giveUpAfter:
				r.Log.Error("TLS report given up after a day of failures", "domain", w.Domain, "window", w.Start, "err", err)
			default:
				// Kept claimed: tried again when the lease runs out.
				r.Log.Warn("TLS report not sent; trying again later", "domain", w.Domain, "window", w.Start, "err", err)
				continue
			}
			if err := r.Store.FinishTLSReport(ctx, w); err != nil {
				return done, err
			}
			done++
		}
	}
}

// report builds and sends w's report. It fails only when the report is
// worth trying again: the resolver failed, or every destination did.
func (r *Reporter) report(ctx context.Context, w mailroom.TLSReportWindow) error {
	dest, err := lookupDestinations(ctx, r.Resolver, w.Domain)
	switch {
	case err == errNoRecord:
		r.Log.Debug("TLS report not wanted", "domain", w.Domain, "reason", err)
		return nil
	case errors.Is(err, errNoRecord):
		// A record that does not parse: the domain's administrator would
		// want to know why no report comes, and only the log can say.
		r.Log.Info("TLS report not sent: the domain's TLS-RPT record is not valid (RFC 8460 §3)",
			"domain", w.Domain, "reason", err)
		return nil
	case err != nil:
		return fmt.Errorf("look up _smtp._tls.%s: %w", w.Domain, err)
	}
	dest = dest.capped(MaxDestinations)
	policies, err := r.Store.TLSReportPolicies(ctx, w, maxDetails)
	if err != nil {
		return err
	}
	if len(policies) == 0 {
		return nil
	}
	sub := submitter(r.From)
	org := r.Organization
	if org == "" {
		org = sub
	}
	rep := buildReport(w, policies, org, r.From)
	gz, err := rep.gzipped()
	if err != nil {
		return err
	}
	var errs []error
	sent := 0
	for _, uri := range dest.HTTPS {
		if err := r.post(ctx, uri, gz); err != nil {
			errs = append(errs, err)
			continue
		}
		sent++
	}
	if len(dest.Mailto) > 0 {
		if err := r.mail(ctx, rep, w.Domain, sub, dest.Mailto, gz); err != nil {
			errs = append(errs, err)
		} else {
			sent++
		}
	}
	if len(errs) > 0 {
		r.Log.Warn("TLS report not sent to some of its destinations", "domain", w.Domain, "reportId", rep.ReportID, "err", errors.Join(errs...))
	}
	if sent == 0 {
		return errors.Join(errs...)
	}
	r.Log.Info("TLS report sent", "domain", w.Domain, "reportId", rep.ReportID, "destinations", sent)
	return nil
}

// mail hands the report message for addresses to the Mailer.
func (r *Reporter) mail(ctx context.Context, rep Report, domain, sub string, to []string, gz []byte) error {
	if r.Mailer == nil {
		return errors.New("no mailer for mailto: reports")
	}
	raw, err := reportMessage(rep, domain, sub, r.From, to, gz, r.Now())
	if err != nil {
		return err
	}
	return r.Mailer.SendReport(ctx, r.From, to, raw)
}

// resolver is Resolver as the URL check's, when it can be one.
func (r *Reporter) resolver() netguard.Resolver {
	if nr, ok := r.Resolver.(netguard.Resolver); ok {
		return nr
	}
	return net.DefaultResolver
}
