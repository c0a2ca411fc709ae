package storetest_test

import (
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// TestConformance runs the one suite against every engine.
func TestConformance(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		storetest.Exercise(t, func(t testing.TB) mailroom.Store { return e.Open(t) })
	})
}
