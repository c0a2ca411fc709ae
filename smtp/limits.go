package smtp

import (
	"context"
	"sync"
)

// limits caps the sessions in use: per host, so that one slow or throttling
// receiver holds at most a few of them, and overall, so that the node keeps
// within its sockets (docs/design.md "How mail is delivered"). A slot is held while a delivery uses a
// session, from before the dial to after the transaction; a caller waits for
// one only as long as its context allows.
type limits struct {
	perHost int
	total   chan struct{}

	mu    sync.Mutex
	hosts map[string]*hostSlots
}

// hostSlots is one host's semaphore, and how many callers hold or await it,
// so that it is forgotten when none do.
type hostSlots struct {
	sem   chan struct{}
	users int
}

func newLimits(perHost, total int) *limits {
	return &limits{perHost: perHost, total: make(chan struct{}, total), hosts: map[string]*hostSlots{}}
}

// acquire waits for a slot for host and one overall, in that order, so that
// a caller waiting on a busy host never holds an overall slot meanwhile.
func (l *limits) acquire(ctx context.Context, host string) (release func(), err error) {
	l.mu.Lock()
	h := l.hosts[host]
	if h == nil {
		h = &hostSlots{sem: make(chan struct{}, l.perHost)}
		l.hosts[host] = h
	}
	h.users++
	l.mu.Unlock()

	select {
	case h.sem <- struct{}{}:
	case <-ctx.Done():
		l.leave(host, h)
		return nil, ctx.Err()
	}
	select {
	case l.total <- struct{}{}:
	case <-ctx.Done():
		<-h.sem
		l.leave(host, h)
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-l.total
			<-h.sem
			l.leave(host, h)
		})
	}, nil
}

func (l *limits) leave(host string, h *hostSlots) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h.users--
	if h.users == 0 {
		delete(l.hosts, host)
	}
}

// active is the number of sessions in use.
func (l *limits) active() int { return len(l.total) }
