package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// serveProcess is a `mailroom serve` this command started (-internet): the
// real binary, as an operator runs it, its output kept in files beside its
// data directory.
type serveProcess struct {
	cmd     *exec.Cmd
	dataDir string
	exited  chan error

	mu      sync.Mutex
	base    string // https://127.0.0.1:port
	metrics string // host:port of the metrics listener
}

var (
	servingLine = regexp.MustCompile(`Mailroom is serving (https://\S+)`)
	metricsLine = regexp.MustCompile(`"metrics listening" addr=(\S+)|"msg":"metrics listening","addr":"([^"]+)"`)
	printedKey  = regexp.MustCompile(`mailroom_[a-z0-9]{16}_[0-9A-Za-z]{43}`)
)

// startServe runs bin serve on free loopback ports with dataDir and flags,
// writing its stdout and stderr to serve-out.txt and serve-err.txt beside
// dataDir, and waits until it answers.
func startServe(bin, dataDir string, flags []string) (*serveProcess, error) {
	dir := filepath.Dir(dataDir)
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--data-dir", dataDir}, flags...)
	p := &serveProcess{dataDir: dataDir, exited: make(chan error, 1)}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = dir
	out, err := os.Create(filepath.Join(dir, "serve-out.txt"))
	if err != nil {
		return nil, err
	}
	errFile, err := os.Create(filepath.Join(dir, "serve-err.txt"))
	if err != nil {
		return nil, err
	}
	stdout, _ := p.cmd.StdoutPipe()
	stderr, _ := p.cmd.StderrPipe()
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	scan := func(r io.Reader, w io.Writer, re *regexp.Regexp, into *string) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(w, line)
			if m := re.FindStringSubmatch(line); m != nil {
				p.mu.Lock()
				if *into == "" {
					for _, g := range m[1:] {
						*into += g
					}
				}
				p.mu.Unlock()
			}
		}
	}
	go scan(stdout, out, servingLine, &p.base)
	go scan(stderr, errFile, metricsLine, &p.metrics)
	go func() { p.exited <- p.cmd.Wait(); out.Close(); errFile.Close() }()

	deadline := time.Now().Add(60 * time.Second)
	for {
		p.mu.Lock()
		ready := p.base != "" && p.metrics != ""
		p.mu.Unlock()
		if ready {
			return p, nil
		}
		select {
		case err := <-p.exited:
			p.exited <- err
			return nil, fmt.Errorf("mailroom serve exited: %v (see %s)", err, errFile.Name())
		case <-time.After(50 * time.Millisecond): // polling with a deadline
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("mailroom serve did not start within a minute (see %s)", errFile.Name())
		}
	}
}

// Base is the server's HTTPS address, and Metrics its metrics listener's.
func (p *serveProcess) Base() string    { p.mu.Lock(); defer p.mu.Unlock(); return p.base }
func (p *serveProcess) Metrics() string { p.mu.Lock(); defer p.mu.Unlock(); return p.metrics }

// client trusts the server's self-signed certificate.
func (p *serveProcess) client() (*http.Client, error) {
	pem, err := os.ReadFile(filepath.Join(p.dataDir, "tls", "cert.pem"))
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots}, MaxIdleConnsPerHost: 64,
	}}, nil
}

// stop ends the server with SIGTERM (it drains), then SIGKILL after 45 s.
func (p *serveProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		p.exited <- err
	case <-time.After(45 * time.Second):
		_ = p.cmd.Process.Kill()
	}
}

// runCLI runs a mailroom command and returns its stdout.
func runCLI(bin, dir string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("mailroom %v: %v: %s", args, err, bytes.TrimSpace(errOut.Bytes()))
	}
	return out.String(), nil
}

// call sends one API request with a JSON body (none when nil) and decodes
// a JSON answer into out (when not nil).
func call(c *http.Client, method, url, key string, body, out any) (int, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil && len(answer) > 0 {
		if err := json.Unmarshal(answer, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, snippet(answer))
		}
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, snippet(answer))
	}
	return resp.StatusCode, nil
}
