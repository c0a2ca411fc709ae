package inbound

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/smtpserver"
)

// Replies of the session. go-smtp writes an *SMTPError's code and text as
// they are; any other error would reach the client as Go text.
var (
	// RFC 5321 §4.2.2 and RFC 3463 §3.2 (5.1.1, bad destination mailbox).
	errNoSuchUser = smtpserver.Reply(550, gosmtp.EnhancedCode{5, 1, 1}, "No such user here (this server takes mail for bounce addresses only)")
	// With a Receiver: neither a bounce address nor one of a receiving
	// domain (never a relay).
	errNoSuchUserReceiving = smtpserver.Reply(550, gosmtp.EnhancedCode{5, 1, 1}, "No such user here (this server takes mail for its bounce addresses and receiving domains only, and relays none)")
	// 4.3.0: a temporary failure of the receiving system (RFC 3463 §3.5).
	errRcptTemporary = smtpserver.ServiceFailure(451, gosmtp.EnhancedCode{4, 3, 0}, "Temporary failure looking up the recipient, try again later")
	errUnavailable   = smtpserver.ServiceFailure(451, gosmtp.EnhancedCode{4, 3, 0}, "Temporary failure processing the message, try again later")
)

// backend makes a session per client greeting.
type backend struct{ s *Server }

func (b backend) NewSession(c *gosmtp.Conn) (gosmtp.Session, error) {
	return &session{
		Session: smtpserver.Session[struct{}]{Server: &b.s.base, Conn: c, Remote: c.Conn().RemoteAddr().String()},
		s:       b.s,
	}, nil
}

// session is one client's transaction; the skeleton's Session holds it,
// and Reset and Logout. It implements no AuthSession: an MX offers no
// AUTH.
type session struct {
	smtpserver.Session[struct{}]
	s *Server
	// receiving are the transaction's recipients the Receiver took (at
	// receiving domains), the others being the Handler's; guarded by Mu.
	receiving []string
}

// Reset ends the transaction, its receiving recipients with it.
func (x *session) Reset() {
	x.Session.Reset()
	x.Mu.Lock()
	x.receiving = nil
	x.Mu.Unlock()
}

// Mail takes any sender: bounces come from the null sender <> (RFC 5321
// §4.5.5), complaints and auto-replies from anyone. A declared size beyond
// the limit is refused before the message is sent (RFC 1870 §6.1).
func (x *session) Mail(from string, opts *gosmtp.MailOptions) error {
	if max := x.Server.Limits().MaxBytes; opts != nil && opts.Size > max {
		return smtpserver.ErrTooLarge(max)
	}
	if err := x.Open(from, struct{}{}); err != nil {
		return err
	}
	x.Mu.Lock()
	x.receiving = nil
	x.Mu.Unlock()
	return nil
}

// Rcpt takes the recipients the Handler accepts (bounce addresses) and
// those the Receiver accepts (every address of a receiving domain, +tags
// kept as they are), and refuses all others: the server is never a relay.
func (x *session) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	to = smtpserver.PathAddress(to)
	s, base := x.s, x.Server
	ctx, cancel := base.HandlerContext()
	defer cancel()
	x.Mu.Lock()
	from := x.Tx.From
	x.Mu.Unlock()
	ok, err := s.Handler.Accepts(ctx, to)
	receiving := false
	if err == nil && !ok && s.Receiver != nil {
		ok, err = s.Receiver.Accepts(ctx, to)
		receiving = ok
	}
	if err != nil {
		base.Observe(OutcomeRcptError)
		base.Log().Warn("inbound: could not tell whether a recipient is taken; answered 451",
			"remote", x.Remote, "rcpt", to, "err", err)
		return errRcptTemporary
	}
	if !ok {
		base.Observe(OutcomeRcptRefused)
		base.Log().Info("inbound recipient refused", "remote", x.Remote, "mail_from", from, "rcpt", to)
		if s.Receiver != nil {
			return errNoSuchUserReceiving
		}
		return errNoSuchUser
	}
	x.Mu.Lock()
	defer x.Mu.Unlock()
	// A recipient named twice is applied once.
	if !slices.Contains(x.Tx.Rcpts, to) {
		x.Tx.Rcpts = append(x.Tx.Rcpts, to)
		if receiving {
			x.receiving = append(x.receiving, to)
		}
	}
	return nil
}

// Data reads the message as a stream into Parse and applies the report
// for each recipient. Whatever the message is, it is answered 250 unless
// it is too large (552), cut off, or storage is unavailable (451): a
// report that is not understood is dropped and counted, never refused,
// since the sender would then bounce a bounce.
func (x *session) Data(r io.Reader) error {
	s, base := x.s, x.Server
	d, err := x.BeginData(r)
	if err != nil {
		return err
	}
	tx, m := d.Tx, d.Message
	x.Mu.Lock()
	receiving := slices.Clone(x.receiving)
	x.Mu.Unlock()
	if len(receiving) > 0 {
		return x.receive(d, receiving)
	}
	report, perr := x.parse(m)
	// Whatever Parse left is read too, counted against the limit, so that
	// the size and the end of the message are known.
	_, _ = io.Copy(io.Discard, m)

	entry := []any{
		"remote", x.Remote, "helo", tx.Helo, "mail_from", tx.From,
		"rcpts", tx.Rcpts, "bytes", m.Bytes(), "tls", tx.TLS,
	}
	info := func(outcome string, kind mailroom.ReportKind, more ...any) {
		args := slices.Concat(entry, []any{"kind", string(kind), "outcome", outcome, "took", time.Since(d.Start).Round(time.Millisecond)})
		base.Log().Info("inbound message", append(args, more...)...)
	}

	if m.TooLarge() {
		base.Observe(OutcomeTooLarge)
		info(OutcomeTooLarge, "")
		return smtpserver.ErrTooLarge(m.Max)
	}
	if err := m.Failure(); err != nil {
		base.Observe(OutcomeAborted)
		info(OutcomeAborted, "", "err", err)
		return x.CutOff(d)
	}
	if perr != nil || report == nil {
		base.Observe(OutcomeUnparsed)
		more := []any{}
		if perr != nil {
			more = append(more, "parse_error", excerptError(perr))
		}
		info(OutcomeUnparsed, "", more...)
		return nil
	}

	applied, failed := 0, 0
	for _, rcpt := range tx.Rcpts {
		ctx, cancel := base.HandlerContext()
		err := s.Handler.Apply(ctx, rcpt, report)
		cancel()
		switch {
		case err == nil:
			applied++
			base.Observe(OutcomeApplied)
		case smtpserver.Temporary(err):
			base.Observe(OutcomeUnavailable)
			info(OutcomeUnavailable, report.Kind, "applied", applied, "rcpt", rcpt, "err", err)
			return errUnavailable
		default:
			failed++
			base.Observe(OutcomeFailed)
			base.Log().Error("inbound: applying a report failed; the report is dropped",
				"remote", x.Remote, "rcpt", rcpt, "kind", string(report.Kind), "err", err)
		}
	}
	outcome := OutcomeApplied
	if failed > 0 {
		outcome = OutcomeFailed
	}
	info(outcome, report.Kind)
	return nil
}

// parse runs the parser, turning a panic into an error: nothing that
// arrives may take the listener down (docs/api.md "Mail coming back").
func (x *session) parse(r io.Reader) (rep *mailroom.Report, err error) {
	defer func() {
		if v := recover(); v != nil {
			x.Server.Log().Error("inbound: the report parser panicked; the message is dropped",
				"remote", x.Remote, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			rep, err = nil, errors.New("parser panicked")
		}
	}()
	return x.s.parse(r)
}

// excerptError bounds a parser's error in the log: it may quote a header.
func excerptError(err error) string {
	const max = 200
	msg := err.Error()
	if len(msg) > max {
		msg = msg[:max] + "…"
	}
	return msg
}
