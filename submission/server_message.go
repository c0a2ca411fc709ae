package submission

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

// messageReader is the message as Submit reads it. It extends the
// connection's read deadline at each read of readChunk bytes, up to the
// end of the DATA phase: a client may take up to the read timeout for each
// (RFC 5321 §4.5.3.2.6 gives a data block 3 minutes) but not trickle for
// ever. It counts the bytes against the limit and keeps the first error,
// so that what went wrong is known whatever Submit made of it, and calls
// atEOF once at the end of the message.
type messageReader struct {
	r     io.Reader
	conn  net.Conn // nil: leave the deadlines alone
	idle  time.Duration
	end   time.Time
	max   int64
	atEOF func()

	n        int64
	err      error
	tooLarge bool
}

func (m *messageReader) Read(p []byte) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	if m.conn != nil {
		deadline := time.Now().Add(m.idle)
		if deadline.After(m.end) {
			deadline = m.end
		}
		_ = m.conn.SetReadDeadline(deadline)
		// go-smtp's data reader fills the whole buffer before it returns,
		// so the deadline is extended every readChunk bytes, not at every
		// packet.
		if len(p) > readChunk {
			p = p[:readChunk]
		}
	}
	n, err := m.r.Read(p)
	m.n += int64(n)
	if m.n > m.max || errors.Is(err, gosmtp.ErrDataTooLarge) {
		m.tooLarge = true
		m.err = gosmtp.ErrDataTooLarge
		return n, m.err
	}
	if err != nil {
		m.err = err
		if err == io.EOF && m.atEOF != nil {
			m.atEOF()
		}
	}
	return n, err
}

// failure is the error that cut the message off, nil when it ended.
func (m *messageReader) failure() error {
	if m.err == nil || m.err == io.EOF || m.tooLarge {
		return nil
	}
	return m.err
}
