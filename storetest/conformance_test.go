package storetest_test

import (
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// TestConformance runs the one suite against every engine, the engines
// side by side: each has stores of its own, and the suite, the longest of
// the project's, waits mostly on commits, so they overlap well.
func TestConformance(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		t.Parallel()
		storetest.Exercise(t, func(t testing.TB) mailroom.Store { return e.Open(t) })
	})
}
