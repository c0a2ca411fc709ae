package smtp

import (
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/smtp/smtptest"
)

// startFailingTLSHost runs an MX host for example.test that offers STARTTLS
// but fails every handshake, and a Direct that delivers to it.
func startFailingTLSHost(t *testing.T) (*smtptest.Server, *Direct) {
	t.Helper()
	mx := smtptest.Start(t, smtptest.WithFailingTLS())
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
	return mx, newDirect(t, dnsSrv, mx.Port())
}

// wantUnencrypted checks that the message went to mx in clear and that the
// results say so.
func wantUnencrypted(t *testing.T, mx *smtptest.Server, res []mailroom.RecipientResult, messages int) {
	t.Helper()
	for _, r := range res {
		want(t, r, mailroom.Delivered, 250, "2.0.0", "queued as")
		if !r.Unencrypted {
			t.Errorf("%s: result not marked unencrypted", r.Recipient)
		}
	}
	msgs := mx.Messages()
	if len(msgs) != messages {
		t.Fatalf("server received %d messages, want %d", len(msgs), messages)
	}
	if m := msgs[messages-1]; m.TLS {
		t.Errorf("message to %v received under TLS, want in clear", m.Rcpts)
	}
}

func TestDirectFallsBackToClearTextWhenTLSFails(t *testing.T) {
	mx, d := startFailingTLSHost(t)

	// The first attempt already delivers: the handshake fails, the host
	// is dialled again and the session goes on without STARTTLS.
	res := deliver(t, d, delivery("example.test", "a@example.test", "b@example.test"))
	wantUnencrypted(t, mx, res, 1)
	if st := mx.Stats(); st.Connections != 2 || st.TLSHandshakes != 1 {
		t.Errorf("stats %+v, want one failed handshake, then a second connection", st)
	}
}

func TestDirectRemembersTLSFailure(t *testing.T) {
	mx, d := startFailingTLSHost(t)
	d.IdleTimeout = 20 * time.Millisecond

	deliver(t, d, delivery("example.test", "a@example.test"))
	// Let the pooled session go, so that the next delivery needs a new one.
	mx.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Open == 0 })

	res := deliver(t, d, delivery("example.test", "b@example.test"))
	wantUnencrypted(t, mx, res, 2)
	if st := mx.Stats(); st.Connections != 3 || st.TLSHandshakes != 1 {
		t.Errorf("stats %+v, want the third connection in clear straight away, without a second handshake", st)
	}
}

func TestDirectTriesTLSAgainOnceTheFailureIsForgotten(t *testing.T) {
	mx, d := startFailingTLSHost(t)
	d.IdleTimeout = 20 * time.Millisecond
	now := time.Now()
	d.engine().tlsFailures.now = func() time.Time { return now }

	deliver(t, d, delivery("example.test", "a@example.test"))
	mx.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Open == 0 })
	now = now.Add(tlsFailureMemory)

	res := deliver(t, d, delivery("example.test", "b@example.test"))
	wantUnencrypted(t, mx, res, 2)
	if st := mx.Stats(); st.TLSHandshakes != 2 || st.Connections != 4 {
		t.Errorf("stats %+v, want TLS tried again after %v, and the fallback again", st, tlsFailureMemory)
	}
}

func TestDirectGoesOnInClearWhenSTARTTLSIsRefused(t *testing.T) {
	mx := smtptest.Start(t, smtptest.WithRefusedSTARTTLS())
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
	d := newDirect(t, dnsSrv, mx.Port())

	// A refusal leaves the session usable (RFC 3207 §4): the message goes
	// on it in clear, with no second connection.
	res := deliver(t, d, delivery("example.test", "a@example.test"))
	wantUnencrypted(t, mx, res, 1)
	if st := mx.Stats(); st.Connections != 1 || st.TLSHandshakes != 0 {
		t.Errorf("stats %+v, want one connection and no handshake", st)
	}
}

func TestDirectReportsTLS(t *testing.T) {
	for _, tc := range []struct {
		name        string
		opts        []smtptest.Option
		unencrypted bool
	}{
		{"STARTTLS", []smtptest.Option{smtptest.WithSTARTTLS()}, false},
		{"no STARTTLS offered", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mx := smtptest.Start(t, tc.opts...)
			dnsSrv := dnstest.Start(t)
			publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
			mx.Reply("gone@example.test", 550, "5.1.1", "No such user")
			d := newDirect(t, dnsSrv, mx.Port())

			// Twice: the second runs on the pooled session.
			for range 2 {
				res := deliver(t, d, delivery("example.test", "a@example.test", "gone@example.test"))
				want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
				want(t, res[1], mailroom.Bounced, 550, "5.1.1", "No such user")
				for _, r := range res {
					if r.Unencrypted != tc.unencrypted {
						t.Errorf("%s: Unencrypted %v, want %v", r.Recipient, r.Unencrypted, tc.unencrypted)
					}
				}
			}
			for _, m := range mx.Messages() {
				if m.TLS == tc.unencrypted {
					t.Errorf("message received with TLS %v, want %v", m.TLS, !tc.unencrypted)
				}
			}
			if st := mx.Stats(); st.Connections != 1 {
				t.Errorf("stats %+v, want one session reused", st)
			}
		})
	}
}

func TestDirectNoSessionIsNotUnencrypted(t *testing.T) {
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
	d := newDirect(t, dnsSrv, closedPort(t))

	res := deliver(t, d, delivery("example.test", "a@example.test"))
	want(t, res[0], mailroom.Deferred, 0, "4.4.1", "connection refused")
	if res[0].Unencrypted {
		t.Error("a host that never answered is reported unencrypted")
	}
}

func TestRelayNeverFallsBackToClearText(t *testing.T) {
	for _, tc := range []struct {
		name       string
		user, pass string
	}{
		// TLS is required: AUTH never goes in clear.
		{"with credentials", "mailroom", relayPassword},
		// TLS is not required, but a verified smarthost whose TLS fails
		// may be someone in the middle.
		{"without credentials", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := []smtptest.Option{smtptest.WithFailingTLS()}
			if tc.user != "" {
				opts = append(opts, smtptest.WithAuth(tc.user, tc.pass))
			}
			srv := smtptest.Start(t, opts...)
			r := newRelay(t, "smtp", srv, tc.user, tc.pass)

			for attempt := 1; attempt <= 2; attempt++ {
				res := deliver(t, r, delivery("example.test", "a@example.test"))
				want(t, res[0], mailroom.Deferred, 0, "4.7.0", "TLS with 127.0.0.1")
				if res[0].Unencrypted {
					t.Error("a deferral without a session is reported unencrypted")
				}
				// Each attempt tries TLS again, on one connection, and
				// nothing else.
				if st := srv.Stats(); st.Connections != attempt || st.TLSHandshakes != attempt || st.Transactions != 0 {
					t.Errorf("attempt %d: stats %+v, want %d connections and handshakes, no transaction", attempt, st, attempt)
				}
			}
		})
	}
}
