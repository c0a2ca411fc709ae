package e2e

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resend/resend-go/v3"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/tlscert/tlstest"
)

// The tests of the Resend-compatible routes (issue 30, docs/api.md "Moving
// from Resend") drive Resend's own SDKs, unmodified, against the binary:
// the Go SDK (github.com/resend/resend-go/v3) from these tests, the Node
// SDK (npm "resend") from a script node runs. What they may rely on is what
// the SDKs' types promise and what arrives at the receiving MX.

// resendEnv is a node as a Resend user meets it: an account whose key is
// the "Resend key", shop.example verified, the world's MX receiving the
// mail, and an HTTPS server outside (cdn.shop.example) that serves the
// files attachments name by path and receives webhooks.
type resendEnv struct {
	*world
	node    *server
	key     string
	work    string
	storage []string
	outside *outsideServer
}

// startResendEnv starts a node on eng with webhooks and attachment paths
// allowed to reach loopback (--webhooks-allow-private: the outside server
// is on 127.0.0.1), trusting the outside server's authority.
func startResendEnv(t *testing.T, eng storetest.Engine) *resendEnv {
	t.Helper()
	w := newWorld(t)
	o := startOutsideServer(t)
	w.dns.SetA(outsideHost, "127.0.0.1")
	work := t.TempDir()
	dataDir := filepath.Join(work, "data")
	storage := append([]string{"--data-dir", dataDir}, eng.Storage(t)...)
	args := append(append(w.flags(), storage...), "--webhooks-allow-private")
	node := startServerEnv(t, dataDir, []string{"SSL_CERT_FILE=" + o.caFile, "SSL_CERT_DIR=" + t.TempDir()}, args...)
	key := printedKey.FindString(cli(t, work, nil, append([]string{"accounts", "create", "acme"}, storage...)...))
	cli(t, work, nil, append([]string{"accounts", "update", "acme", "--rate", "100000", "--burst", "100000"}, storage...)...)
	w.verifyDomain(t, node.client, key, "shop.example")
	return &resendEnv{world: w, node: node, key: key, work: work, storage: storage, outside: o}
}

// goSDK is Resend's Go client for key, pointed at the node as a user
// points it: RESEND_BASE_URL in the environment (read once, when the SDK's
// package is initialised: TestResendGoSDKReadsRESEND_BASE_URL proves that
// path in a process of its own), here the exported BaseURL it sets; and
// an *http.Client that trusts the node's certificate (NewCustomClient).
// The wire log records every answer, so that a test can see the error
// name the SDK does not show.
func (e *resendEnv) goSDK(t *testing.T, key string) (*resend.Client, *wireLog) {
	t.Helper()
	log := &wireLog{next: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: e.node.roots()}, ForceAttemptHTTP2: true}}
	c := resend.NewCustomClient(&http.Client{Transport: log, Timeout: 30 * time.Second}, key)
	base, err := url.Parse(e.node.base + "/")
	if err != nil {
		t.Fatal(err)
	}
	c.BaseURL = base
	return c, log
}

// v1Message is the native log's view of a message (GET /v1/messages/{id}).
func (e *resendEnv) v1Message(t *testing.T, id string) map[string]any {
	t.Helper()
	r := e.node.client.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: e.key})
	if r.Status != 200 {
		t.Fatalf("GET /v1/messages/%s: %d %s", id, r.Status, r.Body)
	}
	return r.Map()
}

// waitV1Status polls the native log until message id's status is want.
func (e *resendEnv) waitV1Status(t *testing.T, id, want string) map[string]any {
	t.Helper()
	var m map[string]any
	if !poll.Within(30*time.Second, func() bool { m = e.v1Message(t, id); return m["status"] == want }) {
		t.Fatalf("message %s: status %v, want %s: %v", id, m["status"], want, m)
	}
	return m
}

// receivedWithSubject are the messages the MX got whose Subject is
// subject (each test sends under subjects of its own).
func (e *resendEnv) receivedWithSubject(subject string) []receivedMail {
	var out []receivedMail
	for _, m := range e.mx.Messages() {
		if rm := parseReceived(m.Data, m.Rcpts); rm.Header.Get("Subject") == subject {
			out = append(out, rm)
		}
	}
	return out
}

// waitReceived polls until the MX got n messages under subject.
func (e *resendEnv) waitReceived(t *testing.T, subject string, n int) []receivedMail {
	t.Helper()
	var got []receivedMail
	if !poll.Within(30*time.Second, func() bool { got = e.receivedWithSubject(subject); return len(got) >= n }) {
		t.Fatalf("the MX got %d messages with subject %q, want %d", len(got), subject, n)
	}
	return got
}

// wireLog is the SDK's transport, recording each answer's status and body.
type wireLog struct {
	next http.RoundTripper
	mu   sync.Mutex
	got  []wireAnswer
}

type wireAnswer struct {
	Method, URL string
	Status      int
	Header      http.Header
	Body        []byte
}

func (l *wireLog) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	l.mu.Lock()
	l.got = append(l.got, wireAnswer{Method: req.Method, URL: req.URL.String(), Status: resp.StatusCode, Header: resp.Header.Clone(), Body: body})
	l.mu.Unlock()
	return resp, nil
}

// last is the latest answer.
func (l *wireLog) last(t *testing.T) wireAnswer {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.got) == 0 {
		t.Fatal("the SDK made no request")
	}
	return l.got[len(l.got)-1]
}

// wantResendError checks that the SDK's call failed with Resend's error
// status and name, and that what the Go SDK shows (the message alone)
// says something.
func wantResendError(t *testing.T, what string, err error, log *wireLog, status int, name string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %d %s", what, status, name)
		return
	}
	a := log.last(t)
	var body struct {
		StatusCode int    `json:"statusCode"`
		Name       string `json:"name"`
		Message    string `json:"message"`
	}
	if jerr := json.Unmarshal(a.Body, &body); jerr != nil {
		t.Errorf("%s: %s %s answered %d %q, not Resend's error body: %v", what, a.Method, a.URL, a.Status, a.Body, jerr)
		return
	}
	if a.Status != status || body.StatusCode != status || body.Name != name || body.Message == "" {
		t.Errorf("%s: %s %s answered %d %s, want %d with name %s", what, a.Method, a.URL, a.Status, a.Body, status, name)
	}
	if !strings.Contains(err.Error(), body.Message) {
		t.Errorf("%s: the SDK said %q, not the message %q", what, err, body.Message)
	}
}

// outsideHost is the outside server's name in the world's DNS.
const outsideHost = "cdn.shop.example"

// outsideServer is an HTTPS server on loopback, with a certificate from an
// authority of its own: it serves files under /files/ (attachments by
// path) and records what is posted under /hooks/ (webhooks).
type outsideServer struct {
	srv    *http.Server
	port   int
	caFile string // the authority, for SSL_CERT_FILE and NODE_EXTRA_CA_CERTS

	mu    sync.Mutex
	files map[string][]byte
	gets  map[string]int
	hooks []hookPost
}

// hookPost is one webhook request as it came.
type hookPost struct {
	Path   string
	Header http.Header
	Body   []byte
}

func startOutsideServer(t *testing.T) *outsideServer {
	t.Helper()
	ca := tlstest.NewCA(t)
	o := &outsideServer{caFile: ca.WriteFile(t), files: map[string][]byte{}, gets: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.port = ln.Addr().(*net.TCPAddr).Port
	o.srv = &http.Server{Handler: http.HandlerFunc(o.serve), TLSConfig: tlstest.ServerConfig(ca.Issue(t, outsideHost, "127.0.0.1"))}
	go func() { _ = o.srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = o.srv.Close() })
	return o
}

func (o *outsideServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case strings.HasPrefix(r.URL.Path, "/files/") && r.Method == "GET":
		data, ok := o.files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		o.gets[r.URL.Path]++
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		_, _ = w.Write(data)
	case strings.HasPrefix(r.URL.Path, "/hooks/") && r.Method == "POST":
		o.hooks = append(o.hooks, hookPost{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

// file serves data at path and returns its URL.
func (o *outsideServer) file(path string, data []byte) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.files[path] = data
	return "https://" + outsideHost + ":" + strconv.Itoa(o.port) + path
}

// fetched counts the GETs of path.
func (o *outsideServer) fetched(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.gets[path]
}

// hookURL is the URL of a webhook endpoint at path.
func (o *outsideServer) hookURL(path string) string {
	return "https://" + outsideHost + ":" + strconv.Itoa(o.port) + path
}

// waitHook polls until a webhook request to path satisfies cond.
func (o *outsideServer) waitHook(t *testing.T, path, what string, cond func(hookPost) bool) hookPost {
	t.Helper()
	var found hookPost
	poll.Until(t, 30*time.Second, what, func() bool {
		o.mu.Lock()
		defer o.mu.Unlock()
		for _, h := range o.hooks {
			if h.Path == path && cond(h) {
				found = h
				return true
			}
		}
		return false
	})
	return found
}
