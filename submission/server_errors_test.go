package submission_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/submission"
)

func unavailable() error { return mailroom.Unavailable(errors.New("database is locked")) }

// TestSubmitErrorsMapToReplies: each error of Submit becomes the reply of
// docs/api.md "SMTP submission", never a 250, and the connection goes on.
func TestSubmitErrorsMapToReplies(t *testing.T) {
	notVerified := mailroom.Errorf(mailroom.ECodeDomainNotVerified,
		"The domain unverified.example of the From header is not a verified domain of the account.")
	invalid := &mailroom.Error{
		Code:    mailroom.ECodeValidation,
		Message: "The message is invalid.",
		Details: []mailroom.FieldError{{Field: "rcpt", Message: "\"bad\r\n\" is not an address"}},
	}
	cases := []struct {
		name     string
		err      error
		panics   bool
		code     int
		enh      gosmtp.EnhancedCode
		text     string // a part of the reply's text
		outcome  string
		errorLog bool
	}{
		{name: "domain not verified", err: notVerified, code: 550, enh: gosmtp.EnhancedCode{5, 7, 1},
			text: "unverified.example", outcome: submission.OutcomeRejected},
		{name: "validation", err: invalid, code: 550, enh: gosmtp.EnhancedCode{5, 7, 1},
			text: `The message is invalid. (rcpt: "bad  " is not an address)`, outcome: submission.OutcomeRejected},
		{name: "idempotency key reused", err: mailroom.Errorf(mailroom.ECodeIdempotencyKeyReused, "The Idempotency-Key was used for another message."),
			code: 550, enh: gosmtp.EnhancedCode{5, 7, 1}, text: "Idempotency-Key", outcome: submission.OutcomeRejected},
		{name: "rate limited", err: mailroom.Errorf(mailroom.ECodeRateLimited, "Too many requests."),
			code: 451, enh: gosmtp.EnhancedCode{4, 7, 0}, text: "rate limited", outcome: submission.OutcomeRateLimited},
		{name: "payload too large", err: mailroom.Errorf(mailroom.ECodePayloadTooLarge, "The message is too large."),
			code: 552, enh: gosmtp.EnhancedCode{5, 3, 4}, text: "too large", outcome: submission.OutcomeTooLarge},
		{name: "unavailable", err: unavailable(), code: 421, enh: gosmtp.EnhancedCode{4, 3, 0},
			text: "try again later", outcome: submission.OutcomeUnavailable},
		{name: "deadline", err: fmt.Errorf("committing: %w", context.DeadlineExceeded), code: 421, enh: gosmtp.EnhancedCode{4, 3, 0},
			outcome: submission.OutcomeUnavailable},
		{name: "revoked meanwhile", err: mailroom.Errorf(mailroom.ECodeAPIKeyRevoked, "Revoked."), code: 535, enh: gosmtp.EnhancedCode{5, 7, 8},
			outcome: submission.OutcomeKeyRejected},
		{name: "internal", err: errors.New("sql: no rows in result set"), code: 451, enh: gosmtp.EnhancedCode{4, 3, 0},
			outcome: submission.OutcomeFailed, errorLog: true},
		{name: "panic", panics: true, code: 451, enh: gosmtp.EnhancedCode{4, 3, 0}, outcome: submission.OutcomeFailed, errorLog: true},
	}
	ts := startServer(t)
	c := ts.dialTLS(t, goodKey)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts.h.set(func(h *fakeHandler) { h.submitErr, h.submitPanic = tc.err, tc.panics })
			before := ts.outcome(tc.outcome)
			text, err := send(c, "app@example.com", []string{"ann@example.net"}, message(tc.name, "x\r\n"))
			e := wantReply(t, fmt.Sprintf("reply %q", text), err, tc.code, tc.enh)
			if !strings.Contains(e.Message, tc.text) {
				t.Errorf("reply text %q, want %q in it", e.Message, tc.text)
			}
			if strings.Contains(e.Message, "sql") || strings.Contains(e.Message, "database") || strings.Contains(e.Message, "\n") {
				t.Errorf("reply text %q leaks internals", e.Message)
			}
			if n := ts.outcome(tc.outcome) - before; n != 1 {
				t.Errorf("%s counted %d times", tc.outcome, n)
			}
			if tc.errorLog && !strings.Contains(ts.log.String(), "level=ERROR") {
				t.Error("not logged as an error")
			}
			// The connection goes on.
			if err := c.Noop(); err != nil {
				t.Fatalf("NOOP after the refusal: %v", err)
			}
		})
	}
	ts.h.set(func(h *fakeHandler) { h.submitErr, h.submitPanic = nil, false })
	if text, err := send(c, "app@example.com", []string{"ann@example.net"}, message("after", "x\r\n")); err != nil || text != "2.0.0 queued as msg_1" {
		t.Fatalf("after the errors: %q %v", text, err)
	}
}

// TestSubmitThatHangsIsCutByTheHandlerTimeout: 421, never a 250.
func TestSubmitThatHangsIsCutByTheHandlerTimeout(t *testing.T) {
	ts := startServer(t, func(s *submission.Server) { s.HandlerTimeout = 200 * time.Millisecond })
	ts.h.set(func(h *fakeHandler) { h.block = make(chan struct{}) })
	c := ts.dialTLS(t, goodKey)
	start := time.Now()
	_, err := send(c, "app@example.com", []string{"ann@example.net"}, message("hang", "x\r\n"))
	wantReply(t, "a Submit that hangs", err, 421, gosmtp.EnhancedCode{4, 3, 0})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	if err := c.Noop(); err != nil {
		t.Fatalf("NOOP after: %v", err)
	}
}
