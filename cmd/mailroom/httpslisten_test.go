package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom/poll"
)

// serve --dev on an address other machines can reach is refused at once,
// before any key is made or printed: the key has every scope, and --dev's
// webhooks reach private addresses.
func TestDevRefusesANetworkListen(t *testing.T) {
	for _, listen := range []string{":0", "0.0.0.0:0", "[::]:0", "192.0.2.10:0", "[2001:db8::1]:0"} {
		dir := t.TempDir()
		// A deadline, so that serve started by mistake fails the test
		// rather than run on.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var stdout, stderr bytes.Buffer
		code := run(ctx, []string{"serve", "--dev", "--listen", listen, "--data-dir", dir}, &stdout, &stderr)
		cancel()
		if code != 2 || !strings.Contains(stderr.String(), "--dev listens on loopback only") ||
			!strings.Contains(stderr.String(), "--dev-listen-anywhere") {
			t.Errorf("--listen %s: exit %d, stderr %q", listen, code, stderr.String())
		}
		if stdout.Len() != 0 {
			t.Errorf("--listen %s: printed %q", listen, stdout.String())
		}
		if _, err := os.Stat(filepath.Join(dir, devKeyFile)); err == nil {
			t.Errorf("--listen %s: a dev key was made", listen)
		}
	}
}

// What --dev accepts, and the flags' own mistakes.
func TestHTTPSFlagsCheck(t *testing.T) {
	ctx := context.Background()
	for _, listen := range []string{"127.0.0.1:8443", "127.0.0.2:0", "[::1]:8443", "[::ffff:127.0.0.1]:0", "localhost:8443"} {
		if p := devListenProblem(ctx, listen); p != "" {
			t.Errorf("--listen %s: %s", listen, p)
		}
	}
	ok := httpsFlags{maxConns: 10, maxConnsPerAddress: 2}
	if err := ok.check(ctx, true, defaultDevListen); err != nil {
		t.Errorf("--dev on its default address: %v", err)
	}
	anywhere := ok
	anywhere.devListenAnywhere = true
	if err := anywhere.check(ctx, true, ":8443"); err != nil {
		t.Errorf("--dev --dev-listen-anywhere --listen :8443: %v", err)
	}
	if err := ok.check(ctx, false, ":8443"); err != nil {
		t.Errorf("--listen :8443 without --dev: %v", err)
	}
	for name, f := range map[string]httpsFlags{
		"--dev-listen-anywhere without --dev": anywhere,
		"--max-connections 0":                 {maxConns: 0, maxConnsPerAddress: 2},
		"--max-connections-per-address -1":    {maxConns: 10, maxConnsPerAddress: -1},
	} {
		if err := f.check(ctx, false, ":8443"); err == nil {
			t.Errorf("%s: accepted", name)
		} else if _, usage := err.(usageError); !usage {
			t.Errorf("%s: %v is not a usage error", name, err)
		}
	}
}

// The listener serve opens holds --max-connections-per-address per client
// and resets the next one as it is accepted, counting it.
func TestHTTPSListenerIsCapped(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := httpsFlags{maxConns: 10, maxConnsPerAddress: 1}
	ln, err := f.listen("127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	held, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	c := <-accepted
	defer c.Close()

	if over, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		_ = over.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = over.Read(make([]byte, 1))
		_ = over.Close()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("the connection past --max-connections-per-address was held")
		}
	}
	if !poll.Within(5*time.Second, func() bool { return refusedPerAddress(t, reg) == 1 }) {
		t.Fatalf("%v refusals counted, want 1", refusedPerAddress(t, reg))
	}
}

// refusedPerAddress reads mailroom_http_connections_refused_total{reason="per_address"}.
func refusedPerAddress(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "mailroom_http_connections_refused_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == "per_address" {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return -1
}
