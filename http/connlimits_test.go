package http_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mailroom/mailroom/connlimit"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/tlscert"
)

// The idle-connection flood: the HTTPS server runs in a process of its own
// whose open-file limit is cappedServerFiles, as a server on a host with
// the common limit of 1,024 would; the test opens floodConns idle TCP
// connections to it from 127.0.0.1, more than that limit could hold, and
// then asks from 127.0.0.2.
const (
	cappedServerEnv   = "MAILROOM_TEST_CAPPED_HTTPS"
	cappedServerFiles = 1024
	floodConns        = 2000
	floodPerAddress   = 50
)

// Thousands of idle connections from one address leave the API answering
// another client, and each one past the address's cap is refused and
// counted. Without the cap the server holds every connection it can, runs
// out of file descriptors, and the other client's request waits in the
// accept queue behind the flood (the finding: legitimate requests timed
// out).
func TestIdleConnectionFloodLeavesOthersServed(t *testing.T) {
	if n, ok := connlimit.OpenFileLimit(); ok && n < floodConns+500 {
		t.Skipf("this process may open %d files; the flood needs %d", n, floodConns+500)
	}
	certDir := t.TempDir()
	cert, _, err := tlscert.SelfSigned(certDir, "localhost", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	api, metrics := startCappedServer(t, certDir)

	var flood []net.Conn
	t.Cleanup(func() {
		for _, c := range flood {
			_ = c.Close()
		}
	})
	flooder := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, Timeout: 5 * time.Second}
	for range floodConns {
		c, err := flooder.Dial("tcp", api)
		switch {
		case err == nil:
			flood = append(flood, c)
		case errors.Is(err, syscall.ECONNRESET):
			// Refused so fast that the dial saw it.
		default:
			t.Fatalf("flood connection %d: %v", len(flood), err)
		}
	}

	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	other := &http.Client{
		Transport: &http.Transport{
			DialContext:     (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext,
			TLSClientConfig: &tls.Config{RootCAs: pool},
		},
		// A deadline, not a speed target: the answer takes milliseconds,
		// and without the cap it never comes while the flood lasts.
		Timeout: 5 * time.Second,
	}
	defer other.CloseIdleConnections()
	res, err := other.Get("https://" + api + "/healthz")
	if err != nil {
		t.Fatalf("another client was not answered during the flood: %v", err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz from another client: %d", res.StatusCode)
	}

	want, got := floodConns-floodPerAddress, 0
	if !poll.Within(10*time.Second, func() bool {
		got = metricValue(t, metrics, `mailroom_http_connections_refused_total{reason="per_address"}`)
		return got == want
	}) {
		t.Fatalf("%d refusals counted, want %d", got, want)
	}
}

// startCappedServer starts TestCappedServerChild and returns its API's
// and its metrics' addresses.
func startCappedServer(t *testing.T, certDir string) (api, metrics string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCappedServerChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), cappedServerEnv+"="+certDir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close() // the child ends when its stdin does
		if err := cmd.Wait(); err != nil {
			t.Errorf("the server's process: %v\n%s", err, stderr.Bytes())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if _, err2 := fmt.Sscanf(line, "capped-server api=%s metrics=%s", &api, &metrics); err != nil || err2 != nil {
		t.Fatalf("the server's process said %q (%v, %v)\n%s", line, err, err2, stderr.Bytes())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return api, metrics
}

// TestCappedServerChild is TestIdleConnectionFloodLeavesOthersServed's
// server, in a process of its own so that running out of file descriptors
// is its alone; it does nothing in a normal test run. It serves the API
// (no storage: /healthz) on a listener capped as serve caps it, with
// floodPerAddress per address and the overall default, until its standard
// input ends.
func TestCappedServerChild(t *testing.T) {
	certDir := os.Getenv(cappedServerEnv)
	if certDir == "" {
		t.Skip("runs only as the server of TestIdleConnectionFloodLeavesOthersServed")
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	rl.Cur = min(rl.Max, cappedServerFiles)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	cert, _, err := tlscert.SelfSigned(certDir, "localhost", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	reg := prometheus.NewRegistry()
	api := &mhttp.Server{Log: quiet, Metrics: reg}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	capped := mhttp.LimitConnections(ln, mhttp.ConnLimits{PerAddress: floodPerAddress}, reg)
	srv := mhttp.NewHTTPServer("", api.Handler(), tlscert.ServerConfig(cert), quiet)
	go func() { _ = srv.ServeTLS(capped, "", "") }()
	defer srv.Close()
	mln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	msrv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = msrv.Serve(mln) }()
	defer msrv.Close()
	fmt.Printf("capped-server api=%s metrics=%s\n", ln.Addr(), mln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// metricValue reads one series from a Prometheus text endpoint; -1 when it
// is absent or the endpoint does not answer.
func metricValue(t *testing.T, addr, series string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatalf("%s: %q", series, m[1])
	}
	return int(v)
}
