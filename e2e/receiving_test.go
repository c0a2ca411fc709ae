package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/require"
	"github.com/mailroom/mailroom/storetest"
)

// smtplibSend is an outside SMTP client: Python's smtplib sends stdin
// from argv[3] to the comma-separated argv[4] at argv[1]:argv[2] and
// prints "ok", or "refused" and the reply code.
const smtplibSend = `
import sys, smtplib
host, port, sender, rcpts = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split(",")
try:
    with smtplib.SMTP(host, port, local_hostname="mx.sender.example", timeout=30) as s:
        s.sendmail(sender, rcpts, sys.stdin.buffer.read())
    print("ok")
except smtplib.SMTPRecipientsRefused as e:
    print("refused", list(e.recipients.values())[0][0])
except smtplib.SMTPResponseException as e:
    print("refused", e.smtp_code)
`

// dkimpySigner signs stdin for argv[2] with selector argv[3] and the PEM
// key argv[1]: Debian's dkimpy, independent of the service's verifier.
const dkimpySigner = `
import sys, dkim
key, domain, selector = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3].encode()
msg = sys.stdin.buffer.read()
sys.stdout.buffer.write(dkim.sign(msg, selector, domain, key, include_headers=[b"from", b"to", b"cc", b"subject", b"message-id"]) + msg)
`

func python(t *testing.T, stdin []byte, script string, args ...string) string {
	t.Helper()
	cmd := exec.Command("/usr/bin/python3", append([]string{"-c", script}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v: %s", err, stderr.String())
	}
	return string(out)
}

// What a new user sees of receiving mail: PATCH {receiving: true} shows
// the MX record to publish, which verifies; mail from an outside client
// to any address of the domain arrives as a verified email.received
// webhook with the verdicts (pass for DKIM-signed aligned mail, DMARC fail
// for a spoofed From of a p=reject domain whatever a forged
// Authentication-Results says); another domain is refused at RCPT.
func TestReceivingMailThroughTheMX(t *testing.T) {
	if out, err := exec.Command("/usr/bin/python3", "-c", "import dkim, smtplib").CombinedOutput(); err != nil {
		require.Missing(t, require.DKIMpy, "python3-dkim (Debian) is not installed: %v %s", err, out)
	}
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	pub, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)

	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		w := newWorld(t)
		w.dns.SetTXT("sender.example", "v=spf1 ip4:127.0.0.1 -all")
		w.dns.SetTXT("sel._domainkey.sender.example", "v=DKIM1; k=rsa; p="+base64.StdEncoding.EncodeToString(pub))
		w.dns.SetTXT("_dmarc.sender.example", "v=DMARC1; p=reject")
		w.dns.SetTXT("attacker.example", "v=spf1 ip4:127.0.0.1 -all")
		hooks := startHookReceiver(t)
		node, key, _ := w.startAcmeNode(t, eng, "--inbound-listen", "127.0.0.1:0", "--webhooks-allow-private")
		c := node.client
		createHook(t, c, key, hooks, "/received", "email.received")

		r := c.Do(apitest.Request{Method: "PATCH", Path: "/v1/domains/shop.example", Key: key, Body: map[string]any{"receiving": true}})
		var d struct {
			Records []struct {
				Purpose, Type, Name, Value, Status string
				Priority                           *int
			} `json:"records"`
		}
		if err := json.Unmarshal(r.Body, &d); err != nil || r.Status != 200 {
			t.Fatalf("PATCH receiving: %d %s", r.Status, r.Body)
		}
		found := false
		for _, rec := range d.Records {
			if rec.Purpose == "receiving" {
				found = rec.Type == "MX" && rec.Name == "shop.example" && rec.Priority != nil
				if found {
					w.dns.SetMX(rec.Name, uint16(*rec.Priority), rec.Value)
				}
			}
		}
		if !found {
			t.Fatalf("no MX record of purpose receiving for shop.example: %s", r.Body)
		}
		if r := c.Do(apitest.Request{Method: "POST", Path: "/v1/domains/shop.example/verify", Key: key}); !strings.Contains(string(r.Body), `"receiving"`) || r.Str("status") != "verified" {
			t.Fatalf("verify: %s", r.Body)
		}

		host, port, _ := net.SplitHostPort(node.inboundAddr(t))
		send := func(from, to string, msg []byte) string {
			t.Helper()
			return strings.TrimSpace(python(t, msg, smtplibSend, host, port, from, to))
		}
		signed := []byte(python(t, []byte("From: Alice <alice@sender.example>\r\nTo: support@shop.example\r\nCc: team@shop.example\r\n"+
			"Subject: Order 42\r\nMessage-ID: <o42@sender.example>\r\n\r\nWhere is my order?\r\n"), dkimpySigner, keyPEM, "sender.example", "sel"))
		if got := send("bounces@sender.example", "support+order42@shop.example", signed); got != "ok" {
			t.Fatalf("signed mail to the receiving domain: %s", got)
		}
		spoof := []byte("Authentication-Results: mail.operator.test; spf=pass; dkim=pass header.d=sender.example; dmarc=pass header.from=sender.example\r\n" +
			"From: CEO <ceo@sender.example>\r\nTo: support@shop.example\r\nSubject: Wire money\r\n\r\nNow.\r\n")
		if got := send("x@attacker.example", "support@shop.example", spoof); got != "ok" {
			t.Fatalf("spoofed mail: %s", got)
		}
		if got := send("x@attacker.example", "support@elsewhere.example", spoof); got != "refused 550" {
			t.Errorf("mail for a domain nobody receives for: %s, want refused 550", got)
		}

		auth := func(h hookRequest) map[string]any { a, _ := h.Data["authentication"].(map[string]any); return a }
		good := hooks.waitFor(t, "/received", 30*time.Second, "email.received for the signed mail", func(h hookRequest) bool {
			return h.Type == "email.received" && h.Data["subject"] == "Order 42"
		})
		if a := auth(good); !good.Verified || a["spf"] != "pass" || a["dkim"] != "pass" || a["dmarc"] != "pass" {
			t.Errorf("signed aligned mail: verified %v, authentication %v; want spf, dkim and dmarc pass", good.Verified, a)
		}
		if rc, _ := json.Marshal(good.Data["recipients"]); string(rc) != `["support+order42@shop.example"]` {
			t.Errorf("recipients %s, want the envelope's, +tag kept", rc)
		}
		bad := hooks.waitFor(t, "/received", 30*time.Second, "email.received for the spoofed mail", func(h hookRequest) bool {
			return h.Type == "email.received" && h.Data["subject"] == "Wire money"
		})
		if a := auth(bad); a["dmarc"] != "fail" {
			t.Errorf("spoofed From of a p=reject domain with a forged Authentication-Results: %v, want dmarc fail", a)
		}
	})
}
