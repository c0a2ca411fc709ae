package http_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom/delivery"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/resend"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/webhook"
)

// hookReceiver is an HTTPS receiver on loopback that keeps what it is
// sent, as a customer's endpoint would.
type hookReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []hookRequest
}

type hookRequest struct {
	path   string
	header http.Header
	body   []byte
}

func startHookReceiver(t *testing.T) *hookReceiver {
	rc := &hookReceiver{}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, hookRequest{path: r.URL.Path, header: r.Header.Clone(), body: body})
		rc.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// waitFor waits for a request whose Resend type is typ about the email
// emailID and returns it with its body decoded.
func (rc *hookReceiver) waitFor(t *testing.T, typ, emailID string) (hookRequest, resend.Payload, resend.EmailData) {
	t.Helper()
	var req hookRequest
	var p resend.Payload
	var d resend.EmailData
	poll.Until(t, 20*time.Second, "a "+typ+" request", func() bool {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		for _, r := range rc.got {
			if json.Unmarshal(r.body, &p) == nil && p.Type == typ && json.Unmarshal(p.Data, &d) == nil && d.EmailID == emailID {
				req = r
				return true
			}
		}
		return false
	})
	return req, p, d
}

// newEnvWithHookReceiver is an env whose webhook requests are delivered,
// by a dispatcher running until the test ends, to a receiver on loopback.
func newEnvWithHookReceiver(t *testing.T, eng storetest.Engine) (*env, *hookReceiver) {
	t.Helper()
	rc := startHookReceiver(t)
	var svc *webhook.Service
	e := newEnvWithStore(t, eng.Open(t), func(s *mhttp.Server, _ *delivery.Deliverer) {
		svc = s.Webhooks
		// The receiver is on loopback, which the service's URL check
		// refuses (TestResendWebhookErrors): allowed here, as serve
		// --webhooks-allow-private does.
		s.Webhooks.CheckURL = func(context.Context, string) error { return nil }
	})
	roots := x509.NewCertPool()
	roots.AddCert(rc.srv.Certificate())
	d := &webhook.Dispatcher{Store: e.store, Keys: svc.SigningKeys, Node: "node_test", AllowPrivate: true, RootCAs: roots,
		Log: slog.New(slog.DiscardHandler), Now: time.Now, Poll: 20 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	svc.Wake = d.Wake
	return e, rc
}

// An endpoint made through Resend's POST /webhooks receives Resend's
// payload for mail really delivered and really bounced by the test's SMTP
// server, and Resend's verification (the svix-* headers with the signing
// secret) accepts every request.
func TestResendWebhookReceivesDeliveries(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e, rc := newEnvWithHookReceiver(t, eng)
		r := e.resendCall(t, e.admin, "POST", "/webhooks", map[string]any{"endpoint": rc.srv.URL + "/resend",
			"events": []string{"email.sent", "email.delivered", "email.bounced"}})
		if r.Status != 200 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		secret := r.Str("signing_secret")

		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")
		e.mx.Reply("gone@example.net", 550, "5.1.1", "no such user")
		sent := e.send(t, map[string]any{"from": "Shop <orders@shop.example>", "to": []string{"ann@example.net"},
			"subject": "Your receipt", "text": "Thanks.", "tags": map[string]string{"kind": "receipt"}})
		bounced := e.send(t, map[string]any{"from": "orders@shop.example", "to": "gone@example.net", "subject": "Hello", "text": "Hi."})
		if sent.Status != 200 || bounced.Status != 200 {
			t.Fatalf("send: %d %s / %d %s", sent.Status, sent.Body, bounced.Status, bounced.Body)
		}
		id := sent.Str("messageId")

		for _, typ := range []string{"email.sent", "email.delivered"} {
			req, p, data := rc.waitFor(t, typ, id)
			verifyAsResend(t, secret, req)
			if data.From != "orders@shop.example" || !slices.Equal(data.To, []string{"ann@example.net"}) ||
				data.Subject != "Your receipt" || data.Tags["kind"] != "receipt" || data.Bounce != nil || data.CreatedAt == "" || p.CreatedAt == "" {
				t.Errorf("%s: %s", typ, req.body)
			}
		}
		req, _, data := rc.waitFor(t, "email.bounced", bounced.Str("messageId"))
		verifyAsResend(t, secret, req)
		if b := data.Bounce; b == nil || b.Type != "Permanent" || b.SubType != "NoEmail" || b.Message == "" {
			t.Errorf("email.bounced: %s", req.body)
		}
		// No request carried a type the endpoint did not subscribe to in
		// Resend's names.
		rc.mu.Lock()
		defer rc.mu.Unlock()
		for _, got := range rc.got {
			var p resend.Payload
			if err := json.Unmarshal(got.body, &p); err != nil || !slices.Contains([]string{"email.sent", "email.delivered", "email.bounced"}, p.Type) {
				t.Errorf("a request of another type: %s", got.body)
			}
		}
	})
}

// verifyAsResend checks a request as Resend's SDKs do (resend-go's
// Webhooks.Verify, the Node SDK's webhooks.verify): the svix-* headers,
// the body as received, the signing secret.
func verifyAsResend(t *testing.T, secret string, r hookRequest) {
	t.Helper()
	key, err := webhook.ParseSecret(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := webhook.Verify(key, r.header.Get("svix-id"), r.header.Get("svix-timestamp"), r.header.Get("svix-signature"), r.body, time.Now()); err != nil {
		t.Errorf("the svix-* headers do not verify: %v\n%v", err, r.header)
	}
}
