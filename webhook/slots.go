package webhook

import (
	"slices"
	"sync"
	"time"

	"github.com/mailroom/mailroom"
)

// slots counts the deliveries this node holds, in total and per endpoint,
// so that a claim takes no more than the node may start and skips the
// endpoints of which it holds enough (docs/api.md "Webhooks and events": a
// slow or dead endpoint never delays another's deliveries).
//
// At most perEndpoint attempts to one endpoint run at once; the node holds
// up to hold of its deliveries, the rest waiting here, claimed, to start as
// the endpoint's attempts end. A claim bounds each endpoint's share by
// hold, but not by what the node already holds of it, so an endpoint may
// briefly hold up to twice that. A fast endpoint's waiting deliveries
// start within milliseconds; a slow one's (every attempt ends within
// mailroom.WebhookTimeout) may wait so long that the lease would run out
// before their attempt ends: those are handed back rather than started
// (see stale), and another claim takes them.
type slots struct {
	mu          sync.Mutex
	perEndpoint int
	// hold is how many deliveries of one endpoint the node holds at most,
	// running and waiting: a few times perEndpoint, so that a fast
	// endpoint's next attempts are claimed while its current ones run,
	// and each claim (on SQLite, a commit of the single writer) carries
	// several rounds of its attempts instead of one.
	hold  int
	total int
	// held counts the deliveries running and waiting, on every endpoint.
	held       int
	byEndpoint map[string]*endpointQueue
	// closed is set by the drain: from then on nothing waiting starts.
	closed bool
}

type endpointQueue struct {
	running int
	waiting []*claimed
}

// claimed is a delivery this node holds, and when it claimed it.
type claimed struct {
	d  *mailroom.WebhookDelivery
	at time.Time
}

// holdRounds is how many rounds of an endpoint's attempts the node holds.
const holdRounds = 4

func newSlots(perEndpoint, total int) *slots {
	return &slots{perEndpoint: perEndpoint, hold: perEndpoint * holdRounds, total: total, byEndpoint: map[string]*endpointQueue{}}
}

// free is how many more deliveries a claim may take.
func (s *slots) free() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total - s.held
}

// busy lists the endpoints of which the node holds as many deliveries as
// it may, sorted: a claim skips them.
func (s *slots) busy() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id, q := range s.byEndpoint {
		if q.running+len(q.waiting) >= s.hold {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// admit takes a claimed delivery and reports whether it may start now;
// if not, it waits for its endpoint.
func (s *slots) admit(c *claimed) (start bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held++
	q := s.byEndpoint[c.d.EndpointID]
	if q == nil {
		q = &endpointQueue{}
		s.byEndpoint[c.d.EndpointID] = q
	}
	if q.running < s.perEndpoint {
		q.running++
		return true
	}
	q.waiting = append(q.waiting, c)
	return false
}

// finish counts an attempt to endpointID ended. It returns the endpoint's
// next waiting delivery, which the caller starts (its slot passes on), and
// whether a claim may now find more than before: the endpoint fell below
// its cap, or the node below its total.
func (s *slots) finish(endpointID string, lowWater int) (next *claimed, freed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.byEndpoint[endpointID]
	wasBusy := q.running+len(q.waiting) >= s.hold
	s.held--
	q.running--
	if len(q.waiting) > 0 && !s.closed {
		next, q.waiting = q.waiting[0], q.waiting[1:]
		q.running++
	}
	if q.running == 0 && len(q.waiting) == 0 {
		delete(s.byEndpoint, endpointID)
	}
	freed = (wasBusy && q.running+len(q.waiting) < s.hold) || s.total-s.held == lowWater
	return next, freed
}

// close stops every waiting delivery from starting and returns them, for
// the drain to hand back.
func (s *slots) close() []*claimed {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var out []*claimed
	for id, q := range s.byEndpoint {
		out = append(out, q.waiting...)
		s.held -= len(q.waiting)
		q.waiting = nil
		if q.running == 0 {
			delete(s.byEndpoint, id)
		}
	}
	return out
}
