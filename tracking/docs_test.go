package tracking_test

import (
	"os"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/tracking"
)

// The agents docs/api.md lists under "Machine detection" are the ones
// that mark a request machine: a user reads the list to know what their
// numbers count, so an agent added here and not there is a defect.
func TestDocsListEveryMachineAgent(t *testing.T) {
	doc, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(doc), "**Machine detection.**")
	end := strings.Index(string(doc), "**Rate limits.**")
	if start < 0 || end < start {
		t.Fatal(`docs/api.md has no "Machine detection" paragraph before "Rate limits"`)
	}
	section := string(doc[start:end])
	for _, a := range tracking.MachineAgents {
		if !strings.Contains(section, "`"+a.Match+"`") {
			t.Errorf("docs/api.md's machine detection does not list `%s` (%s)", a.Match, a.What)
		}
	}
}
