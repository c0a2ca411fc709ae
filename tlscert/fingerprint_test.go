package tlscert_test

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/tlscert"
)

func TestFingerprintKnownDigest(t *testing.T) {
	// SHA-256("abc"), FIPS 180-2 appendix B.1, in openssl's notation.
	const want = "BA:78:16:BF:8F:01:CF:EA:41:41:40:DE:5D:AE:22:23:" +
		"B0:03:61:A3:96:17:7A:9C:B4:10:FF:61:F2:00:15:AD"
	cert := tls.Certificate{Certificate: [][]byte{[]byte("abc"), []byte("intermediate, ignored")}}
	if got := tlscert.Fingerprint(cert); got != want {
		t.Errorf("Fingerprint = %s, want %s", got, want)
	}
}

func TestFingerprintOfLeaf(t *testing.T) {
	cert := mustSelfSigned(t, t.TempDir(), "", testNow, true)
	sum := sha256.Sum256(cert.Certificate[0])
	var pairs []string
	for i := 0; i < len(sum); i++ {
		pairs = append(pairs, strings.ToUpper(hex.EncodeToString(sum[i:i+1])))
	}
	if got, want := tlscert.Fingerprint(cert), strings.Join(pairs, ":"); got != want {
		t.Errorf("Fingerprint = %s, want %s", got, want)
	}
}

func TestFingerprintEmpty(t *testing.T) {
	if got := tlscert.Fingerprint(tls.Certificate{}); got != "" {
		t.Errorf("Fingerprint of no certificate = %q, want empty", got)
	}
}
