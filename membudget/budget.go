// Package membudget is the node's memory budget for work in flight
// (docs/api.md "Limits", "Memory"): each request reserves what it will
// hold before it holds it, and a reservation past the node's budget, or
// past one account's share of it, is refused at once instead of waiting,
// so that the caller answers "try again later" without reading what it
// would have had to hold. It is a weighted semaphore that never blocks:
// a wait would keep the request's connection and what it already holds,
// which is what the budget is there to bound.
package membudget

import (
	"errors"
	"sync"
)

// The two refusals. Both mean "not now": the reservation fits once other
// reservations are released.
var (
	// ErrNodeFull: the node's budget has no room for the reservation.
	ErrNodeFull = errors.New("the node's memory budget for requests in flight is taken")
	// ErrAccountShare: the account already holds its share of the budget.
	ErrAccountShare = errors.New("the account holds its share of the memory budget for requests in flight")
)

// Budget bounds the bytes reserved at once, node-wide and per account. A
// nil *Budget grants every reservation (no budget).
type Budget struct {
	total, share int64

	mu       sync.Mutex
	used     int64
	accounts map[string]*holding
}

// holding is what one account holds: in all, and by reservation.
type holding struct {
	bytes int64
	by    map[*Reservation]int64
}

// New returns a budget of total bytes, of which one account may hold at
// most share at once (share is cut to total). The account's largest
// reservation may grow past the share, up to total (largestMayPass).
func New(total, share int64) *Budget {
	return &Budget{total: total, share: min(share, total), accounts: map[string]*holding{}}
}

// Total is the budget's size in bytes.
func (b *Budget) Total() int64 {
	if b == nil {
		return 0
	}
	return b.total
}

// Share is the most one account may hold at once, in bytes.
func (b *Budget) Share() int64 {
	if b == nil {
		return 0
	}
	return b.share
}

// InUse is the bytes reserved now.
func (b *Budget) InUse() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Reserve takes n bytes for account, or refuses with ErrNodeFull or
// ErrAccountShare. The reservation is held until Release.
func (b *Budget) Reserve(account string, n int64) (*Reservation, error) {
	if b == nil {
		return nil, nil
	}
	r := &Reservation{b: b, account: account}
	if err := r.Grow(n); err != nil {
		return nil, err
	}
	return r, nil
}

// Check says whether a reservation of n bytes for account would be taken
// now, without taking it: the refusal Reserve would give, or nil. A
// surface asks it before work whose memory is reserved as it arrives (a
// body with a Content-Length, read through a Reader), so that work the
// budget has no room for is refused before any of it is read, while what
// is reserved follows what has arrived.
func (b *Budget) Check(account string, n int64) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refusal(account, nil, n)
}

// take adds n bytes to r's holding, if both bounds allow it.
func (b *Budget) take(r *Reservation, n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.refusal(r.account, r, n); err != nil {
		return err
	}
	h := b.accounts[r.account]
	if h == nil {
		h = &holding{by: map[*Reservation]int64{}}
		b.accounts[r.account] = h
	}
	b.used += n
	h.bytes += n
	h.by[r] += n
	return nil
}

// refusal is why n more bytes cannot be taken for account by r (nil for
// a reservation not yet made), or nil. b.mu is held.
//
// largestMayPass: past the account's share, the account's largest
// reservation may still grow while the node has room. Work is reserved as
// it arrives, so two large requests of one account, each within the share
// alone, would otherwise both grow until neither fits and both be
// refused, and again on every retry; the one further along goes on, the
// other is refused, and one always finishes. So too a request costing
// more than the share, when it is the account's only one. What an
// account holds past its share is then at most one request.
func (b *Budget) refusal(account string, r *Reservation, n int64) error {
	h := b.accounts[account]
	switch {
	case b.used+n > b.total:
		return ErrNodeFull
	case h != nil && h.bytes+n > b.share && !h.largest(r):
		return ErrAccountShare
	}
	return nil
}

// largest says whether r holds no less than any other reservation of the
// account (a reservation not yet made, nil, holds nothing).
func (h *holding) largest(r *Reservation) bool {
	own := h.by[r]
	for q, n := range h.by {
		if q != r && n > own {
			return false
		}
	}
	return own > 0 || h.bytes == 0
}

// give returns what r holds.
func (b *Budget) give(r *Reservation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.accounts[r.account]
	if h == nil {
		return
	}
	n := h.by[r]
	b.used -= n
	h.bytes -= n
	delete(h.by, r)
	if len(h.by) == 0 {
		delete(b.accounts, r.account)
	}
}

// Reservation is bytes held by one piece of work. A nil *Reservation (of
// a nil Budget) grows without limit and releases nothing.
type Reservation struct {
	b       *Budget
	account string

	mu       sync.Mutex
	n        int64
	released bool
}

// Grow takes n more bytes, for work whose size shows as it goes (a body
// of unknown length as it is read), or refuses as Reserve does, the bytes
// held so far staying held until Release.
func (r *Reservation) Grow(n int64) error {
	if r == nil || n <= 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.released {
		return ErrNodeFull
	}
	if err := r.b.take(r, n); err != nil {
		return err
	}
	r.n += n
	return nil
}

// Bytes is what the reservation holds now.
func (r *Reservation) Bytes() int64 {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// Release gives back everything the reservation holds; a second call does
// nothing.
func (r *Reservation) Release() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.released {
		return
	}
	r.released = true
	r.b.give(r)
}
