package smtpservertest

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"
)

// Conn is a plain connection for what a well-behaved client would not
// send, with a reader of the server's replies.
type Conn struct {
	t testing.TB
	net.Conn
	r *bufio.Reader
}

// Dial connects to addr; the connection is closed when the test ends.
func Dial(t testing.TB, addr string) *Conn {
	t.Helper()
	return DialFrom(t, addr, "")
}

// DialFrom connects from the local address from (any of 127/8 on Linux),
// or the default one when from is "".
func DialFrom(t testing.TB, addr, from string) *Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &Conn{t: t, Conn: c, r: bufio.NewReader(c)}
}

// Send writes s.
func (c *Conn) Send(s string) {
	c.t.Helper()
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, s); err != nil {
		c.t.Fatalf("writing %q: %v", s, err)
	}
}

// Reply reads one whole reply and returns its last line, waiting at most
// d.
func (c *Conn) Reply(d time.Duration) (string, error) {
	_ = c.SetReadDeadline(time.Now().Add(d))
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			return line, err
		}
		if len(line) < 4 || line[3] != '-' {
			return strings.TrimRight(line, "\r\n"), nil
		}
	}
}

// ReplyLines reads one whole reply, every line.
func (c *Conn) ReplyLines() []string {
	c.t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var lines []string
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			c.t.Fatalf("reading a reply: %v (so far %q)", err, lines)
		}
		lines = append(lines, strings.TrimRight(line, "\r\n"))
		if len(line) < 4 || line[3] != '-' {
			return lines
		}
	}
}

// Expect reads a reply and fails unless it begins with prefix.
func (c *Conn) Expect(prefix string) string {
	c.t.Helper()
	line, err := c.Reply(10 * time.Second)
	if err != nil || !strings.HasPrefix(line, prefix) {
		c.t.Fatalf("reply %q (%v), want %q…", line, err, prefix)
	}
	return line
}

// StartTLS reads the greeting, says EHLO, STARTTLS and shakes hands, and
// says EHLO again.
func (c *Conn) StartTLS(cfg *tls.Config) {
	c.t.Helper()
	c.Expect("220 ")
	c.Send("EHLO client.test\r\n")
	c.Expect("250 ")
	c.Send("STARTTLS\r\n")
	c.Expect("220 ")
	c.Handshake(cfg)
	c.Send("EHLO client.test\r\n")
	c.Expect("250 ")
}

// Handshake shakes hands as a TLS client, after STARTTLS's 220, and goes
// on under TLS.
func (c *Conn) Handshake(cfg *tls.Config) {
	c.t.Helper()
	tc := tls.Client(c.Conn, cfg)
	_ = tc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := tc.Handshake(); err != nil {
		c.t.Fatalf("TLS handshake: %v", err)
	}
	c.Conn, c.r = tc, bufio.NewReader(tc)
}

// ClosedWithin waits for the server to close the connection, discarding
// what it sends, and returns how long that took and what it sent.
func (c *Conn) ClosedWithin(d time.Duration) (time.Duration, string, error) {
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(d))
	rest, err := io.ReadAll(c.r)
	return time.Since(start), string(rest), err
}

// IsReset reports a connection the server closed with unread input, which
// the kernel answers with RST: an end all the same.
func IsReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "reset by peer") || strings.Contains(err.Error(), "broken pipe"))
}

// Greeting connects, reads the first line and closes.
func Greeting(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 512)
	n, err := c.Read(buf)
	line, _, _ := strings.Cut(string(buf[:n]), "\r\n")
	if n > 0 {
		err = nil
	}
	return line, err
}

// SMTPError is err as an SMTP reply, nil when it is not one.
func SMTPError(err error) *gosmtp.SMTPError {
	var e *gosmtp.SMTPError
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// Code is the reply code of err, 0 when it is not an SMTP reply.
func Code(err error) int {
	if e := SMTPError(err); e != nil {
		return e.Code
	}
	return 0
}
