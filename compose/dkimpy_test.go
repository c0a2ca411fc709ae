package compose

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// systemPython is Debian's interpreter: a pyenv python earlier on PATH does
// not see Debian's python3-dkim.
const systemPython = "/usr/bin/python3"

// dkimpyVerify is fed the message on stdin and the key record and its DNS
// name as arguments; dnsfunc stands in for DNS so that nothing leaves the
// machine. It prints dkimpy's verdict and exits 0 only on a pass.
const dkimpyVerify = `
import sys, dkim
record, name = sys.argv[1].encode(), sys.argv[2].encode()
def dnsfunc(qname, timeout=5):
    return record if qname.rstrip(b".") == name else None
ok = dkim.verify(sys.stdin.buffer.read(), dnsfunc=dnsfunc)
print("pass" if ok else "fail")
sys.exit(0 if ok else 1)
`

var (
	dkimpyOnce sync.Once
	dkimpyErr  error
)

// requireDKIMpy makes Debian's python3-dkim available, installing it once
// per test run when it is missing and the tests run as root, or skips.
func requireDKIMpy(t *testing.T) {
	t.Helper()
	dkimpyOnce.Do(func() { dkimpyErr = ensureDKIMpy() })
	if dkimpyErr != nil {
		t.Skipf("independent DKIM check skipped: dkimpy (Debian python3-dkim) unavailable: %v", dkimpyErr)
	}
}

func ensureDKIMpy() error {
	hasDKIM := func() bool { return exec.Command(systemPython, "-c", "import dkim").Run() == nil }
	if hasDKIM() {
		return nil
	}
	if _, err := os.Stat(systemPython); err != nil {
		return fmt.Errorf("no %s", systemPython)
	}
	if os.Geteuid() != 0 {
		return errors.New("not installed, and not root to apt-get install python3-dkim")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	aptGet := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get %s: %v: %s", strings.Join(args, " "), err, lastLines(out, 3))
		}
		return nil
	}
	if err := aptGet("install", "-y", "python3-dkim"); err != nil {
		// A fresh machine may not have package lists yet.
		if err := aptGet("update"); err != nil {
			return err
		}
		if err := aptGet("install", "-y", "python3-dkim"); err != nil {
			return err
		}
	}
	if !hasDKIM() {
		return errors.New("python3-dkim installed but `import dkim` still fails")
	}
	return nil
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

func dkimpy(t *testing.T, raw []byte) (bool, string) {
	t.Helper()
	key, record := testDomainKey()
	cmd := exec.Command(systemPython, "-c", dkimpyVerify, record, key.Selector+"._domainkey."+key.Domain)
	cmd.Stdin = bytes.NewReader(raw)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running dkimpy: %v", err)
	}
	return err == nil, strings.TrimSpace(string(out))
}

func TestDKIMpyVerifies(t *testing.T) {
	requireDKIMpy(t)
	m := testMessage()
	m.Category = mailroom.CategoryMarketing
	m.ReplyTo = []mailroom.Address{{Name: "Support – 客服", Address: "help@example.com"}}
	m.Attachments = []mailroom.Attachment{invoice, logo}
	raw := mustCompose(t, m)

	if ok, out := dkimpy(t, raw); !ok {
		t.Fatalf("dkimpy rejects the signature: %s", out)
	}
	// The harness can say no: a tampered body fails.
	forged := bytes.Replace(raw, []byte("shipped"), []byte("stalled"), 1)
	if ok, out := dkimpy(t, forged); ok {
		t.Fatalf("dkimpy accepts a tampered body: %s", out)
	}
}
