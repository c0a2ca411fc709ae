package smtpserver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/smtpserver"
	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
)

// TestMessagePastItsSizeIsRefused: with InclusiveMax, a message of
// exactly MaxBytes is taken and one byte more is answered 552 5.3.4, and
// the connection goes on.
func TestMessagePastItsSizeIsRefused(t *testing.T) {
	const max = 4 << 10
	ts := start(t, smtpserver.Limits{MaxBytes: max})
	header := "Subject: size\r\n\r\n"

	c := begin(t, ts.addr)
	c.Send(string(smtpservertest.MessageOfSize(header, max)) + ".\r\n")
	c.Expect("250 ")

	c.Send("MAIL FROM:<a@client.test>\r\nRCPT TO:<b@mx.test>\r\nDATA\r\n")
	c.Expect("250 ")
	c.Expect("250 ")
	c.Expect("354 ")
	c.Send(string(smtpservertest.MessageOfSize(header, max+1)) + ".\r\n")
	if line := c.Expect("552 "); line != "552 5.3.4 Message too large: the limit is 4096 bytes" {
		t.Errorf("reply %q", line)
	}
	c.Send("NOOP\r\n")
	c.Expect("250 ")
}

// TestMessagePastItsTimeIsCut: a client that stops in the middle of its
// message is cut after ReadTimeout, and one that trickles it for ever
// after DataTimeout, each with a 421 4.4.2 and the connection closed.
func TestMessagePastItsTimeIsCut(t *testing.T) {
	const readTimeout, dataTimeout = 300 * time.Millisecond, time.Second
	ts := start(t, smtpserver.Limits{ReadTimeout: readTimeout, DataTimeout: dataTimeout})

	c := begin(t, ts.addr)
	c.Send("Subject: stalls\r\n\r\n")
	took, rest, err := c.ClosedWithin(10 * time.Second)
	if err != nil {
		t.Fatalf("stalled message not cut: %v", err)
	}
	if want := "421 4.4.2 mx.test Timeout or connection error while receiving the message, closing connection\r\n"; rest != want {
		t.Errorf("server said %q, want %q", rest, want)
	}
	if took < readTimeout/2 || took > dataTimeout {
		t.Errorf("stalled message cut after %v, want about %v", took, readTimeout)
	}

	// 4 KiB every 50 ms keeps each read within the read timeout.
	c = begin(t, ts.addr)
	c.Send("Subject: trickles\r\n\r\n")
	chunk := strings.Repeat(strings.Repeat("x", 98)+"\r\n", 40)
	defer c.Trickle([]byte(chunk), 50*time.Millisecond)()
	took, rest, err = c.ClosedWithin(10 * time.Second)
	// The server closes with the client's input unread, which the kernel
	// may answer with a reset that loses the 421 on the way.
	if err != nil && !smtpservertest.IsReset(err) {
		t.Fatalf("trickling message not cut: %v", err)
	}
	if took < dataTimeout/2 {
		t.Errorf("trickling message cut after %v, before the DATA timeout", took)
	}
	if err == nil && !strings.Contains(rest, "421 4.4.2 ") {
		t.Errorf("server said %q, want 421 4.4.2", rest)
	}
}

// TestMessageEndedNextToABareLFIsRefusedAtOnce: a client that ends its
// message with a line "." next to a bare LF, which go-smtp does not take
// for the end, is answered 500 5.5.2 at once and the connection closed,
// rather than left waiting for the read timeout; bare LFs elsewhere, and
// a dot-stuffed line ".", are taken as before.
func TestMessageEndedNextToABareLFIsRefusedAtOnce(t *testing.T) {
	ts := start(t, smtpserver.Limits{})
	for name, message := range smtpservertest.BareLFEnds {
		t.Run(name, func(t *testing.T) {
			begin(t, ts.addr).ExpectBareLFRefused(message)
		})
	}

	c := begin(t, ts.addr)
	c.Send("Subject: lf\r\n\r\none\ntwo\n\r\n..\r\nthree\r\n.\r\n")
	c.Expect("250 ")
	// A CRLF header line, then a bare LF between header and body, as
	// sloppy clients write it: taken.
	c = begin(t, ts.addr)
	c.Send("Subject: lf\r\n\nbody\r\n.\r\n")
	c.Expect("250 ")
}
