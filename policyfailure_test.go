package mailroom_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// The providers' authentication refusals are policy failures naming the
// missing record; their neighbours (a mailbox that does not exist, a
// throttle, a spam refusal, a 2xx) are not.
func TestClassifyPolicyFailure(t *testing.T) {
	cases := []struct {
		code    int
		reply   string
		records []string // nil: not a policy failure
		says    string
	}{
		{550, "5.7.515 Access denied, sending domain [shop.example] doesn't meet the required authentication level. The sender's domain in the 5322.From address doesn't meet the authentication requirements defined for the sender. To learn more about Microsoft's sender requirements, visit https://go.microsoft.com/fwlink/?linkid=2298136",
			[]string{"dmarc", "spf", "dkim"}, "dmarc record"},
		{550, "5.7.26 This mail has been blocked because the sender is unauthenticated. Gmail requires all senders to authenticate with either SPF or DKIM. Authentication results: DKIM = did not pass SPF [bounces.shop.example] with ip: [192.0.2.25] = did not pass",
			[]string{"spf", "dkim"}, "neither SPF nor DKIM"},
		{550, "5.7.26 Unauthenticated email from shop.example is not accepted due to domain's DMARC policy. Please contact the administrator of shop.example domain if this was a legitimate mail.",
			[]string{"dmarc", "dkim", "spf"}, "DMARC policy"},
		{550, "5.7.27 The sender does not meet basic SPF requirements",
			[]string{"spf"}, "SPF did not pass"},
		{550, "5.7.25 The IP address sending this message does not have a PTR record setup, or the corresponding forward DNS entry does not point to the sending IP.",
			[]string{"ptr"}, "reverse DNS"},
		{421, "4.7.26 Your email has been rate limited because it is unauthenticated. Gmail requires all senders to authenticate with either SPF or DKIM.",
			[]string{"spf", "dkim"}, "deferred"},
		{421, "4.7.27 Your email has been rate limited because SPF authentication didn't pass for this message.",
			[]string{"spf"}, "spf record"},
		{550, "5.7.1 Unauthenticated email from shop.example is not accepted due to domain's DMARC policy.",
			[]string{"dmarc", "dkim", "spf"}, "DMARC policy"},
		// Not policy failures.
		{550, "5.7.1 Message rejected as spam", nil, ""},
		{550, "5.1.1 The email account that you tried to reach does not exist.", nil, ""},
		{421, "4.7.28 Our system has detected an unusual rate of unsolicited mail originating from your IP address.", nil, ""},
		{451, "4.7.500 Server busy. Please try again later", nil, ""},
		{250, "2.0.0 OK 5.7.26", nil, ""},
		// The enhanced code's class must agree with the reply's.
		{421, "5.7.26 unauthenticated", nil, ""},
	}
	for _, c := range cases {
		got, ok := mailroom.ClassifyPolicyFailure(c.code, "", c.reply)
		if ok != (c.records != nil) {
			t.Errorf("%d %s: policy failure %v, want %v", c.code, c.reply, ok, c.records != nil)
			continue
		}
		if !ok {
			continue
		}
		if !slices.Equal(got.Records, c.records) {
			t.Errorf("%d %.40s: records %v, want %v", c.code, c.reply, got.Records, c.records)
		}
		if !strings.Contains(got.Reason, c.says) {
			t.Errorf("%d %.40s: reason %q does not say %q", c.code, c.reply, got.Reason, c.says)
		}
	}
}

// A policy bounce stays "soft" (bounceType has two values), names the
// record in policyFailure and suppresses nothing; a policy deferral keeps its
// reason (the site still slows down) and names the record too; other
// bounces carry no policyFailure.
func TestPolicyFailureInEvents(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	q := &mailroom.QueuedRecipient{
		Recipient: mailroom.Recipient{MessageID: "msg_1", Address: "ann@gmail.example"},
		Message:   &mailroom.MessageSummary{ID: "msg_1", AccountID: "acc_1", From: "a@shop.example"},
		QueuedAt:  now,
	}
	policy := mailroom.RetryPolicy{MinDelay: time.Minute, MaxDelay: time.Hour, Window: 72 * time.Hour}

	a := mailroom.NewAttempt(q, mailroom.RecipientResult{Outcome: mailroom.Bounced, Code: 550,
		Enhanced: "5.7.515", Response: "5.7.515 Access denied, sending domain [shop.example] doesn't meet the required authentication level."}, now, policy, 1)
	if e := a.Event.Email; e.BounceType != "soft" || !strings.Contains(e.PolicyFailure, "dmarc record") || a.Suppress != nil {
		t.Errorf("a 5.7.515 bounce: bounceType %q, policyFailure %q, suppress %v", e.BounceType, e.PolicyFailure, a.Suppress)
	}

	a = mailroom.NewAttempt(q, mailroom.RecipientResult{Outcome: mailroom.Deferred, Code: 421, Enhanced: "4.7.27",
		Response: "4.7.27 Your email has been rate limited because SPF authentication didn't pass for this message.",
		Reason:   mailroom.DeferThrottled}, now, policy, 1)
	if e := a.Event.Email; e.Reason != mailroom.DeferThrottled || !strings.Contains(e.PolicyFailure, "spf record") || e.BounceType != "" {
		t.Errorf("a 4.7.27 deferral: reason %q, policyFailure %q, bounceType %q", e.Reason, e.PolicyFailure, e.BounceType)
	}

	a = mailroom.NewAttempt(q, mailroom.RecipientResult{Outcome: mailroom.Bounced, Code: 550, Enhanced: "5.1.1",
		Response: "5.1.1 The email account that you tried to reach does not exist."}, now, policy, 1)
	if e := a.Event.Email; e.BounceType != "hard" || e.PolicyFailure != "" {
		t.Errorf("a 5.1.1 bounce: bounceType %q, policyFailure %q", e.BounceType, e.PolicyFailure)
	}
}
