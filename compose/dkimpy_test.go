package compose

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/require"
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

// requireDKIMpy skips the test unless Debian's python3-dkim can be
// imported (fails it, under MAILROOM_REQUIRE=dkimpy). Tests do not install
// packages: .ci/run installs it, and on a developer's machine a skip that
// says what is missing beats a test that runs apt-get.
func requireDKIMpy(t *testing.T) {
	t.Helper()
	dkimpyOnce.Do(func() {
		if out, err := exec.Command(systemPython, "-c", "import dkim").CombinedOutput(); err != nil {
			dkimpyErr = fmt.Errorf("%s -c 'import dkim': %v: %s", systemPython, err, lastLine(out))
		}
	})
	if dkimpyErr != nil {
		require.Missing(t, require.DKIMpy, "python3-dkim (Debian) is not installed; .ci/run installs it (%v)", dkimpyErr)
	}
}

// lastLine is the end of a Python traceback, the line that says what failed.
func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	return s[strings.LastIndexByte(s, '\n')+1:]
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
	m.Subject = "Re: " + lookalike
	m.Attachments = []mailroom.Attachment{invoice, logo,
		// Sent unencoded, in 7bit: dkimpy hashes it as it is.
		{Filename: "original.eml", ContentType: "message/rfc822",
			Content: []byte("Subject: Greetings\nContent-Type: text/plain\n\nGreetings from Cologne\n")}}
	// A recipient's copy of marketing mail: its List-Unsubscribe pair
	// signed by copies.go's signer, the rest as compose writes it.
	raw := mustComposeCopy(t, m, "bob@example.net")
	if !bytes.Contains(raw, []byte("Content-Type: message/rfc822")) || !bytes.Contains(raw, []byte("Greetings from Cologne\r\n")) {
		t.Fatal("the message/rfc822 attachment is not sent unencoded")
	}

	if ok, out := dkimpy(t, raw); !ok {
		t.Fatalf("dkimpy rejects the signature: %s", out)
	}
	if ok, out := dkimpy(t, mustCompose(t, testMessage())); !ok {
		t.Fatalf("dkimpy rejects the signature of transactional mail: %s", out)
	}
	// The harness can say no: a tampered body fails.
	forged := bytes.Replace(raw, []byte("shipped"), []byte("stalled"), 1)
	if ok, out := dkimpy(t, forged); ok {
		t.Fatalf("dkimpy accepts a tampered body: %s", out)
	}
}
