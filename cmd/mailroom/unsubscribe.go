package main

import (
	"fmt"
	"net"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/delivery"
	"github.com/mailroom/mailroom/sealer"
	"github.com/mailroom/mailroom/unsubscribe"
)

// unsubscribeKeyLabel names the key of unsubscribe tokens among those
// derived from the secret key: changing it makes every unsubscribe link in
// mail already sent unverifiable.
const unsubscribeKeyLabel = "mailroom unsubscribe v1"

// publicURL is the service's public HTTPS base (--public-url), checked:
// by default https://<hostname>, and with --dev the address it serves
// (from --listen; an ephemeral port is filled in by servedAt).
func (c serveConfig) resolvePublicURL() (string, error) {
	if c.publicURL != "" {
		u, err := unsubscribe.CheckPublicURL(c.publicURL)
		if err != nil {
			return "", usageError{"--public-url: " + err.Error()}
		}
		return u, nil
	}
	base := "https://" + c.hostname
	if c.dev {
		base = listenURL(c.listen)
	}
	u, err := unsubscribe.CheckPublicURL(base)
	if err != nil {
		return "", usageError{fmt.Sprintf("the default public URL %s is not usable (%v); pass --public-url https://mail.example.com", base, err)}
	}
	return u, nil
}

// listenURL is the base URL of an HTTPS listener on addr, as baseURL
// gives it once listening: a wildcard host is reached as localhost.
func listenURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "https://localhost"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "https://" + net.JoinHostPort(host, port)
}

// unsubscribes wires one-click unsubscribe (docs/api.md "Mail coming
// back"): the links each recipient's copy of marketing mail carries, and
// the service that answers them, under one key derived from the secret
// key, which every node shares.
func (c serveConfig) unsubscribes(store mailroom.Store, seal *sealer.Sealer, signer *delivery.Signer) (*unsubscribe.Service, error) {
	base, err := c.resolvePublicURL()
	if err != nil {
		return nil, err
	}
	tokens := unsubscribe.Tokens{Key: seal.DeriveKey(unsubscribeKeyLabel)}
	signer.SetUnsubscribe(unsubscribe.Links{Tokens: tokens, PublicURL: base})
	return &unsubscribe.Service{Tokens: tokens, Store: store, Now: time.Now}, nil
}

// servedAt points the links of `serve --dev` without --public-url at the
// address the HTTPS listener got: its port, when --listen asked for an
// ephemeral one.
func (c serveConfig) servedAt(u *unsubscribe.Service, signer *delivery.Signer, base string) {
	if !c.dev || c.publicURL != "" {
		return
	}
	if checked, err := unsubscribe.CheckPublicURL(base); err == nil {
		signer.SetUnsubscribe(unsubscribe.Links{Tokens: u.Tokens, PublicURL: checked})
	}
}
