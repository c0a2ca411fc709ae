package smtp

import (
	"sync"
	"time"
)

// pool keeps sessions that finished a transaction cleanly, per host, for
// the next message to the same host (docs/design.md "How mail is delivered"): a new session costs a
// TCP and a TLS handshake and an EHLO, several round trips. A session waits
// at most the idle timeout and is then closed with QUIT; receivers drop idle
// clients themselves after a few minutes (RFC 5321 §4.5.3.2.7).
//
// Sessions are only put back by a delivery holding the host's slot (see
// limits), and a new one is only dialled when the pool has none for the
// host, so a host never has more sessions open, in use and idle together,
// than its cap.
type pool struct {
	maxPerHost int
	idle       time.Duration

	mu     sync.Mutex
	hosts  map[string][]*idleSession // oldest first
	count  int
	closed bool
}

type idleSession struct {
	c     *client
	host  string
	since time.Time
	timer *time.Timer
}

func newPool(maxPerHost int, idle time.Duration) *pool {
	return &pool{maxPerHost: maxPerHost, idle: idle, hosts: map[string][]*idleSession{}}
}

// get takes the most recently used idle session to host, or nil. Taking the
// newest leaves the older ones to time out when traffic falls.
func (p *pool) get(host string) *client {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.hosts[host]
	if len(list) == 0 {
		return nil
	}
	s := list[len(list)-1]
	p.remove(s)
	// If the timer already fired, its expire finds the session gone and
	// leaves it to us.
	s.timer.Stop()
	return s.c
}

// put keeps c for the next delivery to host, or closes it when the pool is
// closed or the host already has its fill.
func (p *pool) put(host string, c *client) {
	p.mu.Lock()
	if p.closed || len(p.hosts[host]) >= p.maxPerHost {
		p.mu.Unlock()
		go c.quit()
		return
	}
	s := &idleSession{c: c, host: host, since: time.Now()}
	s.timer = time.AfterFunc(p.idle, func() { p.expire(s) })
	p.hosts[host] = append(p.hosts[host], s)
	p.count++
	p.mu.Unlock()
}

// expire closes s if it is still idle.
func (p *pool) expire(s *idleSession) {
	p.mu.Lock()
	found := p.remove(s)
	p.mu.Unlock()
	if found {
		s.c.quit()
	}
}

// trim closes the oldest idle sessions, of any host, until at most max
// remain: they give way to a new session when the overall cap is reached.
func (p *pool) trim(max int) {
	var victims []*idleSession
	p.mu.Lock()
	for p.count > max && p.count > 0 {
		var oldest *idleSession
		for _, list := range p.hosts {
			if len(list) > 0 && (oldest == nil || list[0].since.Before(oldest.since)) {
				oldest = list[0]
			}
		}
		p.remove(oldest)
		oldest.timer.Stop()
		victims = append(victims, oldest)
	}
	p.mu.Unlock()
	for _, s := range victims {
		go s.c.quit()
	}
}

// remove takes s out of the pool, reporting whether it was there. The
// caller holds p.mu.
func (p *pool) remove(s *idleSession) bool {
	list := p.hosts[s.host]
	for i, x := range list {
		if x == s {
			list = append(list[:i:i], list[i+1:]...)
			if len(list) == 0 {
				delete(p.hosts, s.host)
			} else {
				p.hosts[s.host] = list
			}
			p.count--
			return true
		}
	}
	return false
}

// close ends every idle session and makes put close sessions from now on.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	var all []*idleSession
	for _, list := range p.hosts {
		all = append(all, list...)
	}
	p.hosts = map[string][]*idleSession{}
	p.count = 0
	p.mu.Unlock()

	var wg sync.WaitGroup
	for _, s := range all {
		s.timer.Stop()
		wg.Go(s.c.quit)
	}
	wg.Wait()
}
