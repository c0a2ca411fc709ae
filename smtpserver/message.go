package smtpserver

import (
	"errors"
	"io"
	"net"
	"time"

	gosmtp "github.com/emersion/go-smtp"
)

// readChunk is how much of a message a client must send within each read
// timeout.
const readChunk = 4 << 10

// MessageReader is a message's DATA as a server's handler reads it. It
// extends the connection's read deadline at each read of readChunk bytes,
// up to the end of the DATA phase: a client may take up to Idle for each
// (RFC 5321 §4.5.3.2.6 gives a data block 3 minutes) but not trickle for
// ever. It counts the bytes against Max and keeps the first error, so that
// what went wrong is known whatever the handler made of it, and calls
// AtEOF, when set, once at the end of the message.
//
// With DotEnded it hands on the message a byte at a time from go-smtp's
// reader, which fills the whole buffer before it returns: so that a line
// "." next to a bare LF, after which the client waits for the reply, is
// seen when it arrives and cuts the message (dataEnd), rather than
// leaving Read waiting for bytes that never come.
type MessageReader struct {
	R io.Reader
	// DotEnded says the message is DATA's, ended by a line "." (RFC 5321
	// §4.1.1.4), not BDAT's counted chunks (RFC 3030), in which a bare LF
	// is only a byte.
	DotEnded bool
	// Conn, when set, has its read deadline moved (not with BDAT, whose
	// connection go-smtp's own goroutine reads).
	Conn  net.Conn
	Idle  time.Duration
	End   time.Time
	Max   int64
	AtEOF func()

	n        int64
	err      error
	tooLarge bool
	end      dataEnd
}

func (m *MessageReader) Read(p []byte) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	if m.Conn != nil {
		deadline := time.Now().Add(m.Idle)
		if deadline.After(m.End) {
			deadline = m.End
		}
		_ = m.Conn.SetReadDeadline(deadline)
		// go-smtp's data reader fills the whole buffer before it returns,
		// so the deadline is extended every readChunk bytes, not at every
		// packet.
		if len(p) > readChunk {
			p = p[:readChunk]
		}
	}
	var n int
	var err error
	if m.DotEnded {
		n, err = m.readWatchingEnd(p)
	} else {
		n, err = m.R.Read(p)
	}
	m.n += int64(n)
	if m.n > m.Max || errors.Is(err, gosmtp.ErrDataTooLarge) {
		m.tooLarge = true
		m.err = gosmtp.ErrDataTooLarge
		return n, m.err
	}
	if err != nil {
		m.err = err
		if err == io.EOF && m.AtEOF != nil {
			m.AtEOF()
		}
	}
	return n, err
}

// readWatchingEnd reads p a byte at a time, up to the end of the message
// or a line "." next to a bare LF (errBareLFEnd).
func (m *MessageReader) readWatchingEnd(p []byte) (int, error) {
	for n := 0; n < len(p); {
		k, err := m.R.Read(p[n : n+1])
		if k == 1 {
			if !m.end.next(p[n]) {
				return n + 1, errBareLFEnd
			}
			n++
		}
		if err != nil || k == 0 {
			return n, err
		}
	}
	return len(p), nil
}

// Bytes is how much of the message was read.
func (m *MessageReader) Bytes() int64 { return m.n }

// TooLarge says whether the message went past Max.
func (m *MessageReader) TooLarge() bool { return m.tooLarge }

// Failure is the error that cut the message off (a timeout, a connection
// lost), nil when it ended or was only too large.
func (m *MessageReader) Failure() error {
	if m.err == nil || m.err == io.EOF || m.tooLarge {
		return nil
	}
	return m.err
}
