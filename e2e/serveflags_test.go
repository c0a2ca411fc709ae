package e2e

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mailroom/mailroom/poll"
)

// `serve --dev` without --listen listens on 127.0.0.1:8443 only: its
// printed key opens every scope, and a developer's machine is often on a
// shared network. The test cannot choose the port, so if another process
// holds 8443 it checks the address serve failed to bind instead.
func TestDevListensOnLoopbackOnly(t *testing.T) {
	work := t.TempDir()
	cmd := exec.Command(bin, "serve", "--dev", "--metrics-listen", "127.0.0.1:0", "--data-dir", filepath.Join(work, "data"))
	cmd.Dir = work
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MAILROOM_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var mu sync.Mutex
	var stderr bytes.Buffer
	cmd.Stderr = writerFunc(func(p []byte) { mu.Lock(); stderr.Write(p); mu.Unlock() })
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	served := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				served <- m[1]
			}
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(45 * time.Second):
				_ = cmd.Process.Kill()
				t.Error("serve --dev ignored SIGTERM")
			}
		}
	})

	select {
	case url := <-served:
		if url != "https://127.0.0.1:8443" {
			t.Fatalf("serve --dev is serving %s, want https://127.0.0.1:8443", url)
		}
		conn, err := net.DialTimeout("tcp", "127.0.0.1:8443", 5*time.Second)
		if err != nil {
			t.Fatalf("serve --dev said it serves 127.0.0.1:8443: %v", err)
		}
		conn.Close()
		// Nothing else holds 8443 (serve could bind it), so an answer on
		// another address of this machine would be serve's.
		others := 0
		addrs, _ := net.InterfaceAddrs()
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok || ipn.IP.IsLoopback() || ipn.IP.IsLinkLocalUnicast() {
				continue
			}
			others++
			addr := net.JoinHostPort(ipn.IP.String(), "8443")
			if conn, err := net.DialTimeout("tcp", addr, 2*time.Second); err == nil {
				conn.Close()
				t.Errorf("serve --dev answers on %s, not only on loopback", addr)
			}
		}
		t.Logf("checked %d non-loopback addresses", others)
	case err := <-exited:
		mu.Lock()
		defer mu.Unlock()
		if !strings.Contains(stderr.String(), "listen on 127.0.0.1:8443:") {
			t.Fatalf("serve --dev exited (%v) without trying 127.0.0.1:8443:\n%s", err, stderr.String())
		}
		t.Logf("port 8443 is taken by another process; serve --dev tried 127.0.0.1:8443 as it should")
	case <-time.After(60 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("serve --dev did not start:\n%s", stderr.String())
	}
}

// serve warns at start when --hostname is not a fully qualified name, as
// records like "v=spf1 a:vm -all" are useless, and says what to pass.
func TestHostnameWarning(t *testing.T) {
	const warning = "is not a fully qualified domain name"
	for _, tc := range []struct {
		hostname string
		warns    bool
	}{{"vm", true}, {"mail.example.net", false}} {
		work := t.TempDir()
		s := startServer(t, filepath.Join(work, "data"), "--hostname", tc.hostname)
		// The warning comes before the "listening" line, on the same log.
		if !poll.Within(20*time.Second, func() bool { return strings.Contains(s.Stderr(), `"msg":"listening"`) }) {
			t.Fatalf("no listening line in the log:\n%s", s.Stderr())
		}
		log := s.Stderr()
		if got := strings.Contains(log, warning); got != tc.warns {
			t.Errorf("--hostname %s: warned %v, want %v:\n%s", tc.hostname, got, tc.warns, log)
		}
		if tc.warns && (!strings.Contains(log, `"level":"WARN"`) || !strings.Contains(log, "--hostname mail.example.net")) {
			t.Errorf("the warning does not say what to pass:\n%s", log)
		}
		if err := s.stop(syscall.SIGTERM); err != nil {
			t.Fatalf("a warning must not stop serve: exit %v\n%s", err, s.Stderr())
		}
	}
}
