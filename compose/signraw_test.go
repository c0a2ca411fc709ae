package compose

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// submitted is a message as an SMTP client writes it: its own folding and
// spacing, fields the service does not sign, and a body no composer would
// write.
const submitted = "Received: from app.internal; Sun, 22 Nov 2026 09:59:59 +0000\r\n" +
	"From: Shop <orders@example.com>\r\n" +
	"To: Ann <ann@example.net>,\r\n\tdora@example.net\r\n" +
	"Subject:   =?utf-8?q?Gr=C3=BC=C3=9Fe?=   and\r\n more  \r\n" +
	"X-Mailer: PHPMailer\r\n" +
	"MIME-Version: 1.0\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\n" +
	"Message-ID: <abc@example.com>\r\n" +
	"Date: Sun, 22 Nov 2026 10:00:00 +0000\r\n" +
	"\r\n" +
	"Hello Ann,  \r\n\t tabbed\r\n.leading dot\r\n\xff\xfe 8-bit\r\n\r\n\r\n"

// SignRaw puts a signature in front of the message and changes nothing
// else; the signature verifies as a receiver checks it, over the fields
// Compose signs, From over-signed, with t= the time of signing.
func TestSignRaw(t *testing.T) {
	key, _ := testDomainKey()
	raw, err := testComposer().SignRaw([]byte(submitted), key)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte("DKIM-Signature:")) || !bytes.HasSuffix(raw, []byte(submitted)) {
		t.Fatal("the message is not the signature in front of the message as it was")
	}
	v := verifyOne(t, raw)
	if want := "From:To:Subject:Date:Message-ID:MIME-Version:Content-Type:From"; !strings.EqualFold(strings.Join(v.HeaderKeys, ":"), want) {
		t.Errorf("h=%s, want %s", strings.Join(v.HeaderKeys, ":"), want)
	}
	sig := signatureField(t, raw)
	for _, tag := range []string{"a=rsa-sha256", "c=relaxed/relaxed", "d=example.com", "s=" + key.Selector,
		"t=" + strconv.FormatInt(testNow.Unix(), 10)} {
		if !strings.Contains(sig, tag) {
			t.Errorf("signature lacks %s: %s", tag, sig)
		}
	}
	for _, line := range strings.Split(string(raw[:len(raw)-len(submitted)]), "\r\n") {
		if len(line) > 78 {
			t.Errorf("signature line of %d characters: %q", len(line), line)
		}
	}

	for name, forged := range map[string][]byte{
		"body":    bytes.Replace(raw, []byte("tabbed"), []byte("tapped"), 1),
		"subject": bytes.Replace(raw, []byte("more"), []byte("less"), 1),
		"From":    append([]byte("From: CEO <ceo@example.com>\r\n"), raw...),
	} {
		if vs := verify(t, forged); len(vs) != 1 || vs[0].Err == nil {
			t.Errorf("changed %s still verifies", name)
		}
	}
	requireDKIMpy(t)
	if ok, out := dkimpy(t, raw); !ok {
		t.Fatalf("dkimpy rejects the signature: %s", out)
	}
}

func TestSignRawRefuses(t *testing.T) {
	key, _ := testDomainKey()
	for name, raw := range map[string]string{
		"no end of header": "From: a@example.com\r\nSubject: x\r\n",
		"not a field":      "From: a@example.com\r\nHello\r\n\r\nbody\r\n",
	} {
		if _, err := testComposer().SignRaw([]byte(raw), key); err == nil {
			t.Errorf("%s: signed", name)
		}
	}
	bad := key
	bad.Selector = ""
	if _, err := testComposer().SignRaw([]byte(submitted), bad); err == nil || !strings.Contains(err.Error(), "DKIM key") {
		t.Errorf("signed with a key without selector: %v", err)
	}
}
