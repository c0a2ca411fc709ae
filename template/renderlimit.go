package template

import (
	"errors"
	"io"
	"time"
)

// errRenderTooLarge and errRenderTooSlow stop a render past its limits
// (renderLimit).
var (
	errRenderTooLarge = errors.New("render limit reached")
	errRenderTooSlow  = errors.New("render time limit reached")
)

// renderLimit is the writer a source is rendered into. It bounds the output
// (a section over a list of a thousand items, nested three deep, would
// write a thousand million copies) and the work: every text piece written,
// empty or not, counts as a step, so sections that loop over large lists
// and write nothing still stop.
//
// Work between two writes is bounded by the names' length and the values'
// size, but not their product over many sections (a section over a long
// blank string tests it for blankness each time, say): the deadline,
// checked at every write, bounds the whole render in time.
type renderLimit struct {
	w        io.Writer
	bytes    int
	steps    int
	deadline time.Time
	err      error
}

// Render bounds (docs/api.md "Templates").
const (
	// maxRenderSteps bounds the pieces of text one render writes.
	maxRenderSteps = 1 << 20
	// maxRenderTime bounds one request's rendering, all parts and layouts
	// together: real templates render in well under a millisecond.
	maxRenderTime = time.Second
)

func (l *renderLimit) Write(p []byte) (int, error) {
	l.steps--
	l.bytes -= len(p)
	switch {
	case l.err != nil:
	case l.steps < 0 || l.bytes < 0:
		l.err = errRenderTooLarge
	case time.Now().After(l.deadline):
		l.err = errRenderTooSlow
	default:
		return l.w.Write(p)
	}
	return 0, l.err
}
