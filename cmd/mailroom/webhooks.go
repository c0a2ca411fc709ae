package main

import (
	"context"
	"flag"
	"log/slog"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/netguard"
	"github.com/mailroom/mailroom/resend"
	"github.com/mailroom/mailroom/webhook"
)

// webhookFlags are how events leave (docs/api.md "Webhooks and events").
type webhookFlags struct {
	allowPrivate bool
	max          int
	perEndpoint  int
}

func (f *webhookFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.allowPrivate, "webhooks-allow-private", false, "let webhook URLs be plain http and reach loopback and private addresses (local development, tests, closed networks; on with --dev)")
	fs.IntVar(&f.max, "max-webhooks", mailroom.DefaultMaxWebhooks, "how many webhook endpoints one account may have")
	fs.IntVar(&f.perEndpoint, "webhook-concurrency", webhook.DefaultPerEndpoint, "the most webhook requests in flight to one endpoint from this node")
}

// webhookServices are the webhooks API and the dispatcher of this node,
// and the fetcher of the attachments Resend's requests give by path, whose
// URLs are the client's to choose as a webhook's are, and which is held
// to the same rules (--webhooks-allow-private, the resolver).
type webhookServices struct {
	api         *webhook.Service
	dispatcher  *webhook.Dispatcher
	attachments *resend.AttachmentFetcher
}

// check refuses the flags' mistakes, before serve touches storage.
func (f *webhookFlags) check() error {
	if f.max < 1 {
		return usageError{"--max-webhooks must be at least 1"}
	}
	if f.perEndpoint < 1 {
		return usageError{"--webhook-concurrency must be at least 1"}
	}
	return nil
}

// services builds the webhooks service, whose URLs are checked against the
// resolver of --dns-server, and the dispatcher of node nodeID, on flags
// check accepted.
func (f *webhookFlags) services(store mailroom.Store, seal mailroom.Sealer, resolver *dns.Resolver, nodeID string, log *slog.Logger) (*webhookServices, error) {
	allow := f.allowPrivate
	api := &webhook.Service{
		Store:  store,
		Sealer: seal,
		CheckURL: func(ctx context.Context, url string) error {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			return netguard.CheckURL(ctx, resolver, url, allow)
		},
		Max: f.max,
		Now: time.Now,
	}
	d := &webhook.Dispatcher{
		Store:        store,
		Keys:         api.SigningKeys,
		Node:         nodeID,
		AllowPrivate: allow,
		Version:      shortVersion(),
		Log:          log,
		Now:          time.Now,
		PerEndpoint:  f.perEndpoint,
	}
	if resolver.Server != "" {
		// The system's resolver otherwise: it reads /etc/hosts, where
		// a developer's "localhost" is.
		d.Resolver = resolver
	}
	api.Wake = d.Wake
	return &webhookServices{api: api, dispatcher: d, attachments: resend.NewAttachmentFetcher(d.Resolver, nil, allow)}, nil
}
