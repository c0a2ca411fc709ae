package inbound

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/smtplimit"
)

// Replies of the session. go-smtp writes an *SMTPError's code and text as
// they are; any other error would reach the client as Go text.
var (
	// RFC 5321 §4.2.2 and RFC 3463 §3.2 (5.1.1, bad destination mailbox).
	errNoSuchUser = &gosmtp.SMTPError{
		Code:         550,
		EnhancedCode: gosmtp.EnhancedCode{5, 1, 1},
		Message:      "No such user here (this server takes mail for bounce addresses only)",
	}
	// 4.3.0: a temporary failure of the receiving system (RFC 3463 §3.5).
	errRcptTemporary = &gosmtp.SMTPError{
		Code:         451,
		EnhancedCode: gosmtp.EnhancedCode{4, 3, 0},
		Message:      "Temporary failure looking up the recipient, try again later",
	}
	errUnavailable = &gosmtp.SMTPError{
		Code:         451,
		EnhancedCode: gosmtp.EnhancedCode{4, 3, 0},
		Message:      "Temporary failure processing the message, try again later",
	}
	// RFC 5321 §4.1.1.2: MAIL inside a transaction.
	errNestedMail = &gosmtp.SMTPError{
		Code:         503,
		EnhancedCode: gosmtp.EnhancedCode{5, 5, 1},
		Message:      "Nested MAIL command: send RSET first",
	}
	// 4.3.2: system not accepting network messages (RFC 3463 §3.5).
	errShuttingDown = &gosmtp.SMTPError{
		Code:         421,
		EnhancedCode: gosmtp.EnhancedCode{4, 3, 2},
		Message:      "Service shutting down, try again later",
	}
)

// errTooLarge is RFC 1870 §6.1's reply to a message beyond the fixed
// maximum: 552, 5.3.4 (RFC 3463 §3.4, message too big for system).
func errTooLarge(max int64) *gosmtp.SMTPError {
	return &gosmtp.SMTPError{
		Code:         552,
		EnhancedCode: gosmtp.EnhancedCode{5, 3, 4},
		Message:      fmt.Sprintf("Message too large: the limit is %d bytes", max),
	}
}

// backend makes a session per client greeting.
type backend struct{ s *Server }

func (b backend) NewSession(c *gosmtp.Conn) (gosmtp.Session, error) {
	return &session{s: b.s, conn: c, remote: c.Conn().RemoteAddr().String()}, nil
}

// session is one client's transaction. It implements no AuthSession:
// an MX offers no AUTH.
//
// go-smtp calls Data on a goroutine of its own for BDAT (RFC 3030), and
// Reset from the connection's goroutine when the client sends RSET
// meanwhile: mu guards the transaction, and Data works on a copy.
type session struct {
	s      *Server
	conn   *gosmtp.Conn
	remote string

	mu sync.Mutex
	tx transaction
	// inData says that the session holds one count of Server.data: from
	// the start of Data to the Reset (or Logout) go-smtp calls once the
	// reply is written, so that Shutdown lets the reply go out too.
	inData bool
}

// transaction is what MAIL and RCPT set. The connection's details are
// taken at MAIL, on the connection's goroutine: STARTTLS, which changes
// them, ends the session.
type transaction struct {
	open  bool
	from  string
	rcpts []string
	helo  string
	tls   bool
	conn  net.Conn
}

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
	return nil
}

// endData gives back the session's count of Server.data; x.mu is held.
func (x *session) endData() {
	if x.inData {
		x.inData = false
		x.s.data.Done()
	}
}

// Mail takes any sender: bounces come from the null sender <> (RFC 5321
// §4.5.5), complaints and auto-replies from anyone. A declared size beyond
// the limit is refused before the message is sent (RFC 1870 §6.1).
func (x *session) Mail(from string, opts *gosmtp.MailOptions) error {
	if opts != nil && opts.Size > x.s.maxBytes() {
		return errTooLarge(x.s.maxBytes())
	}
	_, tls := x.conn.TLSConnectionState()
	x.mu.Lock()
	defer x.mu.Unlock()
	// go-smtp lets MAIL follow MAIL and keeps the first's recipients;
	// RFC 5321 §4.1.1.2 wants RSET in between.
	if x.tx.open {
		return errNestedMail
	}
	x.tx = transaction{open: true, from: from, helo: x.conn.Hostname(), tls: tls, conn: x.conn.Conn()}
	return nil
}

// Rcpt takes the recipients the Handler accepts and refuses all others:
// the server is never a relay.
func (x *session) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	s := x.s
	ctx, cancel := s.handlerContext()
	defer cancel()
	x.mu.Lock()
	from := x.tx.from
	x.mu.Unlock()
	ok, err := s.Handler.Accepts(ctx, to)
	if err != nil {
		s.observe(OutcomeRcptError)
		s.log().Warn("inbound: could not tell whether a recipient is taken; answered 451",
			"remote", x.remote, "rcpt", to, "err", err)
		return errRcptTemporary
	}
	if !ok {
		s.observe(OutcomeRcptRefused)
		s.log().Info("inbound recipient refused", "remote", x.remote, "mail_from", from, "rcpt", to)
		return errNoSuchUser
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	// A recipient named twice is applied once.
	if !slices.Contains(x.tx.rcpts, to) {
		x.tx.rcpts = append(x.tx.rcpts, to)
	}
	return nil
}

// Data reads the message as a stream into Parse and applies the report
// for each recipient. Whatever the message is, it is answered 250 unless
// it is too large (552), cut off, or storage is unavailable (451): a
// report that is not understood is dropped and counted, never refused,
// since the sender would then bounce a bounce.
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
	// With BDAT the connection is read by go-smtp's goroutine, which sets
	// its own deadlines, and r is a pipe from it.
	_, bdat := r.(*io.PipeReader)
	m := &smtplimit.MessageReader{R: r, Max: s.maxBytes()}
	if !bdat {
		m.Conn, m.Idle, m.End = tx.conn, s.readTimeout(), start.Add(s.dataTimeout())
	}
	report, perr := x.parse(m)
	// Whatever Parse left is read too, counted against the limit, so that
	// the size and the end of the message are known.
	_, _ = io.Copy(io.Discard, m)

	entry := []any{
		"remote", x.remote, "helo", tx.helo, "mail_from", tx.from,
		"rcpts", tx.rcpts, "bytes", m.Bytes(), "tls", tx.tls,
	}
	info := func(outcome string, kind mailroom.ReportKind, more ...any) {
		args := slices.Concat(entry, []any{"kind", string(kind), "outcome", outcome, "took", time.Since(start).Round(time.Millisecond)})
		s.log().Info("inbound message", append(args, more...)...)
	}

	if m.TooLarge() {
		s.observe(OutcomeTooLarge)
		info(OutcomeTooLarge, "")
		return errTooLarge(s.maxBytes())
	}
	if err := m.Failure(); err != nil {
		s.observe(OutcomeAborted)
		info(OutcomeAborted, "", "err", err)
		if !bdat && tx.conn != nil {
			return x.cut(tx.conn, err)
		}
		return err
	}
	if perr != nil || report == nil {
		s.observe(OutcomeUnparsed)
		more := []any{}
		if perr != nil {
			more = append(more, "parse_error", excerptError(perr))
		}
		info(OutcomeUnparsed, "", more...)
		return nil
	}

	applied, failed := 0, 0
	for _, rcpt := range tx.rcpts {
		ctx, cancel := s.handlerContext()
		err := s.Handler.Apply(ctx, rcpt, report)
		cancel()
		switch {
		case err == nil:
			applied++
			s.observe(OutcomeApplied)
		case temporary(err):
			s.observe(OutcomeUnavailable)
			info(OutcomeUnavailable, report.Kind, "applied", applied, "rcpt", rcpt, "err", err)
			return errUnavailable
		default:
			failed++
			s.observe(OutcomeFailed)
			s.log().Error("inbound: applying a report failed; the report is dropped",
				"remote", x.remote, "rcpt", rcpt, "kind", string(report.Kind), "err", err)
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
			x.s.log().Error("inbound: the report parser panicked; the message is dropped",
				"remote", x.remote, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			rep, err = nil, errors.New("parser panicked")
		}
	}()
	return x.s.parse(r)
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

// handlerContext bounds one Handler call, and ends it when the server is
// closed.
func (s *Server) handlerContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.ctx, s.handlerTimeout())
}

// temporary says whether a Handler error is one the sender should retry:
// storage unavailable, or a call cut by its timeout or by the server's
// closing.
func temporary(err error) bool {
	return mailroom.IsCode(err, mailroom.ECodeUnavailable) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, context.Canceled)
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
