package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/storetest"
)

// Resend's Go SDK, unmodified, against the binary on each engine: every
// call of Resend's getting-started guides, and what the SDK's types
// promise. One node per engine; each concern is a subtest of its own
// (resend_go_*_test.go), under subjects and names of its own.
func TestResendGoSDK(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := startResendEnv(t, eng)
		t.Run("send", func(t *testing.T) { resendGoSend(t, e) })
		t.Run("attachments", func(t *testing.T) { resendGoAttachments(t, e) })
		t.Run("template", func(t *testing.T) { resendGoTemplate(t, e) })
		t.Run("idempotency", func(t *testing.T) { resendGoIdempotency(t, e) })
		t.Run("batch", func(t *testing.T) { resendGoBatch(t, e) })
		t.Run("list", func(t *testing.T) { resendGoList(t, e) })
		t.Run("reschedule and cancel", func(t *testing.T) { resendGoSchedule(t, e) })
		t.Run("domains", func(t *testing.T) { resendGoDomains(t, e) })
		t.Run("api keys", func(t *testing.T) { resendGoAPIKeys(t, e) })
		t.Run("errors", func(t *testing.T) { resendGoErrors(t, e) })
		t.Run("webhooks", func(t *testing.T) { resendGoWebhooks(t, e) })
	})
}

// The Go SDK finds Mailroom as a user's application would: RESEND_BASE_URL
// in the environment (which the SDK reads when its package is initialised,
// before any test runs, so the other tests set the client's BaseURL
// instead), and the SDK's own NewClient with its default *http.Client,
// trusting the node's certificate through SSL_CERT_FILE as Go does on
// Linux. The application is testdata/resendenv, a program of its own.
func TestResendGoSDKReadsRESEND_BASE_URL(t *testing.T) {
	e := startResendEnv(t, storetest.SQLite)
	cmd := exec.Command("go", "run", "./testdata/resendenv")
	cmd.Env = append(os.Environ(), "RESEND_BASE_URL="+e.node.base, "RESEND_API_KEY="+e.key,
		"SSL_CERT_FILE="+filepath.Join(e.node.dataDir, "tls", "cert.pem"), "SSL_CERT_DIR="+t.TempDir())
	out, err := cmd.Output()
	id := strings.TrimSpace(string(out))
	if err != nil || id == "" {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("the application with RESEND_BASE_URL=%s: %v\n%s%s", e.node.base, err, out, stderr)
	}
	got := e.waitReceived(t, "Set by RESEND_BASE_URL", 1)
	if len(got) != 1 || e.v1Message(t, id)["subject"] != "Set by RESEND_BASE_URL" {
		t.Errorf("the application's email %s: %d received, log %v", id, len(got), e.v1Message(t, id))
	}
}
