package e2e

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/tlscert"
)

// A plain-HTTP request to the HTTPS port gets no API answer.
func TestPlainHTTPGetsNoAPIAnswer(t *testing.T) {
	s := startServer(t, filepath.Join(t.TempDir(), "data"), "--dev")
	u, _ := url.Parse(s.base)
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "GET /v1/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", s.devKey)
	line, _ := bufio.NewReader(conn).ReadString('\n')
	if strings.Contains(line, "200") {
		t.Fatalf("plain HTTP was answered: %q", line)
	}
}

// Only TLS 1.2 and newer are spoken.
func TestOldTLSRefused(t *testing.T) {
	s := startServer(t, filepath.Join(t.TempDir(), "data"), "--dev")
	u, _ := url.Parse(s.base)
	_, err := tls.Dial("tcp", u.Host, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS11, MinVersion: tls.VersionTLS10})
	if err == nil {
		t.Fatal("a TLS 1.1 handshake succeeded")
	}
}

// An operator's own certificate is served instead of the self-signed one.
func TestOperatorCertificate(t *testing.T) {
	certDir := t.TempDir()
	if _, _, err := tlscert.SelfSigned(certDir, "api.example.test", time.Now()); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(t.TempDir(), "data")
	s := startServer(t, dataDir, "--dev",
		"--tls-cert", filepath.Join(certDir, "tls", "cert.pem"), "--tls-key", filepath.Join(certDir, "tls", "key.pem"))
	if _, err := os.Stat(filepath.Join(dataDir, "tls")); err == nil {
		t.Fatal("a self-signed certificate was made although one was given")
	}
	pem, _ := os.ReadFile(filepath.Join(certDir, "tls", "cert.pem"))
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	c := apitest.New(t, s.base, pool)
	if r := c.Do(apitest.Request{Method: "GET", Path: "/healthz"}); r.Status != 200 {
		t.Fatalf("healthz: %d", r.Status)
	}
}

// SIGTERM stops accepting, finishes the requests in flight, and exits 0.
// The requests are truly in flight when the signal arrives: their bodies are
// half sent, the server counts them in mailroom_http_requests_in_flight,
// and they are finished only after the signal.
func TestGracefulShutdown(t *testing.T) {
	s := startServer(t, filepath.Join(t.TempDir(), "data"), "--dev")
	for range 20 {
		if r := s.client.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: s.devKey}); r.Status != 200 {
			t.Fatalf("list keys: %d", r.Status)
		}
	}
	const inFlight = 5
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.roots()}}}
	bodies := make([]*io.PipeWriter, inFlight)
	results := make(chan string, inFlight)
	for i := range inFlight {
		body := fmt.Sprintf(`{"from": "orders@mailroom.test", "to": "r%d@example.com", "subject": "In flight", "text": "Hello"}`, i)
		pr, pw := io.Pipe()
		bodies[i] = pw
		req, _ := http.NewRequest("POST", s.base+"/v1/send", pr)
		req.ContentLength = int64(len(body))
		req.Header.Set("Authorization", "Bearer "+s.devKey)
		req.Header.Set("Content-Type", "application/json")
		go func() {
			resp, err := client.Do(req)
			if err != nil {
				results <- err.Error()
				return
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			results <- fmt.Sprintf("%d %s", resp.StatusCode, got)
		}()
		go func() { _, _ = pw.Write([]byte(body[:len(body)/2])) }()
		t.Cleanup(func() { pw.CloseWithError(io.ErrUnexpectedEOF) }) // frees the client if the test fails first
	}
	poll.Until(t, 30*time.Second, "the half-sent requests in flight", func() bool {
		return strings.Contains(s.metrics(t), fmt.Sprintf("mailroom_http_requests_in_flight %d", inFlight))
	})
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 30*time.Second, "the node to begin its drain", func() bool {
		return strings.Contains(s.Stderr(), "shutting down")
	})
	// A new connection is refused while the drain goes on.
	if _, err := tls.Dial("tcp", strings.TrimPrefix(s.base, "https://"), &tls.Config{RootCAs: s.roots()}); err == nil {
		t.Error("a new connection was accepted after SIGTERM")
	}
	for i, pw := range bodies {
		body := fmt.Sprintf(`{"from": "orders@mailroom.test", "to": "r%d@example.com", "subject": "In flight", "text": "Hello"}`, i)
		_, _ = pw.Write([]byte(body[len(body)/2:]))
		pw.Close()
	}
	for range inFlight {
		if got := <-results; !strings.HasPrefix(got, "200 ") {
			t.Errorf("a request in flight at SIGTERM got %s", got)
		}
	}
	if err := s.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, s.Stderr())
	}
	if !strings.Contains(s.Stderr(), "stopped") {
		t.Fatalf("no orderly stop in the log:\n%s", s.Stderr())
	}
	// One log line per request, with the key id and never the key.
	if strings.Count(s.Stderr(), "route=/v1/api-keys") < 20 {
		t.Fatalf("request lines missing:\n%s", s.Stderr())
	}
	_, secret, _ := mailroom.ParseAPIKey(s.devKey)
	if strings.Contains(s.Stderr(), secret) || strings.Contains(s.Stdout()+s.Stderr(), "secret_digest") {
		t.Fatal("the log holds a key secret")
	}
}

// Nodes sharing PostgreSQL (with the one secret key a store has): both start
// at once on an empty database (the migrations run once, one verifier of the
// key is written), and a key revoked through one fails on the other.
func TestTwoNodesSharePostgres(t *testing.T) {
	dbURL := postgresOrSkip(t)
	work := t.TempDir()
	var a, b *server
	var wg sync.WaitGroup
	shared := []string{"--database-url", dbURL, "--secret-key", secretKeyOf(1)}
	wg.Go(func() { a = startServer(t, filepath.Join(work, "a"), shared...) })
	wg.Go(func() { b = startServer(t, filepath.Join(work, "b"), shared...) })
	wg.Wait()
	if t.Failed() {
		return
	}
	admin := printedKey.FindString(cli(t, work, nil, "accounts", "create", "acme", "--database-url", dbURL))
	r := a.client.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Key: admin, Body: map[string]any{"name": "x", "scopes": []string{"keys"}}})
	k := r.Str("key")
	if r := b.client.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: k}); r.Status != 200 {
		t.Fatalf("node b does not know the key node a made: %d %s", r.Status, r.Body)
	}
	a.client.Do(apitest.Request{Method: "DELETE", Path: "/v1/api-keys/" + r.Str("keyId"), Key: admin})
	if r := b.client.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: k}); r.Code() != mailroom.ECodeAPIKeyRevoked {
		t.Fatalf("node b still accepts a key node a revoked: %d %s", r.Status, r.Body)
	}
}

// postgresOrSkip returns a fresh database; without PostgreSQL the test
// skips saying why, or fails under MAILROOM_REQUIRE=postgres.
func postgresOrSkip(t *testing.T) string {
	return storetest.NewPostgresDatabase(t)
}
