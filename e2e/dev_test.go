package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
)

// A newcomer runs `mailroom serve --dev`, pastes the printed curl line and
// it works; the next start prints the same key.
func TestDevQuickstart(t *testing.T) {
	work := t.TempDir()
	dataDir := filepath.Join(work, "mailroom-data")
	s := startServer(t, dataDir, "--dev")
	if s.devKey == "" {
		t.Fatalf("no key printed:\n%s", s.Stdout())
	}
	curlLine := ""
	for _, l := range strings.Split(s.Stdout(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "curl ") {
			curlLine = strings.TrimSpace(l)
		}
	}
	if curlLine == "" {
		t.Fatalf("no curl line printed:\n%s", s.Stdout())
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Log("curl is not installed: checking the printed key with Go's client instead")
	} else {
		out, err := exec.Command("sh", "-c", curlLine+" --silent --show-error --fail").CombinedOutput()
		if err != nil {
			t.Fatalf("the printed curl line failed: %v\n%s\n%s", err, curlLine, out)
		}
		var list struct {
			Data []map[string]any `json:"data"`
		}
		if err := json.Unmarshal(out, &list); err != nil || len(list.Data) != 1 {
			t.Fatalf("curl answered %s", out)
		}
	}

	r := s.client.Do(apitest.Request{Method: "GET", Path: "/v1/domains/mailroom.test", Key: s.devKey})
	if r.Status != 200 || r.Str("status") != "verified" {
		t.Fatalf("the sandbox domain: %d %s", r.Status, r.Body)
	}
	// Verify now (the dashboard's button) leaves the sandbox verified: it
	// has no public records to find.
	r = s.client.Do(apitest.Request{Method: "POST", Path: "/v1/domains/mailroom.test/verify", Key: s.devKey})
	if r.Status != 200 || r.Str("status") != "verified" {
		t.Fatalf("verifying the sandbox domain: %d %s", r.Status, r.Body)
	}

	// A first send from the sandbox domain is captured and logged delivered.
	r = s.client.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: s.devKey, Body: map[string]any{
		"from": "Shop <orders@mailroom.test>", "to": "ann@example.com", "subject": "Hello", "html": "<p>Hi</p>"}})
	if r.Status != 200 {
		t.Fatalf("send in --dev: %d %s", r.Status, r.Body)
	}
	id := r.Str("messageId")
	poll.Until(t, 20*time.Second, "the dev message captured", func() bool {
		return s.client.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: s.devKey}).Str("status") == "delivered"
	})
	if raw := s.client.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id + "/raw", Key: s.devKey}); !strings.HasPrefix(string(raw.Body), "DKIM-Signature:") {
		t.Fatalf("the captured message is not signed: %.80s", raw.Body)
	}

	// The operator's metrics show the request and the delivery.
	if m := s.metrics(t); !strings.Contains(m, `mailroom_delivery_attempts_total{outcome="delivered"} 1`) ||
		!strings.Contains(m, `mailroom_http_requests_total{method="POST",route="/v1/send",status="200"} 1`) {
		t.Fatalf("metrics lack the send or its delivery:\n%s", grepLines(m, "mailroom_"))
	}

	info, err := os.Stat(filepath.Join(dataDir, "dev-api-key"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("dev key file: %v, mode %v", err, info.Mode())
	}
	first := s.devKey
	if err := s.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: exit %v\n%s", err, s.Stderr())
	}
	again := startServer(t, dataDir, "--dev")
	if again.devKey != first {
		t.Fatalf("a restart printed another key: %s then %s", first, again.devKey)
	}
	if !strings.Contains(again.Stdout(), "Using a self-signed TLS certificate") {
		t.Fatalf("the certificate was not reused:\n%s", again.Stdout())
	}
}
