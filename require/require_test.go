package require_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/require"
)

// TestEnvNamesCheckers: a misspelt name in MAILROOM_REQUIRE fails the run
// even when every checker is installed, which is when no test would call
// Missing to notice it.
func TestEnvNamesCheckers(t *testing.T) {
	if _, unknown := require.Required(); len(unknown) > 0 {
		t.Fatalf("%s names %q, which are no checkers; the checkers are %v", require.Env, unknown, require.Checkers)
	}
}

// childEnv marks the run of this test binary that TestMissingSkipsUnlessRequired
// starts, in which TestMissingChild calls Missing.
const childEnv = "MAILROOM_REQUIRE_TEST_CHILD"

// A missing checker skips its test unless the variable names it, and
// fails it when it does. The test binary runs itself, so that the skip or
// failure is the testing package's own.
func TestMissingSkipsUnlessRequired(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want string
	}{
		{"", "--- SKIP"},
		{"dkimpy,chromium", "--- SKIP"},
		{"postgres", "--- FAIL"},
		{" dkimpy , postgres ", "--- FAIL"},
		{"postgre", "--- FAIL"}, // misspelt: no checker
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissingChild$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"=1", require.Env+"="+tc.env)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), tc.want+": TestMissingChild") {
			t.Errorf("%s=%q: want %s, the child said:\n%s", require.Env, tc.env, tc.want, out)
		}
	}
}

func TestMissingChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("runs only as the child of TestMissingSkipsUnlessRequired")
	}
	require.Missing(t, require.Postgres, "PostgreSQL is missing")
}
