package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// tlsService is a service over TLS (HTTP/2 offered) whose certificate no
// system trusts, as serve --dev's: it answers a send and records the
// protocol each request came over. certFile holds its certificate in PEM.
func tlsService(t *testing.T) (srv *httptest.Server, certFile string, protos func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Proto)
		mu.Unlock()
		answer(200, queued)(w, r)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	certFile = filepath.Join(t.TempDir(), "cert.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(certFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return srv, certFile, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// WithCAFile trusts the service's self-signed certificate and keeps
// HTTP/2: the request comes over h2, as it would with the default
// transport against a public certificate.
func TestCAFileTrustsTheCertificateOverHTTP2(t *testing.T) {
	srv, certFile, protos := tlsService(t)

	// Without it, the certificate is not trusted, and that is not retried.
	if _, err := send(t, New(srv.URL, "k")); !isUnknownAuthority(err) || len(protos()) != 0 {
		t.Fatalf("without WithCAFile: %v after %d requests, want an unknown authority at once", err, len(protos()))
	}

	c := New(srv.URL, "k", WithCAFile(certFile))
	res, err := send(t, c)
	if err != nil || res.MessageID != "msg_01" {
		t.Fatalf("send: %+v %v", res, err)
	}
	if got := protos(); len(got) != 1 || got[0] != "HTTP/2.0" {
		t.Errorf("the request came over %v, want HTTP/2.0", got)
	}
	// The transport is DefaultTransport's settings with the roots: the
	// environment's proxy, HTTP/2 forced (a TLS configuration of its own
	// would turn it off), TLS 1.2 at least.
	tr, ok := c.hc.Transport.(*http.Transport)
	if !ok {
		t.Fatalf("transport %T", c.hc.Transport)
	}
	if tr.Proxy == nil || reflect.ValueOf(tr.Proxy).Pointer() != reflect.ValueOf(http.ProxyFromEnvironment).Pointer() {
		t.Error("the transport does not take the proxy from the environment")
	}
	if !tr.ForceAttemptHTTP2 || tr.TLSClientConfig.MinVersion != tls.VersionTLS12 || tr.TLSHandshakeTimeout == 0 || tr.MaxIdleConns == 0 {
		t.Errorf("the transport lost DefaultTransport's settings: ForceAttemptHTTP2 %v, MinVersion %#x, TLSHandshakeTimeout %v, MaxIdleConns %d",
			tr.ForceAttemptHTTP2, tr.TLSClientConfig.MinVersion, tr.TLSHandshakeTimeout, tr.MaxIdleConns)
	}
	if tr == http.DefaultTransport {
		t.Error("http.DefaultTransport itself was changed")
	}
}

// WithRootCAs takes a pool; with WithHTTPClient, in either order, the
// given client's transport is copied with the roots, HTTP/2 kept, and the
// given client and transport are left alone.
func TestRootCAsWithAnHTTPClient(t *testing.T) {
	srv, _, protos := tlsService(t)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())

	for _, order := range []string{"roots first", "client first"} {
		own := &http.Transport{MaxIdleConnsPerHost: 7}
		hc := &http.Client{Transport: own, Timeout: time.Minute}
		opts := []Option{WithRootCAs(roots), WithHTTPClient(hc)}
		if order == "client first" {
			opts = []Option{WithHTTPClient(hc), WithRootCAs(roots)}
		}
		before := len(protos())
		c := New(srv.URL, "k", opts...)
		if _, err := send(t, c); err != nil {
			t.Fatalf("%s: %v", order, err)
		}
		if got := protos()[before:]; len(got) != 1 || got[0] != "HTTP/2.0" {
			t.Errorf("%s: the request came over %v, want HTTP/2.0", order, got)
		}
		tr := c.hc.Transport.(*http.Transport)
		if tr == own || tr.MaxIdleConnsPerHost != 7 || c.hc.Timeout != time.Minute {
			t.Errorf("%s: the client's own settings were not kept on a copy", order)
		}
		// (net/http's Clone sets HTTP/2 up on the original, as its first
		// request would: its TLSClientConfig then offers h2, and no roots.)
		if (own.TLSClientConfig != nil && own.TLSClientConfig.RootCAs != nil) || hc.CheckRedirect != nil || hc.Transport != own {
			t.Errorf("%s: the caller's client or transport was changed", order)
		}
	}
}

// A CA option that cannot be applied fails every call, saying why, rather
// than calling with the system's CAs.
func TestCAOptionErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "key.txt")
	if err := os.WriteFile(notPEM, []byte("mailroom_key"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts []Option
		want string
	}{
		{"missing file", []Option{WithCAFile(filepath.Join(dir, "none.pem"))}, "none.pem"},
		{"not PEM", []Option{WithCAFile(notPEM)}, "holds no PEM certificate"},
		{"nil pool", []Option{WithRootCAs(nil)}, "the pool is nil"},
		{"foreign transport", []Option{WithHTTPClient(&http.Client{Transport: roundTripperFunc(nil)}), WithRootCAs(x509.NewCertPool())}, "not an *http.Transport"},
	} {
		c := New("https://127.0.0.1:1", "k", tc.opts...)
		if _, err := c.Health(context.Background()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func isUnknownAuthority(err error) bool {
	var uae x509.UnknownAuthorityError
	var cve *tls.CertificateVerificationError
	return errors.As(err, &uae) || errors.As(err, &cve)
}
