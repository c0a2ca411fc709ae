package mailroom_test

import (
	"testing"

	"github.com/mailroom/mailroom"
)

func TestSimulated(t *testing.T) {
	for addr, want := range map[string]mailroom.SimulatedOutcome{
		"delivered@simulator.invalid":         mailroom.SimulateDelivered,
		"Bounced@Simulator.Invalid":           mailroom.SimulateBounced,
		"bounced+signup-42@simulator.invalid": mailroom.SimulateBounced,
		"complained+a+b@simulator.invalid":    mailroom.SimulateComplained,
		"deferred@simulator.invalid.":         mailroom.SimulateDeferred,
		"suppressed+x@simulator.invalid":      mailroom.SimulateSuppressed,
		"nobody@simulator.invalid":            mailroom.SimulateUnknown,
		"delivered-not@simulator.invalid":     mailroom.SimulateUnknown,
		"+delivered@simulator.invalid":        mailroom.SimulateUnknown,
	} {
		got, ok := mailroom.Simulated(addr)
		if !ok || got != want {
			t.Errorf("Simulated(%q) = %q, %v; want %q", addr, got, ok, want)
		}
		// The address validation of every send surface takes it.
		if _, err := mailroom.ParseAddress(addr); err != nil && addr[len(addr)-1] != '.' {
			t.Errorf("ParseAddress(%q): %v", addr, err)
		}
	}
	for _, addr := range []string{"delivered@example.com", "delivered@sub.simulator.invalid", "delivered@simulator.invalid.example", "no-at-sign"} {
		if got, ok := mailroom.Simulated(addr); ok {
			t.Errorf("Simulated(%q) = %q, a test address", addr, got)
		}
	}
}

func TestSimulatedResult(t *testing.T) {
	for _, c := range []struct {
		addr     string
		attempts int
		outcome  mailroom.Outcome
		code     int
		hard     bool
	}{
		{"delivered@simulator.invalid", 0, mailroom.Delivered, 250, false},
		{"complained@simulator.invalid", 0, mailroom.Delivered, 250, false},
		{"bounced+x@simulator.invalid", 0, mailroom.Bounced, 550, true},
		{"whoever@simulator.invalid", 0, mailroom.Bounced, 550, true},
		{"deferred@simulator.invalid", 0, mailroom.Deferred, 451, false},
		{"deferred@simulator.invalid", 1, mailroom.Delivered, 250, false},
	} {
		res := mailroom.SimulatedResult(c.addr, c.attempts)
		if res.Outcome != c.outcome || res.Code != c.code || res.Recipient != c.addr {
			t.Errorf("%s after %d: %+v", c.addr, c.attempts, res)
		}
		// A real receiver's 5.1.1 is a hard bounce: the state and event
		// are those of one.
		if got := mailroom.IsHardBounce(res.Code, res.Enhanced+" "+res.Response); got != c.hard {
			t.Errorf("%s: hard bounce %v, want %v", c.addr, got, c.hard)
		}
	}
}
