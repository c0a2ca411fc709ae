package sites

import (
	"cmp"
	"slices"
	"time"
)

// State is one site key's state as `mailroom sites` shows it (docs/api.md
// "How mail leaves").
type State struct {
	Site   string   `json:"site"`
	Source string   `json:"source"`
	MX     []string `json:"mx"`
	// Rate is the messages a minute this node allows the key now, 0 when
	// no limit is in force; MaxRate its share of the profile's (0: none).
	Rate    float64 `json:"rate"`
	MaxRate float64 `json:"maxRate"`
	// Connections are open now; MaxConnections is the limit in force, its
	// share of the profile's as lowered by the receiver.
	Connections    int `json:"connections"`
	MaxConnections int `json:"maxConnections"`
	// SuspendedUntil is set while the key is suspended.
	SuspendedUntil *time.Time `json:"suspendedUntil"`
	// RecentReplies are the last throttling replies, oldest first.
	RecentReplies []Reply `json:"recentReplies"`
}

// Reply is one throttling reply a site gave.
type Reply struct {
	At       time.Time `json:"at"`
	Code     int       `json:"code"`
	Enhanced string    `json:"enhanced"`
	Text     string    `json:"text"`
	MX       string    `json:"mx"`
}

// Snapshot returns every key's state, by site and source address.
func (t *Tracker) Snapshot() []State {
	now := t.now()
	raised := false
	t.mu.Lock()
	defer func() {
		t.mu.Unlock()
		if raised {
			t.signal()
		}
	}()
	var out []State
	for site, bySource := range t.keys {
		mx := []string{}
		if s := t.sites[site]; s != nil {
			mx = slices.Clone(s.mx)
		}
		for _, k := range bySource {
			if k.advance(now) {
				raised = true
			}
			st := State{
				Site: site, Source: k.key.Source, MX: slices.Clone(mx),
				Rate: k.rate, MaxRate: k.rateShare,
				Connections: k.open, MaxConnections: k.connLimit,
				RecentReplies: append([]Reply{}, k.replies...),
			}
			if k.suspended(now) {
				until := k.suspendedUntil
				st.SuspendedUntil = &until
			}
			out = append(out, st)
		}
	}
	slices.SortFunc(out, func(a, b State) int {
		return cmp.Or(cmp.Compare(a.Site, b.Site), cmp.Compare(a.Source, b.Source))
	})
	return out
}
