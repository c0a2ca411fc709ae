package receiving_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/inbound"
	"github.com/mailroom/mailroom/receiving"
	"github.com/mailroom/mailroom/require"
	"github.com/mailroom/mailroom/smtpserver"
	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
	"github.com/mailroom/mailroom/storetest"
)

// pythonSend is an outside SMTP client: Python's smtplib sends stdin
// from argv[3] to the comma-separated argv[4] at argv[1]:argv[2], and
// prints "ok", or "refused" and the reply code.
const pythonSend = `
import sys, smtplib
host, port, sender, rcpts = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split(",")
msg = sys.stdin.buffer.read()
try:
    with smtplib.SMTP(host, port, local_hostname="mx.sender.example", timeout=30) as s:
        s.sendmail(sender, rcpts, msg)
    print("ok")
except smtplib.SMTPRecipientsRefused as e:
    print("refused", list(e.recipients.values())[0][0])
except smtplib.SMTPResponseException as e:
    print("refused", e.smtp_code)
`

// dkimpySign has Debian's dkimpy, an independent signer, sign stdin.
const dkimpySign = `
import sys, dkim
key, domain, selector = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3].encode()
msg = sys.stdin.buffer.read()
sig = dkim.sign(msg, selector, domain, key, include_headers=[b"from", b"to", b"cc", b"subject", b"message-id"])
sys.stdout.buffer.write(sig + msg)
`

const systemPython = "/usr/bin/python3"

func run(t *testing.T, stdin []byte, script string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(systemPython, append([]string{"-c", script}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v: %s", err, stderr.String())
	}
	return out
}

// Mail as a new user's domain gets it from the internet, through the MX
// with the real Receiver and store, sent by Python's smtplib, checked
// against a DNS server holding the senders' SPF, DKIM and DMARC records:
// DKIM-signed aligned mail passes all three; a spoofed From of a p=reject
// domain with a forged Authentication-Results fails DMARC; another
// domain is refused at RCPT; malformed MIME is stored, and the MX stays up.
func TestOutsideClientThroughTheMX(t *testing.T) {
	if out, err := exec.Command(systemPython, "-c", "import dkim, smtplib").CombinedOutput(); err != nil {
		require.Missing(t, require.DKIMpy, "python3-dkim (Debian) is not installed: %v %s", err, out)
	}
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	pub, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)

	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		s := e.Open(t)
		acct := storetest.NewAccount(t, s, "acme")
		receivingDomain(t, s, acct, "in.acme.example")
		world := dnstest.Start(t)
		world.SetTXT("sender.example", "v=spf1 ip4:127.0.0.1 -all")
		world.SetTXT("sel._domainkey.sender.example", "v=DKIM1; k=rsa; p="+base64.StdEncoding.EncodeToString(pub))
		world.SetTXT("_dmarc.sender.example", "v=DMARC1; p=reject")
		world.SetTXT("attacker.example", "v=spf1 ip4:127.0.0.1 -all")

		const hostname = "mx.mailroom.test"
		rc := &receiving.Receiver{Store: s, Resolver: &dns.Resolver{Server: world.Addr(), Timeout: 2 * time.Second}, Hostname: hostname}
		srv := &inbound.Server{
			Handler:  &inbound.Reports{Store: s, ReturnPaths: inbound.ReturnPaths{Key: []byte("k")}, Now: time.Now},
			Receiver: rc,
			Config:   smtpserver.Config{Hostname: hostname, Log: (&smtpservertest.Log{}).Logger()},
		}
		srv.MaxBytes = 1 << 20
		host, port, _ := net.SplitHostPort(smtpservertest.Serve(t, srv.Close, srv.Serve).Addrs[0])
		send := func(from, to string, msg []byte) string {
			t.Helper()
			return strings.TrimSpace(string(run(t, msg, pythonSend, host, port, from, to)))
		}

		signed := run(t, []byte("From: Alice <alice@sender.example>\r\nTo: support@in.acme.example\r\nCc: Team <team@in.acme.example>\r\n"+
			"Subject: Order 42\r\nMessage-ID: <o42@sender.example>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n"+
			"--b\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>Hello</p>\r\n"+
			"--b\r\nContent-Type: text/html\r\nContent-Disposition: attachment; filename=\"x.html\"\r\n\r\n<script>alert(1)</script>\r\n--b--\r\n"),
			dkimpySign, keyPEM, "sender.example", "sel")
		if got := send("bounces@sender.example", "support+42@in.acme.example,team@in.acme.example", signed); got != "ok" {
			t.Fatalf("signed mail: %s", got)
		}
		spoof := []byte("Authentication-Results: " + hostname + "; spf=pass; dkim=pass header.d=sender.example; dmarc=pass header.from=sender.example\r\n" +
			"From: CEO <ceo@sender.example>\r\nTo: support@in.acme.example\r\nSubject: Wire money\r\n\r\nNow.\r\n")
		if got := send("x@attacker.example", "support@in.acme.example", spoof); got != "ok" {
			t.Fatalf("spoofed mail: %s", got)
		}
		if got := send("x@attacker.example", "someone@elsewhere.example", spoof); got != "refused 550" {
			t.Errorf("mail for another domain: %s, want refused 550", got)
		}
		malformed := []byte("From: a@attacker.example\r\nSubject: broken\r\nContent-Type: multipart/mixed; boundary=\"q\r\n\r\n--q\r\nContent-Transfer-Encoding: base64\r\n\r\n@@@@\r\n")
		if got := send("x@attacker.example", "intake@in.acme.example", malformed); got != "ok" {
			t.Fatalf("malformed mail: %s", got)
		}

		ctx := context.Background()
		list, _, err := s.ListReceived(ctx, acct.ID, mailroom.ReceivedFilter{}, mailroom.Page{Limit: 10})
		if err != nil || len(list) != 3 {
			t.Fatalf("%d received, %v; want 3", len(list), err)
		}
		bySubject := map[string]*mailroom.ReceivedMessage{}
		for _, m := range list {
			bySubject[m.Subject] = m
		}
		good, bad := bySubject["Order 42"], bySubject["Wire money"]
		if good == nil || bad == nil || bySubject["broken"] == nil {
			t.Fatalf("received %v", bySubject)
		}
		if a := good.Authentication; a.SPF != "pass" || a.DKIM != "pass" || a.DMARC != "pass" ||
			len(a.DKIMSignatures) != 1 || a.DKIMSignatures[0] != (mailroom.DKIMSignatureResult{Domain: "sender.example", Selector: "sel", Result: "pass"}) {
			t.Errorf("signed aligned mail: %+v, want spf, dkim and dmarc pass", a)
		}
		if strings.Join(good.Recipients, ",") != "support+42@in.acme.example,team@in.acme.example" ||
			strings.Join(good.To, ",") != "support@in.acme.example" || strings.Join(good.Cc, ",") != "team@in.acme.example" {
			t.Errorf("recipients %v to %v cc %v", good.Recipients, good.To, good.Cc)
		}
		full, err := s.Received(ctx, acct.ID, good.ID)
		if err != nil || strings.TrimSpace(full.HTML) != "<p>Hello</p>" || len(full.Attachments) != 1 || full.Attachments[0].Filename != "x.html" {
			t.Errorf("signed mail read back: %+v, %v", full, err)
		}
		if a := bad.Authentication; a.DMARC != "fail" || a.DKIM != "none" {
			t.Errorf("spoofed From of a p=reject domain: %+v, want dmarc fail whatever the forged field says", a)
		}
		raw, err := s.ReceivedRaw(ctx, acct.ID, bad.ID)
		if err != nil || bytes.Count(raw, []byte(hostname+";")) != 1 || !bytes.Contains(raw, []byte("dmarc=fail")) {
			t.Errorf("spoofed mail stored as %q, %v: want the forged field gone and the service's own saying dmarc=fail", raw, err)
		}
		broken, err := s.Received(ctx, acct.ID, bySubject["broken"].ID)
		if err != nil || broken.ParseProblem == "" {
			t.Errorf("malformed mail: %+v, %v; want it stored with a parse problem", broken, err)
		}
		if got := send("bounces@sender.example", "again@in.acme.example", signed); got != "ok" {
			t.Errorf("after malformed mail the MX answers %s", got)
		}
	})
}
