package e2e

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// The real binary answers --help for every command and group with exit 0
// and the usage on stdout, and a mistake with exit 2 and a pointer to it.
// (cmd/mailroom's tests check each help's flags and arguments.)
func TestHelpExitsZero(t *testing.T) {
	work := t.TempDir()
	for _, line := range []string{
		"--help", "-h", "help", "serve --help", "accounts --help", "accounts create --help", "accounts list --help",
		"accounts update --help", "keys --help", "keys create --help", "keys list --help", "keys revoke --help",
		"migrate --help", "version --help", "help keys revoke", "send --help", "messages --help", "messages list --help",
		"messages get --help", "messages raw --help", "help messages get", "domains --help", "domains update --help",
	} {
		out, errOut, err := cliResult(work, nil, strings.Fields(line)...)
		if err != nil || errOut != "" || !strings.Contains(out, "Usage") {
			t.Errorf("mailroom %s: %v\nstdout: %s\nstderr: %s", line, err, out, errOut)
		}
	}
	for _, line := range []string{"accounts", "keys rotate", "keys revoke", "keys revoke --scopes send abcdefghijklmnop", "messages", "send --to a@example.com", "domains update shop.example"} {
		out, errOut, err := cliResult(work, nil, strings.Fields(line)...)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || out != "" || !strings.Contains(errOut, "--help\" for usage") {
			t.Errorf("mailroom %s: %v\nstdout: %s\nstderr: %s", line, err, out, errOut)
		}
	}
}
