package receiving

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/mailroom/mailroom/require"
)

// systemPython is Debian's interpreter, which sees python3-dkim.
const systemPython = "/usr/bin/python3"

// dkimpySign signs stdin with the PEM key in argv[1] for the domain and
// selector in argv[2] and argv[3], and prints the signed message: an
// independent signer, so that the verifier is not checked against itself.
const dkimpySign = `
import sys, dkim
key, domain, selector = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3].encode()
msg = sys.stdin.buffer.read()
sig = dkim.sign(msg, selector, domain, key, include_headers=[b"from", b"to", b"subject", b"date", b"message-id"])
sys.stdout.buffer.write(sig + msg)
`

var (
	keyOnce sync.Once
	keyPEM  string
	keyTXT  string
	keyErr  error
)

// testKey is an RSA key for the tests' signers, as dkimpy reads it, and its
// DKIM key record (RFC 6376 §3.6.1).
func testKey(t *testing.T) (pemKey, record string) {
	t.Helper()
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			keyErr = err
			return
		}
		keyPEM = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
		pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
		if err != nil {
			keyErr = err
			return
		}
		keyTXT = "v=DKIM1; k=rsa; p=" + base64.StdEncoding.EncodeToString(pub)
	})
	if keyErr != nil {
		t.Fatal(keyErr)
	}
	return keyPEM, keyTXT
}

var (
	dkimpyOnce sync.Once
	dkimpyErr  error
)

func requireDKIMpy(t *testing.T) {
	t.Helper()
	dkimpyOnce.Do(func() {
		if out, err := exec.Command(systemPython, "-c", "import dkim").CombinedOutput(); err != nil {
			dkimpyErr = fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
		}
	})
	if dkimpyErr != nil {
		require.Missing(t, require.DKIMpy, "python3-dkim (Debian) is not installed (%v)", dkimpyErr)
	}
}

// signWithDKIMpy has dkimpy sign msg for domain with selector.
func signWithDKIMpy(t *testing.T, msg []byte, domain, selector string) []byte {
	t.Helper()
	requireDKIMpy(t)
	key, _ := testKey(t)
	cmd := exec.Command(systemPython, "-c", dkimpySign, key, domain, selector)
	cmd.Stdin = bytes.NewReader(msg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dkimpy sign: %v: %s", err, stderr.String())
	}
	return out
}
