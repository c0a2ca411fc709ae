package main

import (
	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/suppression"
)

// newSuppressions is the suppression list service the API serves (docs/api.md
// "Suppressions"), over the store. A function of its own so that every front end
// (the API now, the command line and dashboard later) gets the same one.
func newSuppressions(store mailroom.Store) *suppression.Service {
	return &suppression.Service{Store: store}
}
