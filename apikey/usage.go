package apikey

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mailroom/mailroom"
)

// Usage keeps API keys' lastUsedAt without a database write on every
// request. A use is recorded in memory only when the stored value is older
// than Resolution, and the pending uses are written in one batch every
// FlushEvery, and once more on Close. lastUsedAt is thus accurate to about a
// minute, which is what it is for: telling which keys are still in use.
type Usage struct {
	Store      mailroom.APIKeyStore
	Log        *slog.Logger
	Resolution time.Duration
	FlushEvery time.Duration

	mu      sync.Mutex
	pending map[string]time.Time
}

// NewUsage returns a tracker with a one-minute resolution that flushes
// every ten seconds.
func NewUsage(store mailroom.APIKeyStore, log *slog.Logger) *Usage {
	return &Usage{Store: store, Log: log, Resolution: time.Minute, FlushEvery: 10 * time.Second}
}

// Touch notes that key was used at now.
func (u *Usage) Touch(key *mailroom.APIKey, now time.Time) {
	if key.LastUsedAt != nil && now.Sub(*key.LastUsedAt) < u.Resolution {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.pending == nil {
		u.pending = map[string]time.Time{}
	}
	if now.After(u.pending[key.KeyID]) {
		u.pending[key.KeyID] = now
	}
}

// Flush writes the pending uses. On failure they are kept for the next try.
func (u *Usage) Flush(ctx context.Context) error {
	u.mu.Lock()
	batch := u.pending
	u.pending = nil
	u.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if err := u.Store.TouchAPIKeys(ctx, batch); err != nil {
		u.mu.Lock()
		for id, t := range batch {
			if u.pending == nil {
				u.pending = map[string]time.Time{}
			}
			if t.After(u.pending[id]) {
				u.pending[id] = t
			}
		}
		u.mu.Unlock()
		return err
	}
	return nil
}

// Run flushes every FlushEvery until ctx ends, then flushes once more.
func (u *Usage) Run(ctx context.Context) {
	t := time.NewTicker(u.FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := u.Flush(final); err != nil {
				u.Log.Warn("could not record API key use at shutdown", "err", err)
			}
			return
		case <-t.C:
			if err := u.Flush(ctx); err != nil {
				u.Log.Warn("could not record API key use; will retry", "err", err)
			}
		}
	}
}
