// Package require decides what a test does when an independent checker it
// needs is missing (PostgreSQL, dkimpy, Chromium, axe-core, the Standard
// Webhooks library, Node.js, Resend's Node SDK): on a developer's machine
// it skips, saying what is missing and how to get it; where
// MAILROOM_REQUIRE names the checker, as .ci/run sets it, it fails, so that
// CI cannot stay green without its cross-checks. Every such test goes
// through Missing.
//
// It is a leaf: it imports nothing of the project, so that any test
// package, storetest included, may use it.
package require

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// Env names the variable that lists, comma-separated, the checkers a run
// requires: MAILROOM_REQUIRE=postgres,dkimpy,chromium,axe,standardwebhooks.
const Env = "MAILROOM_REQUIRE"

// Checker is the name of an independent checker in Env.
type Checker string

// The checkers tests may need.
const (
	// Postgres is a PostgreSQL server named by MAILROOM_TEST_DATABASE_URL.
	Postgres Checker = "postgres"
	// DKIMpy is Debian's python3-dkim, which verifies DKIM signatures.
	DKIMpy Checker = "dkimpy"
	// Chromium is a headless Chromium for the dashboard's browser tests.
	Chromium Checker = "chromium"
	// Axe is axe-core, Deque's accessibility checker, from npm.
	Axe Checker = "axe"
	// StandardWebhooks is the npm "standardwebhooks" library, which
	// verifies webhook signatures.
	StandardWebhooks Checker = "standardwebhooks"
	// Node is Node.js, which runs the dashboard's own JavaScript tests.
	Node Checker = "node"
	// Resend is Resend's official Node SDK, the npm "resend" package,
	// which drives the Resend-compatible routes as applications do.
	Resend Checker = "resend"
)

// Checkers are every checker Env may name.
var Checkers = []Checker{Postgres, DKIMpy, Chromium, Axe, StandardWebhooks, Node, Resend}

// Required reports which checkers Env names, and the names in it that are
// no checker (a misspelt name would otherwise require nothing).
func Required() (required []Checker, unknown []string) {
	for name := range strings.SplitSeq(os.Getenv(Env), ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
		case slices.Contains(Checkers, Checker(name)):
			required = append(required, Checker(name))
		default:
			unknown = append(unknown, name)
		}
	}
	return required, unknown
}

// Missing ends the test, which cannot run because checker c is missing:
// it fails when Env names c (or names something that is no checker), and
// skips otherwise. The message says what is missing and how to get it.
func Missing(t testing.TB, c Checker, format string, args ...any) {
	t.Helper()
	required, unknown := Required()
	if len(unknown) > 0 {
		t.Fatalf("%s names %q, which are no checkers; the checkers are %v", Env, unknown, Checkers)
	}
	if slices.Contains(required, c) {
		t.Fatalf(format+" (and %s=%s requires %s)", append(args, Env, os.Getenv(Env), c)...)
	}
	t.Skipf(format, args...)
}
