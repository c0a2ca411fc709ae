package membudget

import "io"

// MeterStep is how much input of unknown length a Reader reserves at a
// time as it is read: small beside the largest request (16 MiB), so that
// little is reserved that is not read, large enough that the budget's
// lock is taken a few dozen times for the largest.
const MeterStep = 256 << 10

// Reader reserves what is read through it from a Reservation as it is
// read: each MeterStep bytes of input are reserved, times the surface's
// expansion factor, before they are read. Input is reserved as it
// arrives whether or not its size was declared (an HTTP body's
// Content-Length, an SMTP message's SIZE, which the surfaces Check up
// front): a client that declares much and sends little then holds only
// what it sent. A refusal ends
// the reading: Read returns it (or what Refused makes of it) from then
// on, and Err tells it. HTTPS and SMTP submission meter with it, so that
// what is read and what is reserved agree on both.
type Reader struct {
	r       io.Reader
	res     *Reservation
	factor  int64
	refused func(error) error

	read, covered int64
	budgetErr     error // the budget's refusal
	err           error // what Read returns after it
}

// NewReader meters r against res, reserving factor bytes per byte read.
// refused, when not nil, turns the budget's refusal into the error Read
// returns, for the surface to answer it in its own terms.
func NewReader(r io.Reader, res *Reservation, factor int64, refused func(error) error) *Reader {
	return &Reader{r: r, res: res, factor: factor, refused: refused}
}

func (m *Reader) Read(p []byte) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if m.read < m.covered {
		n, err := m.r.Read(p[:min(int64(len(p)), m.covered-m.read)])
		m.read += int64(n)
		return n, err
	}
	// Whether more comes is known before it is reserved: one byte is read
	// first, so that input ending where the reservation does (a declared
	// size met exactly, an empty body) reserves nothing more.
	n, err := m.r.Read(p[:1])
	if n == 0 {
		return 0, err
	}
	if gerr := m.res.Grow(MeterStep * m.factor); gerr != nil {
		m.budgetErr, m.err = gerr, gerr
		if m.refused != nil {
			m.err = m.refused(gerr)
		}
		return 0, m.err
	}
	m.covered += MeterStep
	m.read++
	return 1, err
}

// Err is the budget's refusal (ErrNodeFull, ErrAccountShare) that ended
// the reading, nil while none did.
func (m *Reader) Err() error { return m.budgetErr }
