package smtp

import (
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/smtp/smtptest"
	"github.com/mailroom/mailroom/tlscert/tlstest"
)

// An enforced MTA-STS policy delivers to its MX host over TLS whose
// certificate verifies, and the result says so.
func TestEnforcedMTASTSDeliversOverVerifiedTLS(t *testing.T) {
	w := newTLSWorld(t)
	mx := w.receiver(t, smtptest.WithCertificate(w.ca.Issue(t, mxName)))
	sts := enforcePolicy(mailroom.MTASTSEnforce, mxName)
	d := w.direct(t, mx.Port(), sts)

	res := deliver(t, d, delivery("example.test", "a@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	wantTLS(t, res[0], true, mailroom.TLSPolicyMTASTS)
	if msgs := mx.Messages(); len(msgs) != 1 || !msgs[0].TLS {
		t.Fatalf("received %+v, want one message under TLS", msgs)
	}
	r := w.observer.only(t)
	wantObserved(t, r, mailroom.TLSPolicyMTASTS, mailroom.TLSVerified, "", mxName)
	if r.STS != sts || r.ReceivingIP != "127.0.0.1" || r.SendingIP != "127.0.0.1" {
		t.Errorf("observed %+v, want the policy and both addresses", r)
	}
}

// Under an enforced policy a certificate that does not verify for the MX
// host refuses the host: nothing of the message is sent, and the
// recipient waits with reason tls_required; the observer is told the
// RFC 8460 result type.
func TestEnforcedMTASTSRefusesACertificateThatDoesNotVerify(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cert    func(t *testing.T, ca *tlstest.CA) smtptest.Option
		failure mailroom.TLSFailure
		text    string
	}{
		{"for another name", func(t *testing.T, ca *tlstest.CA) smtptest.Option {
			return smtptest.WithCertificate(ca.Issue(t, "mx.other.test"))
		}, mailroom.TLSFailCertificateHostMismatch, mxName + ": certificate not valid for " + mxName},
		{"expired", func(t *testing.T, ca *tlstest.CA) smtptest.Option {
			now := time.Now()
			return smtptest.WithCertificate(ca.IssueValid(t, now.AddDate(0, -2, 0), now.AddDate(0, -1, 0), mxName))
		}, mailroom.TLSFailCertificateExpired, mxName + ": certificate expired"},
		{"from another authority", func(t *testing.T, _ *tlstest.CA) smtptest.Option {
			return smtptest.WithCertificate(tlstest.NewCA(t).Issue(t, mxName))
		}, mailroom.TLSFailCertificateNotTrusted, mxName + ": certificate not trusted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newTLSWorld(t)
			mx := w.receiver(t, tc.cert(t, w.ca))
			d := w.direct(t, mx.Port(), enforcePolicy(mailroom.MTASTSEnforce, mxName))

			res := deliver(t, d, delivery("example.test", "a@example.test", "b@example.test"))
			wantTLSRequired(t, res, tc.text)
			wantNothingSent(t, mx)
			if st := mx.Stats(); st.TLSHandshakes != 1 || st.Connections != 1 {
				t.Errorf("stats %+v, want one connection, one handshake, and no plaintext retry", st)
			}
			wantObserved(t, w.observer.only(t), mailroom.TLSPolicyMTASTS, mailroom.TLSRefused, tc.failure, mxName)
		})
	}
}

// An enforced policy's MX patterns decide which hosts are used at all: a
// host outside them is never dialled, one inside takes the mail, and with
// none inside the recipients wait.
func TestEnforcedMTASTSNeverDialsAnMXOutsideThePolicy(t *testing.T) {
	w := newTLSWorld(t)
	outside := startAt(t, "127.0.0.2", 0, smtptest.WithCertificate(w.ca.Issue(t, "backup.example.test")))
	inside := startAt(t, "127.0.0.3", outside.Port(), smtptest.WithCertificate(w.ca.Issue(t, mxName)))
	publishMX(w.dns, "example.test", 10, "backup.example.test", "127.0.0.2")
	publishMX(w.dns, "example.test", 20, mxName, "127.0.0.3")
	d := w.direct(t, outside.Port(), enforcePolicy(mailroom.MTASTSEnforce, mxName))

	res := deliver(t, d, delivery("example.test", "a@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	if res[0].MX != mxName || len(inside.Messages()) != 1 {
		t.Errorf("delivered through %s, want %s", res[0].MX, mxName)
	}
	if st := outside.Stats(); st.Connections != 0 {
		t.Errorf("the host outside the policy had %d connections, want none", st.Connections)
	}
	all := w.observer.all()
	if len(all) != 2 {
		t.Fatalf("observed %+v, want the host outside refused, then the one inside verified", all)
	}
	wantObserved(t, all[0], mailroom.TLSPolicyMTASTS, mailroom.TLSRefused, mailroom.TLSFailValidation, "backup.example.test")
	wantObserved(t, all[1], mailroom.TLSPolicyMTASTS, mailroom.TLSVerified, "", mxName)

	// A domain whose every MX host is outside its policy waits, and
	// nothing is dialled.
	w.dns.SetMX("backup-only.test", 10, "backup.example.test")
	res = deliver(t, d, delivery("backup-only.test", "b@backup-only.test"))
	wantTLSRequired(t, res, "backup.example.test: not an MX host of the MTA-STS policy")
	if st := outside.Stats(); st.Connections != 0 {
		t.Errorf("the host outside the policy had %d connections, want none", st.Connections)
	}
}

// A policy in testing mode changes nothing for the mail: delivered over
// the TLS there is, the failure told to the observer.
func TestTestingMTASTSDeliversAndReportsTheFailure(t *testing.T) {
	w := newTLSWorld(t)
	mx := w.receiver(t, smtptest.WithCertificate(w.ca.Issue(t, "mx.other.test")))
	d := w.direct(t, mx.Port(), enforcePolicy(mailroom.MTASTSTesting, mxName))

	res := deliver(t, d, delivery("example.test", "a@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	wantTLS(t, res[0], false, mailroom.TLSPolicyMTASTS)
	r := w.observer.only(t)
	wantObserved(t, r, mailroom.TLSPolicyMTASTS, mailroom.TLSUnverified, mailroom.TLSFailCertificateHostMismatch, mxName)
	if r.STS == nil || r.STS.Mode != mailroom.MTASTSTesting {
		t.Errorf("observed STS %+v, want the testing policy", r.STS)
	}
}

// A sending domain whose tls is "enforced" never sends to a host without
// STARTTLS.
func TestEnforcedDomainDefersToAHostWithoutSTARTTLS(t *testing.T) {
	w := newTLSWorld(t)
	mx := w.receiver(t)
	d := w.direct(t, mx.Port(), nil)
	del := delivery("example.test", "a@example.test")
	del.TLSMode = mailroom.TLSEnforced

	res := deliver(t, d, del)
	wantTLSRequired(t, res, mxName+": does not offer STARTTLS")
	wantNothingSent(t, mx)
	r := w.observer.only(t)
	wantObserved(t, r, mailroom.TLSPolicyEnforced, mailroom.TLSRefused, mailroom.TLSFailStartTLSNotSupported, mxName)
	if r.STS != nil {
		t.Errorf("observed STS %+v, want none", r.STS)
	}
}

// Opportunistic mail to a host without STARTTLS goes in clear, as before;
// TLS-RPT still hears of the session, without a policy.
func TestOpportunisticDeliversInClearWithoutSTARTTLS(t *testing.T) {
	w := newTLSWorld(t)
	mx := w.receiver(t)
	d := w.direct(t, mx.Port(), nil)

	res := deliver(t, d, delivery("example.test", "a@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	if res[0].TLS != nil || !res[0].Unencrypted {
		t.Errorf("TLS %+v, unencrypted %v; want none, in clear", res[0].TLS, res[0].Unencrypted)
	}
	r := w.observer.only(t)
	wantObserved(t, r, mailroom.TLSPolicyOpportunistic, mailroom.TLSPlaintext, mailroom.TLSFailStartTLSNotSupported, mxName)
	if r.STS != nil {
		t.Errorf("observed STS %+v, want none (no-policy-found)", r.STS)
	}
}

// Opportunistic mail to a host whose handshake fails is retried in clear
// on a new connection and delivered.
func TestOpportunisticRetriesInClearAfterAFailedHandshake(t *testing.T) {
	w := newTLSWorld(t)
	mx := w.receiver(t, smtptest.WithFailingTLS())
	d := w.direct(t, mx.Port(), nil)

	res := deliver(t, d, delivery("example.test", "a@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	if res[0].TLS != nil || !res[0].Unencrypted {
		t.Errorf("TLS %+v, unencrypted %v; want none, in clear", res[0].TLS, res[0].Unencrypted)
	}
	if st := mx.Stats(); st.Connections != 2 || st.TLSHandshakes != 1 {
		t.Errorf("stats %+v, want a failed handshake and a second connection", st)
	}
	wantObserved(t, w.observer.only(t), mailroom.TLSPolicyOpportunistic, mailroom.TLSPlaintext, mailroom.TLSFailValidation, mxName)
}

// Where verified TLS is required, a failed handshake is never followed by
// a session in clear, neither on a new connection nor on a pooled session
// in clear left by opportunistic mail, nor because the failure is
// remembered.
func TestEnforcedNeverRetriesInClearAfterAFailedHandshake(t *testing.T) {
	w := newTLSWorld(t)
	mx := w.receiver(t, smtptest.WithFailingTLS())
	d := w.direct(t, mx.Port(), nil)

	// Opportunistic mail first: delivered in clear, its session pooled,
	// the failure remembered.
	res := deliver(t, d, delivery("example.test", "a@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")

	del := delivery("example.test", "b@example.test")
	del.TLSMode = mailroom.TLSEnforced
	res = deliver(t, d, del)
	wantTLSRequired(t, res, mxName+": TLS failed")
	if st := mx.Stats(); st.Connections != 3 || st.TLSHandshakes != 2 || st.MailCommands != 1 || st.Messages != 1 {
		t.Errorf("stats %+v, want a new connection whose handshake failed, and no MAIL on it", st)
	}
	all := w.observer.all()
	if len(all) != 2 {
		t.Fatalf("observed %+v, want two results", all)
	}
	wantObserved(t, all[1], mailroom.TLSPolicyEnforced, mailroom.TLSRefused, mailroom.TLSFailValidation, mxName)
}

// An unverified pooled session is not used for mail that needs verified
// TLS, and is left in the pool, not closed, for mail that does not.
func TestUnverifiedPooledSessionIsNotReusedForEnforcedMail(t *testing.T) {
	w := newTLSWorld(t)
	mx := w.receiver(t, smtptest.WithCertificate(w.ca.Issue(t, "mx.other.test")))
	d := w.direct(t, mx.Port(), nil)

	res := deliver(t, d, delivery("example.test", "a@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	wantTLS(t, res[0], false, mailroom.TLSPolicyOpportunistic)

	del := delivery("example.test", "b@example.test")
	del.TLSMode = mailroom.TLSEnforced
	wantTLSRequired(t, deliver(t, d, del), "certificate not valid for "+mxName)

	res = deliver(t, d, delivery("example.test", "c@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	if st := mx.Stats(); st.Connections != 2 || st.MailCommands != 2 || st.Messages != 2 {
		t.Errorf("stats %+v, want the pooled session to carry the first and third message, the second refused on its own connection", st)
	}
}

// REQUIRETLS (RFC 8689) to a host that does not offer it bounces 5.7.30:
// no path qualifies, and none will by waiting.
func TestRequireTLSBouncesWhenTheHostLacksREQUIRETLS(t *testing.T) {
	w := newTLSWorld(t)
	mx := w.receiver(t, smtptest.WithCertificate(w.ca.Issue(t, mxName)))
	d := w.direct(t, mx.Port(), enforcePolicy(mailroom.MTASTSEnforce, mxName))
	del := delivery("example.test", "a@example.test", "b@example.test")
	del.RequireTLS = true

	res := deliver(t, d, del)
	wantRequireTLSBounce(t, res, mxName+": does not offer REQUIRETLS")
	wantNothingSent(t, mx)
	wantObserved(t, w.observer.only(t), mailroom.TLSPolicyRequireTLS, mailroom.TLSRefused, "", mxName)
}

// REQUIRETLS to an MX host the enforced MTA-STS policy validates, over
// verified TLS, to a host that offers REQUIRETLS: delivered, with
// REQUIRETLS on MAIL FROM.
func TestRequireTLSDeliversToAHostThatOffersIt(t *testing.T) {
	w := newTLSWorld(t)
	mx := w.receiver(t, smtptest.WithCertificate(w.ca.Issue(t, mxName)), smtptest.WithREQUIRETLS())
	d := w.direct(t, mx.Port(), enforcePolicy(mailroom.MTASTSEnforce, mxName))
	del := delivery("example.test", "a@example.test")
	del.RequireTLS = true

	res := deliver(t, d, del)
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	wantTLS(t, res[0], true, mailroom.TLSPolicyRequireTLS)
	msgs := mx.Messages()
	if len(msgs) != 1 || !msgs[0].RequireTLS || !msgs[0].TLS {
		t.Fatalf("received %+v, want one message under TLS whose MAIL FROM had REQUIRETLS", msgs)
	}

	// Mail that did not ask for it does not carry it.
	deliver(t, d, delivery("example.test", "b@example.test"))
	if msgs := mx.Messages(); len(msgs) != 2 || msgs[1].RequireTLS {
		t.Errorf("received %+v, want the second without REQUIRETLS", msgs)
	}
}

// REQUIRETLS to a domain without an enforced MTA-STS policy has no
// validated MX: bounced at once, nothing dialled. A policy that could not
// be fetched defers instead: it may be had next time.
func TestRequireTLSWithoutMTASTSBouncesWithoutConnecting(t *testing.T) {
	w := newTLSWorld(t)
	mx := w.receiver(t, smtptest.WithCertificate(w.ca.Issue(t, mxName)), smtptest.WithREQUIRETLS())
	d := w.direct(t, mx.Port(), nil)
	del := delivery("example.test", "a@example.test")
	del.RequireTLS = true

	wantRequireTLSBounce(t, deliver(t, d, del), "no MTA-STS policy in enforce mode")
	if st := mx.Stats(); st.Connections != 0 {
		t.Errorf("stats %+v, want no connection", st)
	}
	if all := w.observer.all(); len(all) != 0 {
		t.Errorf("observed %+v, want nothing: no session, no policy", all)
	}

	failing := &fixedPolicies{lookup: mailroom.MTASTSLookup{Failure: mailroom.TLSFailSTSPolicyFetch, Detail: "connection refused"}}
	d.MTASTS = failing
	del.FirstAttempt = false
	wantTLSRequired(t, deliver(t, d, del), "no MTA-STS policy in enforce mode")
	if st := mx.Stats(); st.Connections != 0 {
		t.Errorf("stats %+v, want no connection", st)
	}
	r := w.observer.only(t)
	if r.Failure != mailroom.TLSFailSTSPolicyFetch || r.Detail != "connection refused" || r.Domain != "example.test" || r.MX != "" {
		t.Errorf("observed %+v, want the policy fetch failure", r)
	}
	if len(failing.afterFailure) != 1 || !failing.afterFailure[0] {
		t.Errorf("lookups afterFailure %v, want one after a failure", failing.afterFailure)
	}
}

// A testing policy whose MX patterns do not name the host: delivered over
// verified TLS, the mismatch reported.
func TestTestingMTASTSReportsAnMXOutsideThePolicy(t *testing.T) {
	w := newTLSWorld(t)
	mx := w.receiver(t, smtptest.WithCertificate(w.ca.Issue(t, mxName)))
	d := w.direct(t, mx.Port(), enforcePolicy(mailroom.MTASTSTesting, "mx.elsewhere.test"))

	res := deliver(t, d, delivery("example.test", "a@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	wantTLS(t, res[0], true, mailroom.TLSPolicyMTASTS)
	wantObserved(t, w.observer.only(t), mailroom.TLSPolicyMTASTS, mailroom.TLSVerified, mailroom.TLSFailValidation, mxName)
}

// REQUIRETLS where one host lacks it and another does not answer: the
// recipients wait (the host that did not answer may qualify), naming both.
func TestRequireTLSDefersWhenAHostMayYetQualify(t *testing.T) {
	w := newTLSWorld(t)
	mx := startAt(t, "127.0.0.2", 0, smtptest.WithCertificate(w.ca.Issue(t, mxName)))
	publishMX(w.dns, "example.test", 10, mxName, "127.0.0.2")
	publishMX(w.dns, "example.test", 20, "down.example.test", "127.0.0.3") // nothing listens there
	d := w.direct(t, mx.Port(), enforcePolicy(mailroom.MTASTSEnforce, "*.example.test"))
	del := delivery("example.test", "a@example.test")
	del.RequireTLS = true

	res := deliver(t, d, del)
	wantTLSRequired(t, res, mxName+": does not offer REQUIRETLS")
	if !strings.Contains(res[0].Response, "down.example.test") {
		t.Errorf("response %q does not name the host that did not answer", res[0].Response)
	}
	wantNothingSent(t, mx)
}
