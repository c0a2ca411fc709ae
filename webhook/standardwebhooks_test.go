package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/require"
	"github.com/mailroom/mailroom/storetest"
)

// The Standard Webhooks reference library for JavaScript (npm
// "standardwebhooks", the one Svix maintains) verifies real deliveries:
// an implementation other than this project's own, so that a mistake made
// the same way in Sign and Verify cannot pass unseen.

// swVerify is fed {secret, headers, body (base64)} on stdin and verifies
// the body as a consumer does, with new Webhook(secret).verify(body,
// headers). It prints the library's verdict and exits 0 only when it
// verifies.
const swVerify = `
const { Webhook } = require("standardwebhooks");
let input = "";
process.stdin.on("data", (c) => (input += c));
process.stdin.on("end", () => {
  const { secret, headers, body } = JSON.parse(input);
  try {
    new Webhook(secret).verify(Buffer.from(body, "base64"), headers);
    console.log("verified");
  } catch (e) {
    console.log(e.name + ": " + e.message);
    process.exit(1);
  }
});
`

// standardWebhooksDir is where .ci/run installs the library with npm
// (`npm install --prefix webhook/testdata/standardwebhooks
// standardwebhooks@1.1.1`); MAILROOM_STANDARDWEBHOOKS names another such
// folder. Tests do not install packages themselves.
const standardWebhooksDir = "testdata/standardwebhooks"

// requireStandardWebhooks returns the folder that holds the library in
// node_modules, or skips the test saying how to install it (fails it,
// under MAILROOM_REQUIRE=standardwebhooks).
func requireStandardWebhooks(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MAILROOM_STANDARDWEBHOOKS")
	if dir == "" {
		dir = standardWebhooksDir
	}
	if _, err := exec.LookPath("node"); err != nil {
		require.Missing(t, require.StandardWebhooks, "node is not installed, so the Standard Webhooks cross-check cannot run (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "standardwebhooks", "package.json")); err != nil {
		require.Missing(t, require.StandardWebhooks, "the Standard Webhooks library is not installed (%v): `npm install --prefix webhook/testdata/standardwebhooks standardwebhooks@1.1.1` (from the repository root) installs it, as .ci/run does", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// standardWebhooksVerify runs the library on a request, and returns
// whether it verified and what it said.
func standardWebhooksVerify(t *testing.T, dir, secret string, r *received, body []byte) (bool, string) {
	t.Helper()
	headers := map[string]string{}
	for name := range r.header {
		headers[strings.ToLower(name)] = r.header.Get(name)
	}
	in, err := json.Marshal(map[string]any{"secret": secret, "headers": headers, "body": body})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "-e", swVerify)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running node: %v", err)
	}
	return err == nil, strings.TrimSpace(string(out))
}

func TestStandardWebhooksLibraryVerifies(t *testing.T) {
	t.Parallel()
	dir := requireStandardWebhooks(t)
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newWorld(t, e)
		rc := w.receiver(nil)
		ep, oldSecret := w.endpoint(rc.URL())
		w.start(w.dispatcher())

		w.testEvent(ep)
		r := rc.waitRequests(t, 1)[0]
		if ok, out := standardWebhooksVerify(t, dir, oldSecret, r, r.body); !ok {
			t.Fatalf("the library refuses a delivery: %s", out)
		}
		// The check can say no: a tampered body fails.
		tampered := bytes.Replace(r.body, []byte(ep.ID), []byte("wh_someoneelse"), 1)
		if ok, out := standardWebhooksVerify(t, dir, oldSecret, r, tampered); ok {
			t.Fatalf("the library accepts a tampered body: %s", out)
		}

		// During a rotation, the library verifies with either secret.
		newSecret, _, err := w.svc.RotateSecret(context.Background(), w.acct.ID, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		w.testEvent(ep)
		r = rc.waitRequests(t, 2)[1]
		for name, secret := range map[string]string{"old": oldSecret, "new": newSecret} {
			if ok, out := standardWebhooksVerify(t, dir, secret, r, r.body); !ok {
				t.Errorf("the library refuses the %s secret during the rotation: %s", name, out)
			}
		}
	})
}
