package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/smtp/smtptest"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/tlscert/tlstest"
)

// The tests of TLS policy (issue 29, docs/api.md "TLS policy"), as a new
// user tries it: receivers on loopback addresses with their own DNS,
// certificates from their own authority (given to the node as
// SSL_CERT_FILE), and MTA-STS policies served on port 443.

// policyAddr is where the MTA-STS policy server listens: port 443, as RFC
// 8461 §3.3 fixes it, on a loopback address of its own.
const policyAddr = "127.0.0.160:443"

// tlsWorld is the receivers' side: DNS, the authority, one receiver per
// MX host (all on one port), and the policy server.
type tlsWorld struct {
	dns  *dnstest.Server
	ca   *tlstest.CA
	port int
	mx   map[string]*smtptest.Server

	mu       sync.Mutex
	policies map[string]string // by policy host (mta-sts.<domain>)
}

// startPolicyServer serves each domain's policy over HTTPS on policyAddr,
// with a certificate from w's authority for every mta-sts name. Binding
// port 443 needs privileges: without them the test is skipped, saying so.
func (w *tlsWorld) startPolicyServer(t *testing.T, names []string) {
	ln, err := net.Listen("tcp", policyAddr)
	if err != nil {
		if errors.Is(err, syscall.EACCES) {
			t.Skipf("the MTA-STS policy server needs port 443 (RFC 8461 §3.3), which this user may not bind: %v", err)
		}
		t.Fatalf("policy server: %v", err)
	}
	cert := w.ca.Issue(t, names...)
	srv := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		policy, ok := w.policies[strings.ToLower(r.Host)]
		w.mu.Unlock()
		if !ok || r.URL.Path != "/.well-known/mta-sts.txt" {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(rw, policy)
	}), TLSConfig: tlstest.ServerConfig(cert)}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
}

// publishPolicy announces domain's MTA-STS policy (RFC 8461 §3.1, §3.2).
func (w *tlsWorld) publishPolicy(domain, id, mode string, mx ...string) {
	text := "version: STSv1\r\nmode: " + mode + "\r\n"
	for _, m := range mx {
		text += "mx: " + m + "\r\n"
	}
	text += "max_age: 86400\r\n"
	w.mu.Lock()
	w.policies["mta-sts."+domain] = text
	w.mu.Unlock()
	w.dns.SetTXT("_mta-sts."+domain, "v=STSv1; id="+id+";")
	w.dns.SetA("mta-sts."+domain, strings.Split(policyAddr, ":")[0])
}

// receiver starts the MX host name of domain on ip, with opts.
func (w *tlsWorld) receiver(t *testing.T, domain, name, ip string, opts ...smtptest.Option) *smtptest.Server {
	opts = append(opts, smtptest.WithAddresses(ip), smtptest.WithPort(w.port))
	s := smtptest.Start(t, opts...)
	if w.port == 0 {
		w.port = s.Port()
	}
	w.dns.SetMX(domain, 10, name)
	w.dns.SetA(name, ip)
	w.mx[name] = s
	return s
}

// message is the log's view of a message's one recipient.
type loggedRecipient struct {
	Status             string         `json:"status"`
	SMTPCode           int            `json:"smtpCode"`
	SMTPResponse       string         `json:"smtpResponse"`
	LastDeferralReason string         `json:"lastDeferralReason"`
	TLS                map[string]any `json:"tls"`
}

func recipientOf(t *testing.T, c *apitest.Client, key, id string) loggedRecipient {
	t.Helper()
	r := c.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: key})
	var m struct {
		Recipients []loggedRecipient `json:"recipients"`
	}
	if err := json.Unmarshal(r.Body, &m); err != nil || len(m.Recipients) != 1 {
		t.Fatalf("message %s: %d %s", id, r.Status, r.Body)
	}
	return m.Recipients[0]
}

// waitRecipientStatus polls id's recipient until its status is one of want.
func waitRecipientStatus(t *testing.T, c *apitest.Client, key, id string, want ...string) loggedRecipient {
	t.Helper()
	var last loggedRecipient
	if !poll.Within(30*time.Second, func() bool {
		last = recipientOf(t, c, key, id)
		for _, w := range want {
			if last.Status == w {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("message %s: recipient %+v, want status %v", id, last, want)
	}
	return last
}

// Every judged behaviour of TLS policy, on each engine: enforce delivers
// over verified TLS and never in clear when the certificate or the MX does
// not match; testing delivers; an enforced sending domain defers mail to a
// server without STARTTLS; requireTls bounces with 5.7.30 where no path
// qualifies and is delivered where one does; opportunistic mail to a
// server without STARTTLS is delivered; each delivery shows its TLS.
func TestTLSPolicyAsAUserSeesIt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		w := &tlsWorld{dns: dnstest.Start(t), ca: tlstest.NewCA(t), mx: map[string]*smtptest.Server{},
			policies: map[string]string{}}
		domains := []string{"good.test", "badcert.test", "outside.test", "trial.test", "plain.test"}
		var policyNames []string
		for _, d := range domains {
			policyNames = append(policyNames, "mta-sts."+d)
		}
		w.startPolicyServer(t, policyNames)

		good := w.receiver(t, "good.test", "mx.good.test", "127.0.0.161",
			smtptest.WithCertificate(w.ca.Issue(t, "mx.good.test")), smtptest.WithREQUIRETLS())
		badcert := w.receiver(t, "badcert.test", "mx.badcert.test", "127.0.0.162",
			smtptest.WithCertificate(w.ca.Issue(t, "mx.someone-else.test")))
		outside := w.receiver(t, "outside.test", "mx.outside.test", "127.0.0.163",
			smtptest.WithCertificate(w.ca.Issue(t, "mx.outside.test")))
		trial := w.receiver(t, "trial.test", "mx.trial.test", "127.0.0.164",
			smtptest.WithCertificate(w.ca.Issue(t, "mx.someone-else.test")))
		plain := w.receiver(t, "plain.test", "mx.plain.test", "127.0.0.165")
		w.publishPolicy("good.test", "1", "enforce", "*.good.test")
		w.publishPolicy("badcert.test", "1", "enforce", "mx.badcert.test")
		w.publishPolicy("outside.test", "1", "enforce", "mx.elsewhere.test")
		w.publishPolicy("trial.test", "1", "testing", "mx.trial.test")

		work := t.TempDir()
		dataDir := filepath.Join(work, "data")
		storage := append([]string{"--data-dir", dataDir}, eng.Storage(t)...)
		w.dns.SetA(operatorHost, "127.0.0.1")
		w.dns.SetPTR("127.0.0.1", operatorHost)
		key := printedKey.FindString(cli(t, work, nil, append([]string{"accounts", "create", "acme"}, storage...)...))
		caFile := w.ca.WriteFile(t)
		node := startServerEnv(t, dataDir, []string{"SSL_CERT_FILE=" + caFile, "SSL_CERT_DIR=" + t.TempDir()},
			append([]string{"--dns-server", w.dns.Addr(), "--smtp-port", fmt.Sprint(w.port), "--hostname", operatorHost,
				"--delivery", "direct", "--retry-min-delay", "1h"}, storage...)...)
		c := node.client
		publishAndVerify(t, w.dns, c, key, "shop.example")
		publishAndVerify(t, w.dns, c, key, "secure.example")
		if r := c.Do(apitest.Request{Method: "PATCH", Path: "/v1/domains/secure.example", Key: key,
			Body: map[string]any{"tls": "enforced"}}); r.Status != 200 || r.Str("tls") != "enforced" {
			t.Fatalf("PATCH tls enforced: %d %s", r.Status, r.Body)
		}

		send := func(from, to string, requireTLS bool) string {
			t.Helper()
			body := map[string]any{"from": from, "to": to, "subject": "TLS to " + to, "text": "Hello"}
			if requireTLS {
				body["requireTls"] = true
			}
			r := c.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: key, Body: body})
			if r.Status != 200 {
				t.Fatalf("send to %s: %d %s", to, r.Status, r.Body)
			}
			return r.Str("messageId")
		}
		wantTLS := func(what string, r loggedRecipient, verified bool, policy string) {
			t.Helper()
			if r.TLS == nil || r.TLS["verified"] != verified || r.TLS["policy"] != policy ||
				!strings.HasPrefix(fmt.Sprint(r.TLS["version"]), "TLS1.") || r.TLS["cipher"] == "" {
				t.Errorf("%s: tls %v, want verified %v under policy %s", what, r.TLS, verified, policy)
			}
		}

		// enforce, a good certificate: delivered over verified TLS.
		id := send("orders@shop.example", "ann@good.test", false)
		wantTLS("enforce, good certificate", waitRecipientStatus(t, c, key, id, "delivered"), true, "mta-sts")

		// enforce, a certificate for another name, or an MX outside the
		// policy: deferred, tls_required, and nothing ever sent there.
		for _, to := range []string{"bob@badcert.test", "cy@outside.test"} {
			r := waitRecipientStatus(t, c, key, send("orders@shop.example", to, false), "deferred")
			if r.LastDeferralReason != "tls_required" {
				t.Errorf("to %s: %+v, want deferred for tls_required", to, r)
			}
		}
		if st := badcert.Stats(); st.Transactions != 0 || st.Messages != 0 {
			t.Errorf("the MX with a certificate for another name saw %d MAIL and %d messages, want none", st.Transactions, st.Messages)
		}
		if st := outside.Stats(); st.Connections != 0 {
			t.Errorf("the MX outside the policy saw %d connections, want none", st.Connections)
		}

		// testing: delivered as usual, the certificate's failure shown.
		id = send("orders@shop.example", "dee@trial.test", false)
		wantTLS("testing, bad certificate", waitRecipientStatus(t, c, key, id, "delivered"), false, "mta-sts")
		if n := len(trial.Messages()); n != 1 {
			t.Errorf("the testing-mode MX got %d messages, want 1", n)
		}

		// Opportunistic, no STARTTLS: delivered in clear, tls null.
		id = send("orders@shop.example", "eve@plain.test", false)
		if r := waitRecipientStatus(t, c, key, id, "delivered"); r.TLS != nil {
			t.Errorf("delivered in clear, but tls is %v, want null", r.TLS)
		}

		// An enforced sending domain: deferred at a server without
		// STARTTLS, nothing sent in clear.
		before := plain.Stats().Transactions
		r := waitRecipientStatus(t, c, key, send("orders@secure.example", "fay@plain.test", false), "deferred")
		if r.LastDeferralReason != "tls_required" {
			t.Errorf("enforced domain to a server without STARTTLS: %+v, want deferred for tls_required", r)
		}
		if n := plain.Stats().Transactions - before; n != 0 {
			t.Errorf("enforced domain's mail began %d transactions at a server without STARTTLS, want none", n)
		}

		// requireTls: bounced with 5.7.30 where no path qualifies.
		r = waitRecipientStatus(t, c, key, send("orders@shop.example", "gus@plain.test", true), "bounced")
		if !strings.Contains(r.SMTPResponse, "5.7.30") {
			t.Errorf("requireTls to a domain without MTA-STS: %+v, want bounced with 5.7.30", r)
		}
		// And delivered where one does, with REQUIRETLS on MAIL FROM.
		id = send("orders@shop.example", "hal@good.test", true)
		wantTLS("requireTls to a qualifying MX", waitRecipientStatus(t, c, key, id, "delivered"), true, "requiretls")
		var sawRequireTLS bool
		for _, m := range good.Messages() {
			if strings.Contains(strings.Join(m.Rcpts, ","), "hal@good.test") {
				sawRequireTLS = m.RequireTLS
			}
		}
		if !sawRequireTLS {
			t.Error("the receiver did not see REQUIRETLS on MAIL FROM")
		}

		// The metric counts sessions by policy and result.
		metrics := node.metrics(t)
		for _, series := range []string{
			`mailroom_delivery_tls_total{policy="mta-sts",result="verified"}`,
			`mailroom_delivery_tls_total{policy="mta-sts",result="refused"}`,
			`mailroom_delivery_tls_total{policy="mta-sts",result="unverified"}`,
			`mailroom_delivery_tls_total{policy="enforced",result="refused"}`,
			`mailroom_delivery_tls_total{policy="opportunistic",result="plaintext"}`,
			`mailroom_delivery_tls_total{policy="requiretls",result="verified"}`,
		} {
			line := grepLines(metrics, series)
			if line == "" || strings.HasSuffix(line, " 0") {
				t.Errorf("metric %s: %q, want a count", series, line)
			}
		}
	})
}
