package tlscert_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/tlscert"
)

// handshakeResult is what each side of one TLS handshake saw.
type handshakeResult struct {
	client    tls.ConnectionState
	clientErr error
	serverErr error
}

// handshake runs one handshake between a tls.Listen listener on network
// address listenAddr serving serverConfig, and tls.Dial with clientConfig.
// The deadline only keeps a broken handshake from hanging the test; it is
// not a sleep.
func handshake(t *testing.T, listenAddr string, serverConfig, clientConfig *tls.Config) handshakeResult {
	t.Helper()
	ln, err := tls.Listen("tcp", listenAddr, serverConfig)
	if err != nil {
		t.Fatalf("listen on %s: %v", listenAddr, err)
	}
	defer ln.Close()

	serverDone := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			serverDone <- err
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		serverDone <- conn.(*tls.Conn).Handshake()
	}()

	var result handshakeResult
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	conn, err := tls.DialWithDialer(dialer, "tcp", ln.Addr().String(), clientConfig)
	if err == nil {
		result.client = conn.ConnectionState()
		conn.Close()
	}
	result.clientErr = err
	result.serverErr = <-serverDone
	return result
}

func TestHandshakeVerifiesAgainstCertFile(t *testing.T) {
	dataDir := t.TempDir()
	// Handshake tests make certificates for the real clock: the client
	// checks validity against time.Now.
	cert := mustSelfSigned(t, dataDir, "mail.example.com", time.Now(), true)
	roots := poolFromCertFile(t, dataDir)
	serverConfig := tlscert.ServerConfig(cert)

	for _, tc := range []struct {
		name       string
		serverName string // "" lets crypto/tls verify the dialled IP
	}{
		{"localhost", "localhost"},
		{"IP 127.0.0.1", ""},
		{"hostname", "mail.example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := handshake(t, "127.0.0.1:0", serverConfig, &tls.Config{
				RootCAs:    roots,
				ServerName: tc.serverName,
			})
			if r.clientErr != nil || r.serverErr != nil {
				t.Fatalf("handshake failed: client %v, server %v", r.clientErr, r.serverErr)
			}
			if len(r.client.VerifiedChains) == 0 {
				t.Fatal("client reports no verified chain")
			}
			if got := tlscert.Fingerprint(tls.Certificate{Certificate: [][]byte{r.client.PeerCertificates[0].Raw}}); got != tlscert.Fingerprint(cert) {
				t.Errorf("client saw certificate %s, want %s", got, tlscert.Fingerprint(cert))
			}
		})
	}
}

func TestHandshakeVerifiesIPv6Loopback(t *testing.T) {
	dataDir := t.TempDir()
	cert := mustSelfSigned(t, dataDir, "", time.Now(), true)
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	ln.Close()
	r := handshake(t, "[::1]:0", tlscert.ServerConfig(cert), &tls.Config{RootCAs: poolFromCertFile(t, dataDir)})
	if r.clientErr != nil || r.serverErr != nil {
		t.Fatalf("handshake failed: client %v, server %v", r.clientErr, r.serverErr)
	}
}

func TestHandshakeRejectsUncoveredName(t *testing.T) {
	dataDir := t.TempDir()
	cert := mustSelfSigned(t, dataDir, "", time.Now(), true)
	r := handshake(t, "127.0.0.1:0", tlscert.ServerConfig(cert), &tls.Config{
		RootCAs:    poolFromCertFile(t, dataDir),
		ServerName: "other.example.com",
	})
	var hostErr x509.HostnameError
	if !errors.As(r.clientErr, &hostErr) {
		t.Fatalf("client error %v, want x509.HostnameError", r.clientErr)
	}
}

func TestHandshakeRejectsOtherTrustAnchor(t *testing.T) {
	served := t.TempDir()
	cert := mustSelfSigned(t, served, "", time.Now(), true)
	trusted := t.TempDir()
	mustSelfSigned(t, trusted, "", time.Now(), true)
	r := handshake(t, "127.0.0.1:0", tlscert.ServerConfig(cert), &tls.Config{
		RootCAs:    poolFromCertFile(t, trusted),
		ServerName: "localhost",
	})
	var unknownAuthority x509.UnknownAuthorityError
	if !errors.As(r.clientErr, &unknownAuthority) {
		t.Fatalf("client error %v, want x509.UnknownAuthorityError", r.clientErr)
	}
}

func TestHandshakeRefusesTLS11(t *testing.T) {
	dataDir := t.TempDir()
	cert := mustSelfSigned(t, dataDir, "", time.Now(), true)
	serverConfig := tlscert.ServerConfig(cert)
	clientConfig := func(maxVersion uint16) *tls.Config {
		return &tls.Config{
			RootCAs:    poolFromCertFile(t, dataDir),
			ServerName: "localhost",
			MinVersion: tls.VersionTLS10,
			MaxVersion: maxVersion,
		}
	}

	r := handshake(t, "127.0.0.1:0", serverConfig, clientConfig(tls.VersionTLS11))
	if r.clientErr == nil {
		t.Fatalf("TLS 1.1 client connected with version %x", r.client.Version)
	}
	// Over TCP crypto/tls reports a received alert only through its text;
	// this is the protocol_version alert of RFC 8446 §6.2.
	if !strings.Contains(r.clientErr.Error(), "protocol version not supported") {
		t.Errorf("client error %v, want a protocol_version alert", r.clientErr)
	}
	if r.serverErr == nil {
		t.Error("server accepted a TLS 1.1 handshake")
	}

	// The same client allowed TLS 1.2 gets in, so the refusal above is the
	// version and nothing else.
	r = handshake(t, "127.0.0.1:0", serverConfig, clientConfig(tls.VersionTLS12))
	if r.clientErr != nil || r.serverErr != nil {
		t.Fatalf("TLS 1.2 handshake failed: client %v, server %v", r.clientErr, r.serverErr)
	}
	if r.client.Version != tls.VersionTLS12 {
		t.Errorf("negotiated version %x, want TLS 1.2", r.client.Version)
	}
}

func TestHandshakeNegotiatesALPN(t *testing.T) {
	dataDir := t.TempDir()
	cert := mustSelfSigned(t, dataDir, "", time.Now(), true)
	for _, offered := range [][]string{{"h2", "http/1.1"}, {"http/1.1"}} {
		r := handshake(t, "127.0.0.1:0", tlscert.ServerConfig(cert), &tls.Config{
			RootCAs:    poolFromCertFile(t, dataDir),
			ServerName: "localhost",
			NextProtos: offered,
		})
		if r.clientErr != nil || r.serverErr != nil {
			t.Fatalf("handshake failed: client %v, server %v", r.clientErr, r.serverErr)
		}
		if r.client.NegotiatedProtocol != offered[0] {
			t.Errorf("client offering %v got %q, want %q", offered, r.client.NegotiatedProtocol, offered[0])
		}
	}
}

func TestServerConfig(t *testing.T) {
	cert := mustSelfSigned(t, t.TempDir(), "", testNow, true)
	cfg := tlscert.ServerConfig(cert)
	if cfg.MinVersion != tls.VersionTLS12 {
		t.Errorf("MinVersion %x, want TLS 1.2", cfg.MinVersion)
	}
	if !slices.Equal(cfg.NextProtos, []string{"h2", "http/1.1"}) {
		t.Errorf("NextProtos %v, want [h2 http/1.1]", cfg.NextProtos)
	}
	if len(cfg.Certificates) != 1 || tlscert.Fingerprint(cfg.Certificates[0]) != tlscert.Fingerprint(cert) {
		t.Errorf("Certificates do not hold exactly the given certificate")
	}
}
