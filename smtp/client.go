package smtp

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mailroom/mailroom"
)

// Limits on what a server may send in one reply. RFC 5321 §4.5.3.1.5 allows
// 512 octets a reply line; a generous multiple keeps odd servers working
// while a broken or hostile one cannot make us buffer without end.
const (
	maxReplyLine  = 4096
	maxReplyLines = 256
)

// errReplyTooLong ends a session whose server sends more than a reply can
// hold.
var errReplyTooLong = errors.New("reply too long")

// client is one SMTP session with one server: the connection, buffered both
// ways, and what the server's EHLO announced.
type client struct {
	// host is the name the session is for: the MX host (for the log and
	// for TLS SNI) or the relay host.
	host string
	// addr is the ip:port dialled, for error messages.
	addr string
	// ehlo is the name the session gives in EHLO (RFC 5321 §4.1.1.1):
	// its source address's own, or the hostname.
	ehlo string
	// raw is the TCP connection; conn is raw or the TLS connection over it.
	raw  net.Conn
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	// ext maps each EHLO keyword (upper case) to its parameters (RFC 5321
	// §4.1.1.1); empty after HELO.
	ext map[string]string
	tls bool
	// tlsState is the session's TLS, when tls; verified says its
	// certificate chains to a trusted root and is valid for host (RFC 8461
	// §4.2, RFC 6125), checked by Direct after the handshake (see
	// verifyPeer). tlsFailure and tlsDetail say what fell short of
	// verified TLS (RFC 8460 §4.3), "" when nothing did.
	tlsState   tls.ConnectionState
	verified   bool
	tlsFailure mailroom.TLSFailure
	tlsDetail  string
	// transactions counts the transactions begun on the session, for a
	// site's messages per connection.
	transactions int
	// unrecorded, while not closed, says the outcome of the session's
	// last transaction is not yet committed (its Delivery.Recorded): the
	// next transaction goes as far as its message data, and waits for it
	// before the final "." (transaction.awaitLastOutcome).
	unrecorded <-chan struct{}

	commandTimeout time.Duration
	dataTimeout    time.Duration

	// slot is the connection's place under the caps, given back when it
	// is closed (see conns).
	slot *slot
	// onClose, when set, is called once the connection is closed: the
	// site is told (mailroom.SiteDisconnected).
	onClose   func()
	closeOnce sync.Once
}

func newClient(raw net.Conn, host, addr string, commandTimeout, dataTimeout time.Duration) *client {
	c := &client{host: host, addr: addr, raw: raw, commandTimeout: commandTimeout, dataTimeout: dataTimeout}
	c.setConn(raw)
	return c
}

// setConn switches the session onto conn, dropping anything buffered from
// the connection before: after STARTTLS nothing read in clear may be taken
// as said under TLS (RFC 3207 §4.2; CVE-2011-0411).
func (c *client) setConn(conn net.Conn) {
	c.conn = conn
	c.r = bufio.NewReader(conn)
	c.w = bufio.NewWriter(conn)
}

// deadline bounds the next exchange. A context that ends first closes the
// connection instead (see engine.use).
func (c *client) deadline(d time.Duration) {
	_ = c.conn.SetDeadline(time.Now().Add(d))
}

// cmd sends one command and reads its reply within the command timeout.
func (c *client) cmd(format string, args ...any) (reply, error) {
	c.deadline(c.commandTimeout)
	if err := c.write(format, args...); err != nil {
		return reply{}, err
	}
	if err := c.w.Flush(); err != nil {
		return reply{}, err
	}
	return c.read()
}

// write buffers one command line without sending it, so that a pipelined
// group goes out in one write (RFC 2920 §3.1).
func (c *client) write(format string, args ...any) error {
	line := fmt.Sprintf(format, args...)
	if strings.ContainsAny(line, "\r\n") {
		// Never reached with checked addresses; a guard against command
		// injection all the same.
		return errors.New("command contains CR or LF")
	}
	_, err := c.w.WriteString(line + "\r\n")
	return err
}

// read reads one reply, single or multi-line (RFC 5321 §4.2.1: "code-"
// continues, "code " or a bare code ends it).
func (c *client) read() (reply, error) {
	var lines []string
	code := 0
	for {
		line, err := c.readLine()
		if err != nil {
			return reply{}, err
		}
		if len(line) < 3 {
			return reply{}, fmt.Errorf("malformed reply %q", line)
		}
		n, err := strconv.Atoi(line[:3])
		if err != nil || n < 100 || n > 599 {
			return reply{}, fmt.Errorf("malformed reply %q", line)
		}
		if code != 0 && n != code {
			return reply{}, fmt.Errorf("reply code changed from %d to %d mid-reply", code, n)
		}
		code = n
		more := len(line) > 3 && line[3] == '-'
		text := ""
		if len(line) > 4 {
			text = line[4:]
		}
		lines = append(lines, text)
		if !more {
			return newReply(code, lines), nil
		}
		if len(lines) == maxReplyLines {
			return reply{}, errReplyTooLong
		}
	}
}

// readLine reads one line without its CRLF (or bare LF).
func (c *client) readLine() (string, error) {
	var b []byte
	for {
		chunk, isPrefix, err := c.r.ReadLine()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
		b = append(b, chunk...)
		if len(b) > maxReplyLine {
			return "", errReplyTooLong
		}
		if !isPrefix {
			return string(b), nil
		}
	}
}

// quit ends the session politely (RFC 5321 §4.1.1.10) when the server is
// still listening, and in any case closes the connection. After the 221 it
// waits, briefly, for the server to close its end, as RFC 5321
// §4.1.1.10 has it do: the connection's slot is given back only then, so
// that a receiver counting its clients' connections never sees one more
// than the sender's cap.
func (c *client) quit() {
	c.deadline(quitTimeout)
	if c.write("QUIT") == nil && c.w.Flush() == nil {
		if _, err := c.read(); err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(c.r, maxReplyLine))
		}
	}
	c.close()
}

// quitTimeout bounds the goodbye: nothing depends on the answer.
const quitTimeout = 5 * time.Second

// close closes the connection, gives its slot back and tells whoever
// asked (onClose), once.
func (c *client) close() {
	_ = c.conn.Close()
	c.closeOnce.Do(func() {
		if c.slot != nil {
			c.slot.release()
		}
		if c.onClose != nil {
			c.onClose()
		}
	})
}

// detachSlot takes the slot from a connection about to be closed, for a
// new connection in its place.
func (c *client) detachSlot() *slot {
	s := c.slot
	c.slot = nil
	return s
}
