package main

import "github.com/mailroom/mailroom"

// newSuppressions is the suppression list service the API serves (docs/api.md
// "Suppressions"), over the store. A function of its own so that every front end
// (the API now, the command line and dashboard later) gets the same one.
func newSuppressions(store mailroom.Store) *mailroom.Suppressions {
	return &mailroom.Suppressions{Store: store}
}
