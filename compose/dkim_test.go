package compose

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/emersion/go-msgauth/dkim"

	"github.com/mailroom/mailroom"
)

// verify checks raw's DKIM signatures as a receiver would, against the
// published record.
func verify(t *testing.T, raw []byte) []*dkim.Verification {
	t.Helper()
	vs, err := dkim.VerifyWithOptions(bytes.NewReader(raw), &dkim.VerifyOptions{LookupTXT: lookupTXT})
	if err != nil {
		t.Fatalf("dkim.Verify: %v", err)
	}
	return vs
}

// verifyOne requires exactly one signature, and that it passes.
func verifyOne(t *testing.T, raw []byte) *dkim.Verification {
	t.Helper()
	vs := verify(t, raw)
	if len(vs) != 1 {
		t.Fatalf("%d DKIM signatures, want 1", len(vs))
	}
	if vs[0].Err != nil {
		t.Fatalf("DKIM signature does not verify: %v", vs[0].Err)
	}
	return vs[0]
}

func TestDKIMVerifies(t *testing.T) {
	key, _ := testDomainKey()
	m := testMessage()
	m.ReplyTo = []mailroom.Address{{Address: "help@example.com"}}
	m.Attachments = []mailroom.Attachment{invoice, logo}
	raw := mustCompose(t, m)

	if !bytes.HasPrefix(raw, []byte("DKIM-Signature:")) {
		t.Fatal("the signature is not the first field")
	}
	v := verifyOne(t, raw)
	if v.Domain != key.Domain {
		t.Errorf("d= %q, want %q", v.Domain, key.Domain)
	}
	sig := signatureField(t, raw)
	for _, tag := range []string{"a=rsa-sha256", "c=relaxed/relaxed", "s=" + key.Selector} {
		if !strings.Contains(sig, tag) {
			t.Errorf("signature lacks %s: %s", tag, sig)
		}
	}
	want := "From:To:Cc:Subject:Date:Message-ID:Reply-To:MIME-Version:Content-Type:From"
	if got := strings.Join(v.HeaderKeys, ":"); !strings.EqualFold(got, want) {
		t.Errorf("h=%s, want %s (From over-signed)", got, want)
	}
}

func TestDKIMFailsWhenTamperedWith(t *testing.T) {
	raw := mustCompose(t, testMessage())
	for name, tamper := range map[string]func([]byte) []byte{
		"body changed": func(b []byte) []byte {
			return bytes.Replace(b, []byte("shipped"), []byte("stalled"), 1)
		},
		"second From added": func(b []byte) []byte {
			// A From above the signed one is the one most readers show.
			return append([]byte("From: CEO <ceo@example.com>\r\n"), b...)
		},
		"second From added below": func(b []byte) []byte {
			head, body, _ := bytes.Cut(b, []byte("\r\n\r\n"))
			return append(append(head, "\r\nFrom: CEO <ceo@example.com>\r\n\r\n"...), body...)
		},
		"subject changed": func(b []byte) []byte {
			return bytes.Replace(b, []byte("Subject: =?utf-8?q?Gr"), []byte("Subject: =?utf-8?q?Fr"), 1)
		},
	} {
		t.Run(name, func(t *testing.T) {
			forged := tamper(bytes.Clone(raw))
			if bytes.Equal(forged, raw) {
				t.Fatal("tampering changed nothing")
			}
			vs := verify(t, forged)
			if len(vs) != 1 || vs[0].Err == nil {
				t.Error("a tampered message still verifies")
			}
		})
	}
}

func TestRefusesBadKeys(t *testing.T) {
	good, _ := testDomainKey()
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	edDER, _ := x509.MarshalPKCS8PrivateKey(edKey)
	for name, key := range map[string]mailroom.DKIMKey{
		"garbage":     {Domain: good.Domain, Selector: good.Selector, PrivateKeyPKCS8: []byte("not a key")},
		"empty":       {Domain: good.Domain, Selector: good.Selector},
		"not RSA":     {Domain: good.Domain, Selector: good.Selector, PrivateKeyPKCS8: edDER},
		"no selector": {Domain: good.Domain, PrivateKeyPKCS8: good.PrivateKeyPKCS8},
		"no domain":   {Selector: good.Selector, PrivateKeyPKCS8: good.PrivateKeyPKCS8},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := testComposer().Compose(testMessage(), key); err == nil {
				t.Error("composed with a bad key")
			} else if !strings.Contains(err.Error(), "DKIM key") {
				t.Errorf("error does not say the key is at fault: %v", err)
			}
		})
	}
}

// signatureField is the unfolded DKIM-Signature value.
func signatureField(t *testing.T, raw []byte) string {
	t.Helper()
	var b strings.Builder
	for i, line := range strings.Split(string(raw), "\r\n") {
		if i > 0 && (line == "" || (line[0] != ' ' && line[0] != '\t')) {
			break
		}
		b.WriteString(strings.TrimSpace(line))
	}
	return b.String()
}
