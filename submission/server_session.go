package submission

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/smtplimit"
)

// backend makes a session per client greeting (and again after STARTTLS,
// which ends the session and its login, RFC 3207 §4.2).
type backend struct{ s *Server }

func (b backend) NewSession(c *gosmtp.Conn) (gosmtp.Session, error) {
	remote := c.Conn().RemoteAddr()
	return &session{s: b.s, conn: c, remote: remote.String(), client: smtplimit.ClientKey(remote)}, nil
}

// session is one client's login and transaction.
//
// go-smtp calls Data on a goroutine of its own for BDAT (RFC 3030), and
// Reset from the connection's goroutine when the client sends RSET
// meanwhile: mu guards the session, and Data works on a copy.
type session struct {
	s      *Server
	conn   *gosmtp.Conn
	remote string
	client string // what the per-address limits count by

	mu sync.Mutex
	// key is the key logged in with, nil before AUTH; password is kept to
	// check the key again at each MAIL, so that a revocation takes effect
	// at the next transaction. Neither is ever logged.
	key      *mailroom.APIKey
	password string
	tx       transaction
	// inData says that the session holds one count of Server.data: from
	// the start of Data to the Reset (or Logout) go-smtp calls once the
	// reply is written, so that Shutdown lets the reply go out too.
	inData bool
}

// transaction is what MAIL and RCPT set.
type transaction struct {
	open  bool
	key   *mailroom.APIKey
	from  string
	rcpts []string
	tls   bool
	conn  net.Conn
}

// Reset ends the transaction; the login stays (RFC 4954 §4: only the end
// of the session, or STARTTLS, ends it).
func (x *session) Reset() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.endData()
	x.tx = transaction{}
}

func (x *session) Logout() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.endData()
	x.key, x.password = nil, ""
	return nil
}

// endData gives back the session's count of Server.data; x.mu is held.
func (x *session) endData() {
	if x.inData {
		x.inData = false
		x.s.data.Done()
	}
}

// Mail opens a transaction for a logged-in client whose key still passes
// (checked again here: the Handler caches keys, so this is cheap) and
// whose account is within its rate limit. A declared SIZE beyond the limit
// go-smtp refuses before (RFC 1870 §6.1).
func (x *session) Mail(from string, _ *gosmtp.MailOptions) error {
	s := x.s
	x.mu.Lock()
	prev, password, open := x.key, x.password, x.tx.open
	x.mu.Unlock()
	if prev == nil {
		s.observe(OutcomeAuthRequired)
		return errAuthRequired
	}
	// go-smtp lets MAIL follow MAIL and keeps the first's recipients;
	// RFC 5321 §4.1.1.2 wants RSET in between.
	if open {
		return errNestedMail
	}

	ctx, cancel := s.handlerContext()
	defer cancel()
	key, err := s.Handler.Authenticate(ctx, password)
	if err == nil && key == nil {
		err = errors.New("submission: Handler.Authenticate returned neither a key nor an error")
	}
	if err != nil {
		switch code := mailroom.ErrorCode(err); {
		case temporary(err) || code == mailroom.ECodeInternal:
			s.observe(OutcomeUnavailable)
			s.log().Warn("submission: the key could not be checked again at MAIL; answered 451",
				"remote", x.remote, "key_id", prev.KeyID, "err", err)
			return errMailTemporary
		default:
			s.observe(OutcomeKeyRejected)
			s.log().Info("submission key no longer accepted", "remote", x.remote, "key_id", prev.KeyID, "reason", code)
			return errCredentialsInvalid
		}
	}
	if !s.Handler.Allow(key) {
		s.observe(OutcomeRateLimited)
		s.log().Info("submission rate limited at MAIL", "remote", x.remote, "key_id", key.KeyID, "account_id", key.AccountID)
		return errRateLimited
	}
	_, tls := x.conn.TLSConnectionState()
	x.mu.Lock()
	defer x.mu.Unlock()
	x.key = key
	x.tx = transaction{open: true, key: key, from: from, tls: tls, conn: x.conn.Conn()}
	return nil
}

// Rcpt takes any recipient: what a recipient may be (its syntax,
// suppressions) is decided by Submit, with the whole message, as for
// POST /v1/send. go-smtp refuses the one beyond MaxRecipients with 452
// 4.5.3.
func (x *session) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.tx.open {
		return errNoMail
	}
	x.tx.rcpts = append(x.tx.rcpts, to)
	return nil
}

// Data streams the message into Submit and answers 250 with the message id
// only once Submit has returned it, the message being durable then; any
// failure is answered with a reply the client understands, and the
// connection goes on (but for a message cut off).
func (x *session) Data(r io.Reader) error {
	s := x.s
	if !s.beginData() {
		return errShuttingDown
	}
	start := time.Now()
	x.mu.Lock()
	x.endData() // never held twice
	x.inData = true
	tx := x.tx
	tx.rcpts = slices.Clone(tx.rcpts)
	x.mu.Unlock()
	if !tx.open || tx.key == nil {
		return errNoMail
	}

	// Submit may take the handler timeout from the end of the message;
	// reading the message is bounded by the data timeout.
	ctx, cancel := context.WithTimeout(s.ctx, s.dataTimeout()+s.handlerTimeout())
	defer cancel()
	var timer atomic.Pointer[time.Timer]
	defer func() {
		if t := timer.Load(); t != nil {
			t.Stop()
		}
	}()

	// With BDAT the connection is read by go-smtp's goroutine, which sets
	// its own deadlines, and r is a pipe from it.
	_, bdat := r.(*io.PipeReader)
	m := &smtplimit.MessageReader{R: r, Max: s.maxBytes()}
	m.AtEOF = func() { timer.Store(time.AfterFunc(s.handlerTimeout(), cancel)) }
	if !bdat {
		m.Conn, m.Idle, m.End = tx.conn, s.readTimeout(), start.Add(s.dataTimeout())
	}
	id, err := x.submit(ctx, tx, m)
	// Whatever Submit left is read too, counted against the limit, so
	// that the size and the end of the message are known.
	_, _ = io.Copy(io.Discard, m)

	entry := []any{
		"remote", x.remote, "key_id", tx.key.KeyID, "account_id", tx.key.AccountID,
		"mail_from", tx.from, "rcpts", len(tx.rcpts), "bytes", m.Bytes(), "tls", tx.tls,
	}
	line := func(level slog.Level, outcome string, more ...any) {
		args := slices.Concat(entry, []any{"outcome", outcome, "took", time.Since(start).Round(time.Millisecond)})
		s.log().Log(context.Background(), level, "submission message", append(args, more...)...)
	}
	info := func(outcome string, more ...any) { line(slog.LevelInfo, outcome, more...) }
	if (m.TooLarge() || m.Failure() != nil) && err == nil {
		// Submit made durable a message it had not read whole: a bug of
		// the Handler, which must fail on its reader's error.
		s.log().Error("submission: Submit accepted a message that was not read whole",
			"remote", x.remote, "key_id", tx.key.KeyID, "id", id)
	}

	switch {
	case m.TooLarge():
		s.observe(OutcomeTooLarge)
		info(OutcomeTooLarge)
		return errTooLarge(s.maxBytes())
	case m.Failure() != nil:
		s.observe(OutcomeAborted)
		info(OutcomeAborted, "err", m.Failure())
		if !bdat && tx.conn != nil {
			return x.cut(tx.conn, m.Failure())
		}
		return m.Failure()
	case err != nil:
		reply, outcome := submitReply(err)
		s.observe(outcome)
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
	s.observe(OutcomeQueued)
	info(OutcomeQueued, "id", id)
	return queued(id)
}

// submit calls Submit, turning a panic into an error: nothing a client
// sends may take the listener down.
func (x *session) submit(ctx context.Context, tx transaction, r io.Reader) (id string, err error) {
	defer func() {
		if v := recover(); v != nil {
			x.s.log().Error("submission: Submit panicked",
				"remote", x.remote, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			id, err = "", fmt.Errorf("submission: Handler.Submit panicked: %v", v)
		}
	}()
	id, err = x.s.Handler.Submit(ctx, tx.key, tx.from, tx.rcpts, r)
	if err == nil && id == "" {
		err = errors.New("submission: Handler.Submit returned neither an id nor an error")
	}
	return id, err
}

// cut ends a connection whose message was cut off: the stream is out of
// step (what the client sends next is the rest of its message, not
// commands), so the reply is written here and the connection closed
// (RFC 5321 §4.2.2 421; 500 for a line beyond the limit, §4.5.3.1.6).
func (x *session) cut(nc net.Conn, cause error) error {
	reply := &gosmtp.SMTPError{
		Code:         421,
		EnhancedCode: gosmtp.EnhancedCode{4, 4, 2},
		Message:      "Timeout or connection error while receiving the message, closing connection",
	}
	if errors.Is(cause, gosmtp.ErrTooLongLine) {
		reply = &gosmtp.SMTPError{
			Code:         500,
			EnhancedCode: gosmtp.EnhancedCode{5, 5, 2},
			Message:      "Line too long, closing connection",
		}
	}
	_ = nc.SetWriteDeadline(time.Now().Add(x.s.writeTimeout()))
	_, _ = fmt.Fprintf(nc, "%d %d.%d.%d %s %s\r\n", reply.Code,
		reply.EnhancedCode[0], reply.EnhancedCode[1], reply.EnhancedCode[2], x.s.hostname(), reply.Message)
	_ = nc.Close()
	return reply
}

// temporary says whether a Handler error is one the client should retry:
// storage unavailable, or a call cut by its timeout or by the server's
// closing.
func temporary(err error) bool {
	return mailroom.IsCode(err, mailroom.ECodeUnavailable) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, context.Canceled)
}
