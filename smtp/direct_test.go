package smtp

import (
	"bytes"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/smtp/smtptest"
)

func TestDirectSendsOneTransactionPerDomain(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []smtptest.Option
	}{
		{"pipelining", nil},
		{"without pipelining", []smtptest.Option{smtptest.WithoutPipelining()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mx := smtptest.Start(t, tc.opts...)
			dnsSrv := dnstest.Start(t)
			publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
			d := newDirect(t, dnsSrv, mx.Port())

			del := delivery("example.test", "ann@example.test", "bob@example.test", "cat@example.test")
			res := deliver(t, d, del)
			for _, r := range res {
				want(t, r, mailroom.Delivered, 250, "2.0.0", "queued as")
				if r.MX != "mx.example.test" {
					t.Errorf("%s: MX %q, want mx.example.test", r.Recipient, r.MX)
				}
			}

			msgs := mx.Messages()
			if len(msgs) != 1 {
				t.Fatalf("server received %d messages, want one transaction", len(msgs))
			}
			got := msgs[0]
			if !bytes.Equal(got.Data, del.Data) {
				t.Errorf("received data differs from what was sent:\n got %q\nwant %q", got.Data, del.Data)
			}
			if got.MailFrom != del.MailFrom {
				t.Errorf("MAIL FROM %q, want %q", got.MailFrom, del.MailFrom)
			}
			if len(got.Rcpts) != 3 || got.Rcpts[0] != "ann@example.test" || got.Rcpts[2] != "cat@example.test" {
				t.Errorf("RCPTs %q, want the three recipients in order", got.Rcpts)
			}
			if got.Helo != ehloName {
				t.Errorf("EHLO %q, want %q", got.Helo, ehloName)
			}
			if st := mx.Stats(); st.Transactions != 1 || st.Connections != 1 {
				t.Errorf("stats %+v, want one connection and one transaction", st)
			}
		})
	}
}

func TestDirectClassifiesEachRecipient(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []smtptest.Option
	}{
		{"pipelining", nil},
		{"without pipelining", []smtptest.Option{smtptest.WithoutPipelining()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mx := smtptest.Start(t, tc.opts...)
			dnsSrv := dnstest.Start(t)
			publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
			mx.Reply("busy@example.test", 450, "4.2.1", "Mailbox busy, try later")
			mx.Reply("gone@example.test", 550, "5.1.1", "No such user here")
			d := newDirect(t, dnsSrv, mx.Port())

			res := deliver(t, d, delivery("example.test", "ok@example.test", "busy@example.test", "gone@example.test"))
			want(t, res[0], mailroom.Delivered, 250, "2.0.0", "250 2.0.0 OK: queued as")
			want(t, res[1], mailroom.Deferred, 450, "4.2.1", "450 4.2.1 Mailbox busy, try later")
			want(t, res[2], mailroom.Bounced, 550, "5.1.1", "550 5.1.1 No such user here")

			msgs := mx.Messages()
			if len(msgs) != 1 || len(msgs[0].Rcpts) != 1 || msgs[0].Rcpts[0] != "ok@example.test" {
				t.Fatalf("server received %+v, want one message for ok@ alone", msgs)
			}
		})
	}
}

func TestDirectAllRecipientsRefusedSendsNoData(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
	mx.Reply("a@example.test", 550, "5.1.1", "No such user")
	mx.Reply("b@example.test", 452, "4.5.3", "Too many recipients")
	d := newDirect(t, dnsSrv, mx.Port())

	res := deliver(t, d, delivery("example.test", "a@example.test", "b@example.test"))
	want(t, res[0], mailroom.Bounced, 550, "5.1.1", "No such user")
	want(t, res[1], mailroom.Deferred, 452, "4.5.3", "Too many recipients")
	if n := len(mx.Messages()); n != 0 {
		t.Fatalf("server received %d messages, want none", n)
	}
	// The session stayed usable for the next message.
	res = deliver(t, d, delivery("example.test", "c@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	if st := mx.Stats(); st.Connections != 1 {
		t.Errorf("stats %+v, want the session reused", st)
	}
}

func TestDirectDataReplySettlesAcceptedRecipients(t *testing.T) {
	for _, tc := range []struct {
		name     string
		code     int
		enhanced string
		outcome  mailroom.Outcome
	}{
		{"451 defers", 451, "4.3.0", mailroom.Deferred},
		{"554 bounces", 554, "5.6.0", mailroom.Bounced},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mx := smtptest.Start(t)
			dnsSrv := dnstest.Start(t)
			publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
			mx.DataReply(tc.code, tc.enhanced, "Message refused by content filter")
			mx.Reply("gone@example.test", 550, "5.1.1", "No such user")
			d := newDirect(t, dnsSrv, mx.Port())

			res := deliver(t, d, delivery("example.test", "a@example.test", "b@example.test", "gone@example.test"))
			want(t, res[0], tc.outcome, tc.code, tc.enhanced, "Message refused by content filter")
			want(t, res[1], tc.outcome, tc.code, tc.enhanced, "Message refused by content filter")
			// A recipient refused at RCPT keeps its own reply.
			want(t, res[2], mailroom.Bounced, 550, "5.1.1", "No such user")
			if n := len(mx.Messages()); n != 0 {
				t.Fatalf("server recorded %d messages, want none", n)
			}
		})
	}
}

func TestDirectDroppedConnectionDefers(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
	mx.DropDuringData(1)
	d := newDirect(t, dnsSrv, mx.Port())

	res := deliver(t, d, delivery("example.test", "a@example.test", "b@example.test"))
	for _, r := range res {
		want(t, r, mailroom.Deferred, 0, "4.4.2", "mx.example.test")
	}
	if n := len(mx.Messages()); n != 0 {
		t.Fatalf("server recorded %d messages, want none", n)
	}

	// The retry goes through on a new connection.
	res = deliver(t, d, delivery("example.test", "a@example.test", "b@example.test"))
	for _, r := range res {
		want(t, r, mailroom.Delivered, 250, "2.0.0", "queued as")
	}
	if st := mx.Stats(); st.Connections != 2 {
		t.Errorf("stats %+v, want a second connection after the drop", st)
	}
}

func TestDirectDeferredRecipientDeliversOnRetry(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
	mx.ReplyOnce("grey@example.test", 450, "4.7.1", "Greylisted, come back later")
	d := newDirect(t, dnsSrv, mx.Port())

	res := deliver(t, d, delivery("example.test", "grey@example.test"))
	want(t, res[0], mailroom.Deferred, 450, "4.7.1", "Greylisted")
	res = deliver(t, d, delivery("example.test", "grey@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	if n := len(mx.Messages()); n != 1 {
		t.Fatalf("server received %d messages, want 1", n)
	}
}

func TestDirectUsesSTARTTLS(t *testing.T) {
	mx := smtptest.Start(t, smtptest.WithSTARTTLS())
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
	d := newDirect(t, dnsSrv, mx.Port())

	res := deliver(t, d, delivery("example.test", "a@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	msgs := mx.Messages()
	if len(msgs) != 1 || !msgs[0].TLS {
		t.Fatalf("received %+v, want one message over TLS", msgs)
	}
	if msgs[0].Helo != ehloName {
		t.Errorf("EHLO after STARTTLS %q, want %q", msgs[0].Helo, ehloName)
	}
}

func TestDirectRefusesMessageOverAnnouncedSize(t *testing.T) {
	mx := smtptest.Start(t, smtptest.WithMaxMessageBytes(64))
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
	d := newDirect(t, dnsSrv, mx.Port())

	res := deliver(t, d, delivery("example.test", "a@example.test"))
	want(t, res[0], mailroom.Bounced, 552, "5.3.4", "64-byte maximum")
	if st := mx.Stats(); st.Transactions != 0 {
		t.Errorf("stats %+v, want no transaction for a message over SIZE", st)
	}
}
