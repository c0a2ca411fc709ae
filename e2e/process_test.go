package e2e

import (
	"bufio"
	"bytes"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
)

// server is a running `mailroom serve` process.
type server struct {
	t       *testing.T
	cmd     *exec.Cmd
	dataDir string
	base    string // https://127.0.0.1:port
	devKey  string
	client  *apitest.Client
	exited  chan error

	mu     sync.Mutex
	stdout bytes.Buffer
	stderr bytes.Buffer
}

var (
	servingLine = regexp.MustCompile(`Mailroom is serving (https://\S+)`)
	keyLine     = regexp.MustCompile(`^\s+(mailroom_[a-z0-9]{16}_[0-9A-Za-z]{43})\s*$`)
)

// startServer runs `mailroom serve` on a free loopback port with dataDir
// and the given flags, and waits until it answers.
func startServer(t *testing.T, dataDir string, flags ...string) *server {
	t.Helper()
	return startServerEnv(t, dataDir, nil, flags...)
}

// startServerEnv is startServer with env ("NAME=value") added to the
// process's environment.
func startServerEnv(t *testing.T, dataDir string, env []string, flags ...string) *server {
	t.Helper()
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--data-dir", dataDir}, flags...)
	s := &server{t: t, dataDir: dataDir, exited: make(chan error, 1)}
	s.cmd = exec.Command(bin, args...)
	if env != nil {
		s.cmd.Env = append(os.Environ(), env...)
	}
	s.cmd.Dir = filepath.Dir(dataDir)
	stdout, _ := s.cmd.StdoutPipe()
	s.cmd.Stderr = writerFunc(func(p []byte) { s.mu.Lock(); s.stderr.Write(p); s.mu.Unlock() })
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.stdout.WriteString(line + "\n")
			if m := keyLine.FindStringSubmatch(line); m != nil {
				s.devKey = m[1]
			}
			if m := servingLine.FindStringSubmatch(line); m != nil {
				s.base = m[1]
			}
			s.mu.Unlock()
		}
	}()
	go func() { s.exited <- s.cmd.Wait() }()
	t.Cleanup(func() { s.stop(syscall.SIGKILL) })

	if !poll.Within(60*time.Second, func() bool {
		select {
		case err := <-s.exited:
			t.Fatalf("mailroom serve exited early: %v\nstdout:\n%s\nstderr:\n%s", err, s.Stdout(), s.Stderr())
		default:
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.base != ""
	}) {
		t.Fatalf("mailroom serve did not start\nstdout:\n%s\nstderr:\n%s", s.Stdout(), s.Stderr())
	}
	s.client = apitest.New(t, s.base, s.roots())
	return s
}

// roots trusts the server's self-signed certificate, as curl --cacert does.
func (s *server) roots() *x509.CertPool {
	pem, err := os.ReadFile(filepath.Join(s.dataDir, "tls", "cert.pem"))
	if err != nil {
		return nil // an operator certificate: the caller sets its own roots
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return pool
}

// stop signals the process and waits for it to end; it returns the error of
// Wait (nil for exit status 0).
func (s *server) stop(sig syscall.Signal) error {
	if s.cmd.ProcessState != nil {
		return nil
	}
	_ = s.cmd.Process.Signal(sig)
	select {
	case err := <-s.exited:
		s.exited <- err
		return err
	case <-time.After(45 * time.Second):
		_ = s.cmd.Process.Kill()
		s.t.Errorf("mailroom serve ignored %v for 45 s", sig)
		return <-s.exited
	}
}

func (s *server) Stdout() string { s.mu.Lock(); defer s.mu.Unlock(); return s.stdout.String() }
func (s *server) Stderr() string { s.mu.Lock(); defer s.mu.Unlock(); return s.stderr.String() }

// cli runs a mailroom command and returns its stdout; it fails the test
// unless the command exits 0.
func cli(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	out, errOut, err := cliResult(dir, env, args...)
	if err != nil {
		t.Fatalf("mailroom %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func cliResult(dir string, env []string, args ...string) (string, string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }

var _ io.Writer = writerFunc(nil)

var metricsLine = regexp.MustCompile(`"metrics listening" addr=(\S+)|"msg":"metrics listening","addr":"([^"]+)"`)

// metrics fetches the node's Prometheus metrics from its loopback listener.
func (s *server) metrics(t *testing.T) string {
	t.Helper()
	// The log reaches s.Stderr through a pipe copied by another goroutine:
	// the banner on stdout may be read before the log line that came ahead
	// of it.
	var m []string
	if !poll.Within(10*time.Second, func() bool { m = metricsLine.FindStringSubmatch(s.Stderr()); return m != nil }) {
		t.Fatalf("no metrics address in the log:\n%s", s.Stderr())
	}
	addr := m[1] + m[2]
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// grepLines keeps the lines holding s.
func grepLines(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
