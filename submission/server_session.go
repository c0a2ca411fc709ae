package submission

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/connlimit"
	"github.com/mailroom/mailroom/membudget"
	"github.com/mailroom/mailroom/smtpserver"
)

// backend makes a session per client greeting (and again after STARTTLS,
// which ends the session and its login, RFC 3207 §4.2).
type backend struct{ s *Server }

func (b backend) NewSession(c *gosmtp.Conn) (gosmtp.Session, error) {
	remote := c.Conn().RemoteAddr()
	return &session{
		Session: smtpserver.Session[*mailroom.APIKey]{Server: &b.s.base, Conn: c, Remote: remote.String()},
		s:       b.s,
		client:  connlimit.ClientKey(remote),
	}, nil
}

// session is one client's login and transaction; the skeleton's Session
// holds the transaction, opened with the key that passed at MAIL.
type session struct {
	smtpserver.Session[*mailroom.APIKey]
	s      *Server
	client string // what the per-address limits count by

	// key is the key logged in with, nil before AUTH; password is kept to
	// check the key again at each MAIL, so that a revocation takes effect
	// at the next transaction. Neither is ever logged. Mu guards them.
	key      *mailroom.APIKey
	password string
}

// Reset, the skeleton's, ends the transaction; the login stays (RFC 4954
// §4: only the end of the session, or STARTTLS, ends it). A transaction
// holds nothing of the memory budget before Data, so there is nothing to
// give back.

// Logout ends the session and its login.
func (x *session) Logout() error {
	err := x.Session.Logout()
	x.Mu.Lock()
	defer x.Mu.Unlock()
	x.key, x.password = nil, ""
	return err
}

// Mail opens a transaction for a logged-in client whose key still passes
// (checked again here: the Handler caches keys, so this is cheap) and
// whose account is within its rate limit. A declared SIZE beyond the limit
// go-smtp refuses before (RFC 1870 §6.1); one within it whose memory the
// budget has no room for now is answered 452 4.3.1 here, before the
// message is sent (§6.1: the server may take it later). Nothing is
// reserved at MAIL: Data reserves the message as it arrives.
func (x *session) Mail(from string, opts *gosmtp.MailOptions) error {
	s, base := x.s, x.Server
	// First: in clear text no login is possible either, and this says
	// what to do.
	requireTLS := opts != nil && opts.RequireTLS
	if _, encrypted := x.Conn.TLSConnectionState(); requireTLS && !encrypted {
		return errRequireTLSInClear
	}
	x.Mu.Lock()
	prev, password, open := x.key, x.password, x.Tx.Open
	x.Mu.Unlock()
	if prev == nil {
		base.Observe(OutcomeAuthRequired)
		return errAuthRequired
	}
	// Before the key is checked again: a transaction open already is
	// refused at once.
	if open {
		return smtpserver.ErrNestedMail
	}

	ctx, cancel := base.HandlerContext()
	defer cancel()
	key, err := s.Handler.Authenticate(ctx, password)
	if err == nil && key == nil {
		err = errors.New("submission: Handler.Authenticate returned neither a key nor an error")
	}
	if err != nil {
		switch code := mailroom.ErrorCode(err); {
		case smtpserver.Temporary(err) || code == mailroom.ECodeInternal:
			base.Observe(OutcomeUnavailable)
			base.Log().Warn("submission: the key could not be checked again at MAIL; answered 451",
				"remote", x.Remote, "key_id", prev.KeyID, "err", err)
			return errMailTemporary
		default:
			base.Observe(OutcomeKeyRejected)
			base.Log().Info("submission key no longer accepted", "remote", x.Remote, "key_id", prev.KeyID, "reason", code)
			return errCredentialsInvalid
		}
	}
	// Before the rate limit: a message refused for memory does not spend
	// the account's requests.
	var size int64
	if opts != nil {
		size = opts.Size
	}
	if err := s.checkDeclared(key.AccountID, size); err != nil {
		base.Log().Info("submission refused at MAIL: the memory budget has no room for the declared size",
			"remote", x.Remote, "key_id", key.KeyID, "account_id", key.AccountID, "size", size, "reason", membudget.Reason(err))
		return s.memoryReply(err)
	}
	if !s.Handler.Allow(key) {
		base.Observe(OutcomeRateLimited)
		base.Log().Info("submission rate limited at MAIL", "remote", x.Remote, "key_id", key.KeyID, "account_id", key.AccountID)
		return errRateLimited
	}
	x.Mu.Lock()
	x.key = key
	x.Mu.Unlock()
	if err := x.Open(from, key); err != nil {
		return err
	}
	x.Mu.Lock()
	x.Tx.RequireTLS = requireTLS
	x.Mu.Unlock()
	return nil
}

// Rcpt takes any recipient: what a recipient may be (its syntax,
// suppressions) is decided by Submit, with the whole message, as for
// POST /v1/send. go-smtp refuses the one beyond MaxRecipients with 452
// 4.5.3.
func (x *session) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	to = smtpserver.PathAddress(to)
	x.Mu.Lock()
	defer x.Mu.Unlock()
	if !x.Tx.Open {
		return errNoMail
	}
	x.Tx.Rcpts = append(x.Tx.Rcpts, to)
	return nil
}

// Data streams the message into Submit and answers 250 with the message id
// only once Submit has returned it, the message being durable then; any
// failure is answered with a reply the client understands, and the
// connection goes on (but for a message cut off).
func (x *session) Data(r io.Reader) error {
	base := x.Server
	d, err := x.BeginData(r)
	if err != nil {
		return err
	}
	tx, m := d.Tx, d.Message
	if !tx.Open || tx.Auth == nil {
		return errNoMail
	}
	key := tx.Auth
	lim := base.Limits()
	// The message's memory, reserved as it arrives and given back once it
	// is answered (Data returns when the message is taken or refused,
	// what Submit held being garbage then).
	metered, res := x.s.meter(m, key.AccountID)
	defer res.Release()

	// Submit may take the handler timeout from the end of the message;
	// reading the message is bounded by the data timeout.
	ctx, cancel := context.WithTimeout(base.Context(), lim.DataTimeout+lim.HandlerTimeout)
	defer cancel()
	var timer atomic.Pointer[time.Timer]
	defer func() {
		if t := timer.Load(); t != nil {
			t.Stop()
		}
	}()
	m.AtEOF = func() { timer.Store(time.AfterFunc(lim.HandlerTimeout, cancel)) }
	id, err := x.submit(ctx, tx, metered)
	// Whatever Submit left is read too, counted against the limit, so
	// that the size and the end of the message are known.
	_, _ = io.Copy(io.Discard, m)

	entry := []any{
		"remote", x.Remote, "key_id", key.KeyID, "account_id", key.AccountID,
		"mail_from", tx.From, "rcpts", len(tx.Rcpts), "bytes", m.Bytes(), "tls", tx.TLS,
	}
	line := func(level slog.Level, outcome string, more ...any) {
		args := slices.Concat(entry, []any{"outcome", outcome, "took", time.Since(d.Start).Round(time.Millisecond)})
		base.Log().Log(context.Background(), level, "submission message", append(args, more...)...)
	}
	info := func(outcome string, more ...any) { line(slog.LevelInfo, outcome, more...) }
	if (m.TooLarge() || m.Failure() != nil) && err == nil {
		// Submit made durable a message it had not read whole: a bug of
		// the Handler, which must fail on its reader's error.
		base.Log().Error("submission: Submit accepted a message that was not read whole",
			"remote", x.Remote, "key_id", key.KeyID, "id", id)
	}

	switch {
	case m.TooLarge():
		base.Observe(OutcomeTooLarge)
		info(OutcomeTooLarge)
		return smtpserver.ErrTooLarge(lim.MaxBytes)
	case m.Failure() != nil:
		base.Observe(OutcomeAborted)
		info(OutcomeAborted, "err", m.Failure())
		return x.CutOff(d)
	case metered.Err() != nil && err != nil:
		// The rest was read above and dropped, holding nothing.
		reply := x.s.memoryReply(metered.Err())
		info(OutcomeMemoryRefused, "reply", reply.Code, "reason", membudget.Reason(metered.Err()))
		return reply
	case err != nil:
		reply, outcome := submitReply(err)
		base.Observe(outcome)
		more := []any{"reply", reply.Code, "code", mailroom.ErrorCode(err)}
		switch outcome {
		case OutcomeFailed:
			// A bug until proven otherwise.
			line(slog.LevelError, outcome, append(more, "err", err)...)
		case OutcomeUnavailable:
			line(slog.LevelWarn, outcome, append(more, "err", err)...)
		default:
			info(outcome, more...)
		}
		return reply
	}
	base.Observe(OutcomeQueued)
	info(OutcomeQueued, "id", id)
	return queued(id)
}

// submit calls Submit, turning a panic into an error: nothing a client
// sends may take the listener down.
func (x *session) submit(ctx context.Context, tx smtpserver.Transaction[*mailroom.APIKey], r io.Reader) (id string, err error) {
	defer func() {
		if v := recover(); v != nil {
			x.Server.Log().Error("submission: Submit panicked",
				"remote", x.Remote, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			id, err = "", fmt.Errorf("submission: Handler.Submit panicked: %v", v)
		}
	}()
	id, err = x.s.Handler.Submit(ctx, tx.Auth, Envelope{MailFrom: tx.From, Rcpts: tx.Rcpts, RequireTLS: tx.RequireTLS}, r)
	if err == nil && id == "" {
		err = errors.New("submission: Handler.Submit returned neither an id nor an error")
	}
	return id, err
}
