package e2e

import (
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/webhook"
)

// hookReceiver is a consumer's HTTPS endpoint on loopback: every request
// is checked as a Standard Webhooks library checks it, with the secret of
// the endpoint its path names, and kept. failFirst makes a path answer 500
// to its first requests.
type hookReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	// keys are the signing keys by path, set once the endpoint is made.
	keys      map[string][]byte
	failFirst map[string]int
	// delay holds each answer back, so that deliveries are in flight (and
	// more wait, claimed) when a test kills the node.
	delay time.Duration
	got   []hookRequest
}

type hookRequest struct {
	Path, ID, Type, Signature string
	Status                    int // what the receiver answered
	Verified                  bool
	Data                      map[string]any
	// Header and Body are the request as it came, for a verifier of
	// its own.
	Header http.Header
	Body   []byte
}

// startHookReceiver starts the receiver and makes the nodes started after
// it trust its certificate (SSL_CERT_FILE is how Go finds roots on Linux).
func startHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{keys: map[string][]byte{}, failFirst: map[string]int{}}
	h.srv = httptest.NewTLSServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	certFile := filepath.Join(t.TempDir(), "receiver.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.srv.Certificate().Raw})
	if err := os.WriteFile(certFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSL_CERT_FILE", certFile)
	return h
}

func (h *hookReceiver) url(path string) string { return h.srv.URL + path }

func (h *hookReceiver) setSecret(t *testing.T, path, secret string) {
	key, err := webhook.ParseSecret(secret)
	if err != nil {
		t.Fatalf("secret %q: %v", secret, err)
	}
	h.mu.Lock()
	h.keys[path] = key
	h.mu.Unlock()
}

func (h *hookReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	delay := h.delay
	h.mu.Unlock()
	time.Sleep(delay)
	h.mu.Lock()
	defer h.mu.Unlock()
	req := hookRequest{Path: r.URL.Path, ID: r.Header.Get("webhook-id"), Signature: r.Header.Get("webhook-signature"), Status: 200,
		Header: r.Header.Clone(), Body: body}
	key := h.keys[r.URL.Path]
	req.Verified = key != nil && webhook.Verify(key, req.ID, r.Header.Get("webhook-timestamp"), req.Signature, body, time.Now()) == nil
	var p struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	_ = json.Unmarshal(body, &p)
	req.Type, req.Data = p.Type, p.Data
	if h.failFirst[r.URL.Path] > 0 {
		h.failFirst[r.URL.Path]--
		req.Status = 500
	} else if !req.Verified {
		req.Status = 400
	}
	h.got = append(h.got, req)
	w.WriteHeader(req.Status)
}

// requests returns what path received so far.
func (h *hookReceiver) requests(path string) []hookRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []hookRequest
	for _, r := range h.got {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// waitFor polls until path has received a request cond accepts, and
// returns it.
func (h *hookReceiver) waitFor(t *testing.T, path string, within time.Duration, what string, cond func(hookRequest) bool) hookRequest {
	t.Helper()
	var found *hookRequest
	poll.Until(t, within, what, func() bool {
		for _, r := range h.requests(path) {
			if cond(r) {
				found = &r
				return true
			}
		}
		return false
	})
	return *found
}
