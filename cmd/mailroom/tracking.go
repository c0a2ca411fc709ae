package main

import (
	"log/slog"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/delivery"
	"github.com/mailroom/mailroom/sealer"
	"github.com/mailroom/mailroom/tracking"
	"github.com/mailroom/mailroom/unsubscribe"
)

// trackingKeyLabel names the key of tracking tokens among those derived
// from the secret key: changing it makes every tracked link and pixel in
// mail already sent unverifiable (links answer 404).
const trackingKeyLabel = "mailroom tracking v1"

// trackings wires engagement tracking (docs/api.md "Engagement
// tracking"): the Tracker that rewrites each recipient's HTML before it
// is signed, and the service that answers the pixel and the links, under
// one key derived from the secret key, which every node shares, at the
// public URL unsubscribe links use.
func (c serveConfig) trackings(store mailroom.Store, seal *sealer.Sealer, signer *delivery.Signer, log *slog.Logger) (*tracking.Service, error) {
	base, err := c.resolvePublicURL()
	if err != nil {
		return nil, err
	}
	tokens, err := tracking.NewTokens(seal.DeriveKey(trackingKeyLabel))
	if err != nil {
		return nil, err
	}
	signer.SetTracker(tracking.Tracker{Tokens: tokens, PublicURL: base})
	return &tracking.Service{Tokens: tokens, Store: store, Now: time.Now, Log: log}, nil
}

// trackingServedAt points the tracking addresses of `serve --dev` without
// --public-url at the address the HTTPS listener got, as servedAt does
// the unsubscribe links.
func (c serveConfig) trackingServedAt(t *tracking.Service, signer *delivery.Signer, base string) {
	if !c.dev || c.publicURL != "" {
		return
	}
	if checked, err := unsubscribe.CheckPublicURL(base); err == nil {
		signer.SetTracker(tracking.Tracker{Tokens: t.Tokens, PublicURL: checked})
	}
}
