package smtp

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mailroom/mailroom"
)

// connKey names the connections one cap holds: a destination and the
// local source address they come from ("" when the system picks it). The
// destination is a site (mailroom.SiteKey, when Direct has Sites), or else
// one MX host or the relay. A site's limits hold per source address: the
// receiver judges each address on its own (docs/api.md "How mail leaves").
type connKey = mailroom.SiteKey

// conns keeps the connections open, per key and overall, within their caps
// (docs/design.md "How mail is delivered"), and the idle sessions among
// them for the next message that one may carry: a new session costs a TCP
// and a TLS handshake and an EHLO, several round trips.
//
// Every connection, from before its dial until it is closed, holds a slot:
// its place under its key's cap and the overall cap. A slot is given back
// only once the connection is closed, so that the caps count what the
// receivers count. A key's cap is read whenever a slot is wanted (it may
// change: a site's, as its replies adapt it), and idle sessions beyond a
// lowered cap are closed; those in use are closed when their transaction
// ends. A caller waits for a slot only as long as its context allows.
type conns struct {
	maxTotal int
	idle     time.Duration
	// capOf is a key's cap now; dynamic says it may change on its own,
	// so that waiters look again now and then.
	capOf   func(connKey) int
	dynamic bool

	mu   sync.Mutex
	keys map[connKey]*keyConns
	// open counts the slots held, and closing those of idle sessions
	// being closed to make room.
	open, closing int
	// wake is closed, and replaced, whenever a slot or a session may have
	// become available.
	wake   chan struct{}
	closed bool
	// turn is where each group of candidate keys begins its next search
	// (connRequest.group), so that equals take turns.
	turn map[string]int
	// waiting counts the deliveries waiting per destination and pool
	// (connRequest.waitKey; dynamic caps only).
	waiting map[string]int
}

// errBusy is acquire's answer when a site's connections are all in use and
// as many deliveries wait for them already as they can carry next: this one
// would only hold a message slot of the delivery runtime, which hands it
// back instead, until the site has room (docs/api.md "How mail leaves":
// mail for a site at its limit never holds other sites' mail back). Only
// sites' caps (dynamic) answer it; the relay's are waited for.
var errBusy = errors.New("every connection to the site is in use, and as many deliveries wait for them")

// keyConns is one key's connections.
type keyConns struct {
	open, closing int
	idle          []*idleSession // oldest first
}

// idleSession is a session between transactions, closed with QUIT after
// the idle timeout: receivers drop idle clients after a few minutes anyway
// (RFC 5321 §4.5.3.2.7).
type idleSession struct {
	c     *client
	key   connKey
	since time.Time
	timer *time.Timer
}

// slot is one connection's place under the caps. The connection owns it
// (client.slot) from the moment it is established; before, the delivery
// that dials does.
type slot struct {
	cs  *conns
	key connKey
	// closing is set when the slot's idle session was closed to make room
	// (guarded by cs.mu).
	closing bool
	once    sync.Once
}

// release gives the slot back, once.
func (s *slot) release() { s.once.Do(func() { s.cs.free(s) }) }

// turnsForget bounds conns.turn: past it the map starts afresh, which
// costs no more than one search starting at the first key.
const turnsForget = 4096

func newConns(maxTotal int, idle time.Duration, capOf func(connKey) int, dynamic bool) *conns {
	return &conns{maxTotal: maxTotal, idle: idle, capOf: capOf, dynamic: dynamic,
		keys: map[connKey]*keyConns{}, wake: make(chan struct{}), turn: map[string]int{}, waiting: map[string]int{}}
}

// connRequest is what a delivery asks of the connections.
type connRequest struct {
	// keys are the candidates, one per source address of the delivery's
	// pool; group names them for taking turns (site or host, and pool).
	keys  []connKey
	group string
	// rank says whether a session with an MX host may carry the
	// delivery (-1: it may not) and how much it is to be preferred (0
	// first): the domain's own MX hosts in the order to try them, then
	// the site's other hosts. Nil: every session of the keys carries it.
	rank func(host string) int
	// prefer, when set, is the only host whose idle session is taken: a
	// greylisted recipient goes back to the host that refused it.
	prefer string
	// fits, when set, says whether an idle session may carry the delivery
	// at all: its TLS meets the delivery's requirement (tlsGate.fits).
	// One that does not stays idle for others.
	fits func(c *client) bool
}

// lease is what acquire hands a delivery: an idle session, or a slot for
// a new connection.
type lease struct {
	key connKey
	// index is the key's place in connRequest.keys.
	index int
	c     *client
	s     *slot
}

// acquire waits until the delivery can have a session under key's caps:
// it prefers a key with an idle session that carries it, then one with
// room under its cap (and the overall cap), taking turns among equals.
func (cs *conns) acquire(ctx context.Context, w connRequest) (lease, error) {
	var recheck <-chan time.Time
	if cs.dynamic {
		t := time.NewTicker(capRecheck)
		defer t.Stop()
		recheck = t.C
	}
	waiting := false
	defer func() {
		if waiting {
			cs.mu.Lock()
			if cs.waiting[w.waitKey()]--; cs.waiting[w.waitKey()] <= 0 {
				delete(cs.waiting, w.waitKey())
			}
			cs.mu.Unlock()
		}
	}()
	for {
		cs.mu.Lock()
		l, ok := cs.try(w)
		if !ok && cs.dynamic && !waiting {
			if cs.waiting[w.waitKey()] >= cs.capsOf(w) {
				cs.mu.Unlock()
				return lease{}, errBusy
			}
			cs.waiting[w.waitKey()]++
			waiting = true
		}
		wake := cs.wake
		cs.mu.Unlock()
		if ok {
			return l, nil
		}
		select {
		case <-wake:
		case <-recheck:
		case <-ctx.Done():
			return lease{}, ctx.Err()
		}
	}
}

// waitKey names the connections w waits for: its destination's, from its
// pool.
func (w connRequest) waitKey() string {
	if len(w.keys) == 0 {
		return w.group
	}
	return w.keys[0].Site + "\x00" + w.group
}

// capsOf is the sum of the caps of w's keys: how many deliveries the
// connections can carry at once. The caller holds cs.mu.
func (cs *conns) capsOf(w connRequest) int {
	n := 0
	for _, k := range w.keys {
		n += cs.capOf(k)
	}
	return n
}

// capRecheck is how often a waiter looks at caps that change on their own
// (a site's connection limit raised again with time).
const capRecheck = time.Second

// try is one look for a session or a slot; the caller holds cs.mu.
func (cs *conns) try(w connRequest) (lease, bool) {
	n := len(w.keys)
	start := cs.turn[w.group]
	pick := func(i int) lease {
		if len(cs.turn) >= turnsForget {
			clear(cs.turn)
		}
		cs.turn[w.group] = (start + i + 1) % n
		return lease{key: w.keys[(start+i)%n], index: (start + i) % n}
	}
	for i := range n {
		k := w.keys[(start+i)%n]
		kc := cs.keys[k]
		if kc == nil {
			continue
		}
		cs.fit(k, kc)
		if s := kc.takeIdle(w); s != nil {
			l := pick(i)
			l.c = s.c
			return l, true
		}
	}
	full := cs.open >= cs.maxTotal
	for i := range n {
		k := w.keys[(start+i)%n]
		kc := cs.keys[k]
		open := 0
		if kc != nil {
			open = kc.open
		}
		if open >= cs.capOf(k) {
			// At its cap; a cap of 0 (a site that refuses connections,
			// while it waits after the refusal) takes none.
			continue
		}
		if full {
			// The overall cap is reached: the oldest idle session of any
			// key gives way, and the slot is taken once it has closed.
			if cs.open-cs.closing >= cs.maxTotal {
				if s := cs.oldestIdle(); s != nil {
					cs.evict(s)
				}
			}
			return lease{}, false
		}
		if kc == nil {
			kc = &keyConns{}
			cs.keys[k] = kc
		}
		kc.open++
		cs.open++
		l := pick(i)
		l.s = &slot{cs: cs, key: k}
		return l, true
	}
	// Every key is at its cap. Idle sessions this delivery cannot use (to
	// another host, or without the TLS it requires) give way to its own,
	// one at a time, as they would to any waiting delivery.
	for i := range n {
		k := w.keys[(start+i)%n]
		if kc := cs.keys[k]; kc != nil && len(kc.idle) > 0 && kc.open-kc.closing >= cs.capOf(k) {
			cs.evict(kc.idle[0])
			break
		}
	}
	return lease{}, false
}

// takeIdle takes the idle session that carries the delivery with the best
// rank, the most recently used among equals, or nil. Taking the newest
// leaves the older ones to time out when traffic falls.
func (kc *keyConns) takeIdle(w connRequest) *idleSession {
	best, bestRank := -1, 0
	for i := len(kc.idle) - 1; i >= 0; i-- {
		host := kc.idle[i].c.host
		if w.prefer != "" && host != w.prefer {
			continue
		}
		if w.fits != nil && !w.fits(kc.idle[i].c) {
			continue
		}
		r := 0
		if w.rank != nil {
			r = w.rank(host)
		}
		if r >= 0 && (best < 0 || r < bestRank) {
			best, bestRank = i, r
		}
	}
	if best < 0 {
		return nil
	}
	s := kc.idle[best]
	kc.idle = append(kc.idle[:best:best], kc.idle[best+1:]...)
	// If the timer already fired, its expire finds the session gone and
	// leaves it to us.
	s.timer.Stop()
	return s
}

// fit closes idle sessions of k beyond its cap, which may have been
// lowered since they were put back. The caller holds cs.mu.
func (cs *conns) fit(k connKey, kc *keyConns) {
	for len(kc.idle) > 0 && kc.open-kc.closing > cs.capOf(k) {
		cs.evict(kc.idle[0])
	}
}

// trim is fit from outside: after a throttle lowered k's cap.
func (cs *conns) trim(k connKey) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if kc := cs.keys[k]; kc != nil {
		cs.fit(k, kc)
	}
}

// evict closes idle session s to make room; its slot is counted as
// closing until the connection is closed. The caller holds cs.mu.
func (cs *conns) evict(s *idleSession) {
	kc := cs.keys[s.key]
	kc.removeIdle(s)
	s.timer.Stop()
	if sl := s.c.slot; sl != nil {
		sl.closing = true
		kc.closing++
		cs.closing++
	}
	go s.c.quit()
}

// oldestIdle is the idle session that has waited longest, of any key.
func (cs *conns) oldestIdle() *idleSession {
	var oldest *idleSession
	for _, kc := range cs.keys {
		if len(kc.idle) > 0 && (oldest == nil || kc.idle[0].since.Before(oldest.since)) {
			oldest = kc.idle[0]
		}
	}
	return oldest
}

// removeIdle takes s out of kc's idle sessions (kc may be nil), reporting
// whether it was there. The caller holds cs.mu.
func (kc *keyConns) removeIdle(s *idleSession) bool {
	if kc == nil {
		return false
	}
	for i, x := range kc.idle {
		if x == s {
			kc.idle = append(kc.idle[:i:i], kc.idle[i+1:]...)
			return true
		}
	}
	return false
}

// put keeps c, which finished a transaction cleanly, for the next
// delivery its key carries; it is closed instead when conns is closed or
// the key is over its cap.
func (cs *conns) put(c *client) {
	k := c.slot.key
	cs.mu.Lock()
	kc := cs.keys[k]
	if cs.closed || kc.open-kc.closing > cs.capOf(k) {
		cs.mu.Unlock()
		go c.quit()
		return
	}
	s := &idleSession{c: c, key: k, since: time.Now()}
	s.timer = time.AfterFunc(cs.idle, func() { cs.expire(s) })
	kc.idle = append(kc.idle, s)
	cs.broadcast()
	cs.mu.Unlock()
}

// giveBack returns what a delivery acquired and did not use.
func (cs *conns) giveBack(l lease) {
	switch {
	case l.c != nil:
		cs.put(l.c)
	case l.s != nil:
		l.s.release()
	}
}

// expire closes s if it is still idle.
func (cs *conns) expire(s *idleSession) {
	cs.mu.Lock()
	found := cs.keys[s.key].removeIdle(s)
	cs.mu.Unlock()
	if found {
		s.c.quit()
	}
}

// free gives a slot back.
func (cs *conns) free(s *slot) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	kc := cs.keys[s.key]
	kc.open--
	cs.open--
	if s.closing {
		kc.closing--
		cs.closing--
	}
	cs.forgetIfUnused(s.key, kc)
	cs.broadcast()
}

// forgetIfUnused drops a key that holds nothing, so that the map keeps
// only the destinations in use.
func (cs *conns) forgetIfUnused(k connKey, kc *keyConns) {
	if kc.open == 0 && len(kc.idle) == 0 {
		delete(cs.keys, k)
	}
}

// broadcast wakes every waiter. The caller holds cs.mu.
func (cs *conns) broadcast() {
	close(cs.wake)
	cs.wake = make(chan struct{})
}

// close ends every idle session, waiting for their QUITs, and makes put
// close sessions from now on.
func (cs *conns) close() {
	cs.mu.Lock()
	cs.closed = true
	var all []*idleSession
	for _, kc := range cs.keys {
		for _, s := range kc.idle {
			s.timer.Stop()
			all = append(all, s)
		}
		kc.idle = nil
	}
	cs.mu.Unlock()

	var wg sync.WaitGroup
	for _, s := range all {
		wg.Go(s.c.quit)
	}
	wg.Wait()
}
