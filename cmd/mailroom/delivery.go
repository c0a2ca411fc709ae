package main

import (
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/compose"
	"github.com/mailroom/mailroom/delivery"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/domain"
	"github.com/mailroom/mailroom/emaillog"
	"github.com/mailroom/mailroom/retention"
	"github.com/mailroom/mailroom/send"
	"github.com/mailroom/mailroom/smtp"
)

// deliveryFlags are how mail leaves (docs/api.md "Command line").
type deliveryFlags struct {
	mode          string
	relayURL      string
	smtpPort      int
	retryMinDelay time.Duration
	retryWindow   time.Duration
	retention     time.Duration
	// auditRetention is how long the audit log keeps its entries.
	auditRetention time.Duration
	workers        int
	lease          time.Duration
	sitesFlags
}

func (f *deliveryFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.mode, "delivery", "", "how mail leaves: `MODE` is direct, relay or capture (default direct; capture with --dev)")
	secretFlag(fs, &f.relayURL, "relay-url", "the smarthost `URL` for relay mode: smtp://user:pass@host:port, or smtps:// for implicit TLS")
	fs.IntVar(&f.smtpPort, "smtp-port", 25, "the `PORT` dialled on MX hosts")
	fs.DurationVar(&f.retryMinDelay, "retry-min-delay", time.Minute, "the first retry delay of a deferred delivery; it doubles from there")
	fs.DurationVar(&f.retryWindow, "retry-window", 72*time.Hour, "how long a deferred delivery is retried before it fails")
	fs.DurationVar(&f.retention, "retention", 30*24*time.Hour, "how long messages, their content and events, and webhook attempts, are kept (at least 24h)")
	fs.DurationVar(&f.auditRetention, "audit-retention", 365*24*time.Hour, "how long the audit log keeps its entries, as a Go duration in hours (8760h: one year; at least 24h)")
	fs.IntVar(&f.workers, "delivery-workers", 8, "delivery concurrency on this node, in units of 50 messages in flight (0: this node only accepts, for API-only nodes of a cluster)")
	fs.DurationVar(&f.lease, "delivery-lease", 15*time.Minute, "the longest a claim on a recipient lasts while its node lives (a dead node's claims are released within a minute; keep it above the SMTP timeouts)")
	f.sitesFlags.register(fs)
}

// check refuses the flags' mistakes, before serve touches storage.
func (f *deliveryFlags) check(dev bool) error {
	if f.workers < 0 {
		return usageError{"--delivery-workers cannot be negative"}
	}
	if f.retention < 24*time.Hour {
		return usageError{"--retention must be at least 24h: idempotency keys live as long as the log"}
	}
	if f.auditRetention < 24*time.Hour {
		return usageError{"--audit-retention must be at least 24h (8760h is a year)"}
	}
	if f.retryMinDelay <= 0 || f.retryWindow <= 0 || f.lease <= 0 {
		return usageError{"--retry-min-delay, --retry-window and --delivery-lease must be positive"}
	}
	if err := f.sitesFlags.check(); err != nil {
		return err
	}
	switch f.deliveryMode(dev) {
	case "capture", "direct":
	case "relay":
		if f.relayURL == "" {
			return usageError{"--delivery relay needs --relay-url"}
		}
		if _, err := smtp.ParseRelayURL(f.relayURL); err != nil {
			return usageError{err.Error()}
		}
	default:
		return usageError{fmt.Sprintf("--delivery must be direct, relay or capture, not %q", f.mode)}
	}
	return nil
}

// deliveryMode is --delivery, or its default: direct, capture with --dev.
func (f *deliveryFlags) deliveryMode(dev bool) string {
	if f.mode != "" {
		return f.mode
	}
	if dev {
		return "capture"
	}
	return "direct"
}

// transport builds the Transport of the chosen mode, on flags check
// accepted. Direct delivery keeps each site's limits in sites and sends
// from the pools' addresses.
func (f *deliveryFlags) transport(dev bool, resolver *dns.Resolver, hostname string, sites mailroom.Sites, tlsPolicy directTLS) (mailroom.Transport, string, error) {
	mode := f.deliveryMode(dev)
	switch mode {
	case "capture":
		return smtp.Capture{}, "capture (stored, not sent)", nil
	case "direct":
		t := smtp.NewDirect(resolver, hostname)
		t.Port = f.smtpPort
		t.Sites = sites
		t.Pools = f.pools
		t.MTASTS, t.TLSObserver = tlsPolicy.mtasts, tlsPolicy.observer
		note := fmt.Sprintf("direct to MX hosts on port %d", f.smtpPort)
		if len(f.pools) > 0 {
			note += fmt.Sprintf(", from %d IP pools (default %s)", len(f.pools), f.pools[0].Name)
		}
		return t, note, nil
	case "relay":
		if f.relayURL == "" {
			return nil, "", usageError{"--delivery relay needs --relay-url"}
		}
		cfg, err := smtp.ParseRelayURL(f.relayURL)
		if err != nil {
			return nil, "", usageError{err.Error()}
		}
		return smtp.NewRelay(cfg, hostname), "relay through " + cfg.String(), nil
	}
	return nil, "", usageError{fmt.Sprintf("--delivery must be direct, relay or capture, not %q", mode)}
}

// directTLS is what direct delivery's TLS policy needs: recipient
// domains' MTA-STS policies, and who is told of each session's TLS (the
// metric and TLS reports). Certificates are checked against the system's
// roots, which honour SSL_CERT_FILE and SSL_CERT_DIR.
type directTLS struct {
	mtasts   mailroom.MTASTSPolicies
	observer mailroom.TLSObserver
}

// deliveryServices are the send path, the delivery runtime and retention.
type deliveryServices struct {
	sender    *send.Sender
	signer    *delivery.Signer
	deliverer *delivery.Deliverer
	messages  *emaillog.Service
	scheduled *send.Scheduled
	retention *retention.Sweeper
}

// services builds the send path, the delivery worker and retention for the
// node nodeID, on flags check accepted. sites is the transport's sites'
// state, which claims follow (nil unless direct).
func (f *deliveryFlags) services(store mailroom.Store, domains *domain.Service, transport mailroom.Transport, sites mailroom.Sites,
	hostname, nodeID string, log *slog.Logger) (*deliveryServices, error) {
	signer := &delivery.Signer{Store: store, Domains: domains, Composer: compose.Composer{}}
	const batch = 50
	deliverer := &delivery.Deliverer{
		Store: store, Signer: signer, Transport: transport, Reports: store, Now: time.Now, Log: log, Node: nodeID,
		Retry: mailroom.RetryPolicy{MinDelay: f.retryMinDelay, MaxDelay: 2 * time.Hour, Window: f.retryWindow,
			GreylistRetry: f.greylistRetry},
		Lease: f.lease, Batch: batch, MaxMessages: f.workers * batch, PerDestination: max(1, f.workers*batch/2),
		Poll: time.Second, DrainTimeout: 30 * time.Second,
	}
	if sites != nil {
		deliverer.Sites = sites
	}
	return &deliveryServices{
		sender:    &send.Sender{Store: store, Domains: domains, Now: time.Now, Queued: deliverer.Wake, Scheduled: deliverer.WakeAt},
		scheduled: &send.Scheduled{Store: store, Now: time.Now, Queued: deliverer.Wake, Scheduled: deliverer.WakeAt},
		deliverer: deliverer,
		signer:    signer,
		messages:  &emaillog.Service{Store: store, Signer: signer},
		retention: &retention.Sweeper{Store: store, Webhooks: store, Received: store, Period: f.retention,
			Audit: store, AuditPeriod: f.auditRetention, Now: time.Now, Log: log},
	}, nil
}
