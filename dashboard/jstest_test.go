package dashboard

import (
	"os/exec"
	"testing"

	"github.com/mailroom/mailroom/require"
)

// The dashboard's pure modules (the MIME reader) have tests of their own in
// jstest/, run with Node's test runner; they need no browser.
func TestJavaScriptModules(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		require.Missing(t, require.Node, "node is not installed: the tests in dashboard/jstest need Node 18 or later (.ci/run installs it)")
	}
	out, err := exec.Command(node, "--test", "jstest/").CombinedOutput()
	if err != nil {
		t.Fatalf("node --test jstest/: %v\n%s", err, out)
	}
}
