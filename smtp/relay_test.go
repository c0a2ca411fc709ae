package smtp

import (
	"crypto/tls"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/smtp/smtptest"
)

// A password with characters that must be escaped in a URL.
const relayPassword = "p@ss:w/rd%é"

// newRelay parses a relay URL for srv, as --relay-url would be given, and
// trusts srv's certificate.
func newRelay(t *testing.T, scheme string, srv *smtptest.Server, user, pass string) *Relay {
	t.Helper()
	u := url.URL{Scheme: scheme, Host: "127.0.0.1:" + strconv.Itoa(srv.Port())}
	if user != "" {
		u.User = url.UserPassword(user, pass)
	}
	cfg, err := ParseRelayURL(u.String())
	if err != nil {
		t.Fatal(err)
	}
	r := NewRelay(cfg, ehloName)
	r.TLSConfig = &tls.Config{RootCAs: srv.RootCAs()}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func TestRelayAuthenticatesOverSTARTTLS(t *testing.T) {
	srv := smtptest.Start(t, smtptest.WithSTARTTLS(), smtptest.WithAuth("mailroom", relayPassword))
	r := newRelay(t, "smtp", srv, "mailroom", relayPassword)

	// Recipients of different domains all go to the relay.
	for _, del := range []*mailroom.Delivery{
		delivery("example.test", "a@example.test", "b@example.test"),
		delivery("other.test", "c@other.test"),
	} {
		for _, res := range deliver(t, r, del) {
			want(t, res, mailroom.Delivered, 250, "2.0.0", "queued as")
			if res.MX != "127.0.0.1" {
				t.Errorf("MX %q, want the relay host", res.MX)
			}
			if res.Unencrypted {
				t.Errorf("%s: reported unencrypted over TLS", res.Recipient)
			}
		}
	}
	msgs := srv.Messages()
	if len(msgs) != 2 || !msgs[0].TLS || msgs[0].Helo != ehloName {
		t.Fatalf("received %+v, want two messages under TLS", msgs)
	}
	if st := srv.Stats(); st.Connections != 1 {
		t.Errorf("stats %+v, want one authenticated session reused", st)
	}
}

func TestRelayWrongPasswordDefers(t *testing.T) {
	srv := smtptest.Start(t, smtptest.WithSTARTTLS(), smtptest.WithAuth("mailroom", relayPassword))
	r := newRelay(t, "smtp", srv, "mailroom", "not-the-password")

	// A refused login is the operator's to fix: deferred, so that the
	// mail goes out once the configuration is right.
	res := deliver(t, r, delivery("example.test", "a@example.test"))
	want(t, res[0], mailroom.Deferred, 535, "5.7.8", "credentials")
	if strings.Contains(res[0].Response, "not-the-password") {
		t.Errorf("response %q shows the password", res[0].Response)
	}
	if st := srv.Stats(); st.Transactions != 0 {
		t.Errorf("stats %+v, want no transaction without login", st)
	}
}

func TestRelayImplicitTLS(t *testing.T) {
	srv := smtptest.Start(t, smtptest.WithImplicitTLS(), smtptest.WithAuth("mailroom", relayPassword))
	r := newRelay(t, "smtps", srv, "mailroom", relayPassword)

	res := deliver(t, r, delivery("example.test", "a@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	if msgs := srv.Messages(); len(msgs) != 1 || !msgs[0].TLS {
		t.Fatalf("received %+v, want one message under TLS", msgs)
	}
}

func TestRelayNeverSendsCredentialsInClear(t *testing.T) {
	// AUTH is offered in clear and STARTTLS is not.
	srv := smtptest.Start(t, smtptest.WithAuth("mailroom", relayPassword))
	r := newRelay(t, "smtp", srv, "mailroom", relayPassword)

	res := deliver(t, r, delivery("example.test", "a@example.test"))
	want(t, res[0], mailroom.Deferred, 0, "4.7.0", "STARTTLS")
	if st := srv.Stats(); st.Transactions != 0 {
		t.Errorf("stats %+v, want nothing sent", st)
	}
}

func TestRelayVerifiesCertificate(t *testing.T) {
	srv := smtptest.Start(t, smtptest.WithSTARTTLS(), smtptest.WithAuth("mailroom", relayPassword))
	r := newRelay(t, "smtp", srv, "mailroom", relayPassword)
	r.TLSConfig = nil // the system's roots, which do not know the test's certificate

	res := deliver(t, r, delivery("example.test", "a@example.test"))
	want(t, res[0], mailroom.Deferred, 0, "4.7.0", "certificate")
}

func TestRelayWithoutCredentials(t *testing.T) {
	srv := smtptest.Start(t)
	r := newRelay(t, "smtp", srv, "", "")
	srv.Reply("gone@example.test", 550, "5.1.1", "No such user")

	res := deliver(t, r, delivery("example.test", "a@example.test", "gone@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	want(t, res[1], mailroom.Bounced, 550, "5.1.1", "No such user")
	// The relay offers no STARTTLS, and without credentials none is
	// needed: the session ran in clear, and the results say so.
	for _, r := range res {
		if !r.Unencrypted {
			t.Errorf("%s: not reported unencrypted", r.Recipient)
		}
	}
}

func TestRelayUnreachableDefers(t *testing.T) {
	cfg := RelayConfig{Host: "127.0.0.1", Port: closedPort(t)}
	r := NewRelay(cfg, ehloName)
	t.Cleanup(func() { _ = r.Close() })

	res := deliver(t, r, delivery("example.test", "a@example.test"))
	want(t, res[0], mailroom.Deferred, 0, "4.4.1", "connection refused")
}
