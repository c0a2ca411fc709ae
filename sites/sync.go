package sites

import (
	"context"
	"time"

	"github.com/mailroom/mailroom"
)

// Run keeps the tracker in step with the other nodes until ctx ends: every
// SyncInterval (and at once after a suspension begins) it writes this
// node's new suspensions to the store and reads everyone's, so that a
// suspension is honoured by every node within two intervals; and it closes
// ended suspensions and quiet windows, and forgets idle keys.
func (t *Tracker) Run(ctx context.Context) {
	ticker := time.NewTicker(SyncInterval)
	defer ticker.Stop()
	for {
		t.sync(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		case <-t.wake:
		}
	}
}

// sync is one round of Run.
func (t *Tracker) sync(ctx context.Context) {
	if t.opts.Nodes != nil {
		t.setNodes(t.opts.Nodes(), t.now())
	}
	if t.opts.Store != nil {
		t.exchange(ctx)
	}
	t.housekeep(t.now())
}

// exchange writes the pending suspensions, then reads the store's and takes
// them as they are: the store holds each key's latest suspension, so one
// shorter than this node's was lifted (or replaced) by someone else.
func (t *Tracker) exchange(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, SyncInterval)
	defer cancel()
	t.mu.Lock()
	writes := make([]mailroom.SiteSuspension, 0, len(t.pending))
	for _, s := range t.pending {
		writes = append(writes, s)
	}
	t.mu.Unlock()
	for _, s := range writes {
		if err := t.opts.Store.SuspendSite(ctx, s); err != nil {
			t.log.Warn("writing a site suspension failed; retrying at the next sync", "site", s.Key.Site, "source", s.Key.Source, "err", err)
			continue
		}
		t.mu.Lock()
		if t.pending[s.Key] == s {
			delete(t.pending, s.Key)
		}
		t.mu.Unlock()
	}

	now := t.now()
	list, err := t.opts.Store.SiteSuspensions(ctx, now.Add(-SuspensionMemory))
	if err != nil {
		t.log.Warn("reading site suspensions failed", "err", err)
		return
	}
	known := make(map[mailroom.SiteKey]mailroom.SiteSuspension, len(list))
	for _, s := range list {
		if prev, ok := known[s.Key]; !ok || s.Until.After(prev.Until) {
			known[s.Key] = s
		}
	}
	lifted := false
	t.mu.Lock()
	t.known = known
	for _, s := range known {
		if _, mine := t.pending[s.Key]; mine {
			continue
		}
		if s.Until.After(now) {
			// A key suspended elsewhere is made here, so that
			// ReadyAt and Reserve honour it before this node uses it.
			t.key(s.Key, now).adopt(s, now)
			continue
		}
		if k := t.keys[s.Key.Site][s.Key.Source]; k != nil {
			k.adopt(s, now)
		}
	}
	// A suspension in force here that the store no longer holds in force
	// was lifted.
	for _, bySource := range t.keys {
		for _, k := range bySource {
			if !k.suspended(now) {
				continue
			}
			if _, mine := t.pending[k.key]; mine {
				continue
			}
			if s, ok := known[k.key]; !ok || !s.Until.After(now) {
				k.suspendedUntil = time.Time{}
				if ok {
					k.suspension = s
				}
				lifted = true
			}
		}
	}
	t.mu.Unlock()
	if lifted {
		t.signal()
	}
}

// housekeep closes ended suspensions and quiet windows (signalling the room
// they give), and forgets what has been idle for IdleForget.
func (t *Tracker) housekeep(now time.Time) {
	raised := false
	t.mu.Lock()
	for site, bySource := range t.keys {
		for source, k := range bySource {
			if k.ended(now) {
				raised = true
			}
			if k.advance(now) {
				raised = true
			}
			if k.idle(now) {
				delete(bySource, source)
			}
		}
		if len(bySource) == 0 {
			delete(t.keys, site)
		}
	}
	for domain, d := range t.domains {
		if now.Sub(d.lastUsed) >= IdleForget {
			delete(t.domains, domain)
		}
	}
	for name, s := range t.sites {
		if now.Sub(s.lastUsed) >= IdleForget && len(t.keys[name]) == 0 {
			delete(t.sites, name)
		}
	}
	t.mu.Unlock()
	if raised {
		t.signal()
	}
}

// idle reports whether the key may be forgotten: unused for IdleForget, no
// connection open, no suspension within SuspensionMemory (its level
// matters to the next).
func (k *keyState) idle(now time.Time) bool {
	return now.Sub(k.lastUsed) >= IdleForget && k.open == 0 &&
		now.Sub(k.suspension.Until) >= SuspensionMemory
}
