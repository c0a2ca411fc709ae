package inbound

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/smtpserver"
)

// receive is Data for a transaction with recipients at receiving domains:
// the message is read whole (bounded by MaxBytes, --receive-max-size),
// handed once to the Receiver with those recipients, and then, when the
// transaction also had bounce addresses, read as a report for them. It is
// answered 250 only once the Receiver stored it: 552 when it is too large,
// 451 when it could not be stored (the sender tries again; a duplicate
// after a lost 250 is the sender's, as with any MX), and never half-stored.
func (x *session) receive(d *smtpserver.Data[struct{}], receiving []string) error {
	s, base := x.s, x.Server
	tx, m := d.Tx, d.Message
	var buf bytes.Buffer
	_, _ = io.Copy(&buf, m)
	entry := []any{"remote", x.Remote, "helo", tx.Helo, "mail_from", tx.From,
		"rcpts", tx.Rcpts, "bytes", m.Bytes(), "tls", tx.TLS}
	info := func(outcome string, more ...any) {
		args := slices.Concat(entry, []any{"kind", "received", "outcome", outcome, "took", time.Since(d.Start).Round(time.Millisecond)})
		base.Log().Info("inbound message", append(args, more...)...)
	}
	if m.TooLarge() {
		base.Observe(OutcomeTooLarge)
		info(OutcomeTooLarge)
		return smtpserver.ErrTooLarge(m.Max)
	}
	if err := m.Failure(); err != nil {
		base.Observe(OutcomeAborted)
		info(OutcomeAborted, "err", err)
		return x.CutOff(d)
	}
	data := buf.Bytes()

	ctx, cancel := base.HandlerContext()
	err := x.callReceiver(ctx, mailroom.InboundMessage{
		RemoteIP: x.Remote, Helo: tx.Helo, MailFrom: tx.From,
		Recipients: receiving, Data: data, ReceivedAt: d.Start, TLS: tx.TLS,
	})
	cancel()
	if err != nil {
		base.Observe(OutcomeUnavailable)
		info(OutcomeUnavailable, "err", err)
		return errUnavailable
	}
	base.Observe(OutcomeReceived)
	info(OutcomeReceived)

	// The transaction's bounce addresses, if any, get the message as a
	// report, as they would alone.
	var bounces []string
	for _, rcpt := range tx.Rcpts {
		if !slices.Contains(receiving, rcpt) {
			bounces = append(bounces, rcpt)
		}
	}
	if len(bounces) == 0 {
		return nil
	}
	report, perr := x.parse(bytes.NewReader(data))
	if perr != nil || report == nil {
		base.Observe(OutcomeUnparsed)
		return nil
	}
	for _, rcpt := range bounces {
		ctx, cancel := base.HandlerContext()
		err := s.Handler.Apply(ctx, rcpt, report)
		cancel()
		switch {
		case err == nil:
			base.Observe(OutcomeApplied)
		case smtpserver.Temporary(err):
			base.Observe(OutcomeUnavailable)
			return errUnavailable
		default:
			base.Observe(OutcomeFailed)
			base.Log().Error("inbound: applying a report failed; the report is dropped",
				"remote", x.Remote, "rcpt", rcpt, "kind", string(report.Kind), "err", err)
		}
	}
	return nil
}

// callReceiver hands the message to the Receiver, turning a panic into an
// error (answered 451): nothing that arrives may take the listener down.
// Any error is a 451, not only storage's: what is not stored is not
// acknowledged.
func (x *session) callReceiver(ctx context.Context, in mailroom.InboundMessage) (err error) {
	defer func() {
		if v := recover(); v != nil {
			x.Server.Log().Error("inbound: the receiver panicked; the message is answered 451",
				"remote", x.Remote, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			err = errors.New("receiver panicked")
		}
	}()
	return x.s.Receiver.Receive(ctx, in)
}
