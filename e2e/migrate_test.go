package e2e

import (
	"strings"
	"testing"
)

// TestMigrateSaysWhatItApplied: `mailroom migrate` names the migrations it
// applied, so that an operator upgrading sees the store was rewritten (or
// set up), and says nothing of the kind when there was nothing to apply.
func TestMigrateSaysWhatItApplied(t *testing.T) {
	work := t.TempDir()
	out, errOut, err := cliResult(work, nil, "migrate")
	if err != nil || !strings.Contains(out, "up to date") {
		t.Fatalf("migrate: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	// 22 is the newest migration (the webhook endpoints' format).
	if !strings.Contains(errOut, "storage migrated") || !strings.Contains(errOut, "applied=\"[1 2 3 ") || !strings.Contains(errOut, " 28]\"") {
		t.Errorf("a fresh store's migrate does not name the migrations it applied:\n%s", errOut)
	}
	out, errOut, err = cliResult(work, nil, "migrate")
	if err != nil || !strings.Contains(out, "up to date") || strings.Contains(errOut, "storage migrated") {
		t.Errorf("migrate again: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
}
