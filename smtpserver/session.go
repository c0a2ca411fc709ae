package smtpserver

import (
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"

	gosmtp "github.com/emersion/go-smtp"
)

// Session is what every listener's session holds: its server, its
// connection, and the transaction MAIL and RCPT set. A listener's session
// embeds it and adds what differs (its Mail, Rcpt and Data, and for
// submission the login); A is what the listener ties to a transaction
// (submission: the API key it was opened with).
//
// go-smtp calls Data on a goroutine of its own for BDAT (RFC 3030), and
// Reset from the connection's goroutine when the client sends RSET
// meanwhile: Mu guards Tx and whatever the listener's session keeps beside
// it, and Data works on a copy.
type Session[A any] struct {
	Server *Server
	Conn   *gosmtp.Conn
	// Remote is the client's address, for the log.
	Remote string

	Mu sync.Mutex
	Tx Transaction[A]
	// inData says that the session holds one count of Server.data: from
	// the start of Data to the Reset (or Logout) go-smtp calls once the
	// reply is written, so that Shutdown lets the reply go out too.
	inData bool
}

// Transaction is what MAIL and RCPT set. The connection's details are
// taken at MAIL, on the connection's goroutine: STARTTLS, which changes
// them, ends the session.
type Transaction[A any] struct {
	Open  bool
	From  string
	Rcpts []string
	Helo  string
	TLS   bool
	Conn  net.Conn
	Auth  A
	// RequireTLS: MAIL FROM carried REQUIRETLS (RFC 8689), for a
	// listener that advertises it (Setup.RequireTLS); its session sets
	// it after Open.
	RequireTLS bool
}

// Reset ends the transaction (RSET, or the end of one).
func (x *Session[A]) Reset() {
	x.Mu.Lock()
	defer x.Mu.Unlock()
	x.endData()
	x.Tx = Transaction[A]{}
}

// Logout ends the session.
func (x *Session[A]) Logout() error {
	x.Mu.Lock()
	defer x.Mu.Unlock()
	x.endData()
	return nil
}

// endData gives back the session's count of Server.data; x.Mu is held.
func (x *Session[A]) endData() {
	if x.inData {
		x.inData = false
		x.Server.data.Done()
	}
}

// Open opens a transaction at MAIL from from (its quotes put back:
// PathAddress), tied to auth. go-smtp lets
// MAIL follow MAIL and keeps the first's recipients; RFC 5321 §4.1.1.2
// wants RSET in between, so a transaction open already is answered
// ErrNestedMail.
func (x *Session[A]) Open(from string, auth A) error {
	_, tls := x.Conn.TLSConnectionState()
	x.Mu.Lock()
	defer x.Mu.Unlock()
	if x.Tx.Open {
		return ErrNestedMail
	}
	x.Tx = Transaction[A]{Open: true, From: PathAddress(from), Helo: x.Conn.Hostname(), TLS: tls, Conn: x.Conn.Conn(), Auth: auth}
	return nil
}

// Data is one DATA phase as the skeleton hands it to the listener's Data.
type Data[A any] struct {
	// Tx is the transaction, a copy.
	Tx Transaction[A]
	// Message is the message, bounded by MaxBytes, ReadTimeout and
	// DataTimeout: read it, and whatever the handler left, through this.
	Message *MessageReader
	Start   time.Time
	// bdat: with BDAT the connection is read by go-smtp's goroutine,
	// which sets its own deadlines, and the message is a pipe from it.
	bdat bool
}

// BeginData starts a DATA phase on r: it counts in Shutdown's wait until
// the session's next Reset or Logout, or is answered ErrShuttingDown when
// the server is closing.
func (x *Session[A]) BeginData(r io.Reader) (*Data[A], error) {
	s := x.Server
	if !s.beginData() {
		return nil, ErrShuttingDown
	}
	d := &Data[A]{Start: time.Now()}
	x.Mu.Lock()
	x.endData() // never held twice
	x.inData = true
	d.Tx = x.Tx
	d.Tx.Rcpts = slices.Clone(d.Tx.Rcpts)
	x.Mu.Unlock()
	_, d.bdat = r.(*io.PipeReader)
	lim := s.Limits()
	d.Message = &MessageReader{R: r, Max: lim.MaxBytes, DotEnded: !d.bdat}
	if !d.bdat {
		d.Message.Conn, d.Message.Idle, d.Message.End = d.Tx.Conn, lim.ReadTimeout, d.Start.Add(lim.DataTimeout)
	}
	return d, nil
}

// CutOff is the reply to a message that was cut off (Message.Failure is
// not nil). With DATA the stream is out of step (what the client sends
// next is the rest of its message, not commands), so the reply is written
// here and the connection closed (RFC 5321 §4.2.2 421; 500 for a line
// beyond the limit, §4.5.3.1.6, and for a line "." next to a bare LF,
// §4.1.1.4, see dataEnd). With BDAT go-smtp's goroutine ends the
// connection itself.
func (x *Session[A]) CutOff(d *Data[A]) error {
	err := d.Message.Failure()
	if d.bdat || d.Tx.Conn == nil {
		return err
	}
	reply := errCutOff
	switch {
	case errors.Is(err, gosmtp.ErrTooLongLine):
		reply = errLineTooLong
	case errors.Is(err, errBareLFEnd):
		reply = errBareLF
	}
	nc := d.Tx.Conn
	_ = nc.SetWriteDeadline(time.Now().Add(x.Server.Limits().WriteTimeout))
	_, _ = fmt.Fprintf(nc, "%d %d.%d.%d %s %s\r\n", reply.Code,
		reply.EnhancedCode[0], reply.EnhancedCode[1], reply.EnhancedCode[2], x.Server.Hostname(), reply.Message)
	_ = nc.Close()
	return reply
}
