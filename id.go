package mailroom

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// Identifier prefixes (docs/api.md "Conventions"): ids are opaque to clients but
// say what they name, and sort by creation time.
const (
	PrefixAccount  = "acct_"
	PrefixMessage  = "msg_"
	PrefixEvent    = "evt_"
	PrefixTemplate = "tpl_"
	PrefixWebhook  = "wh_"
	PrefixNode     = "node_"
	PrefixClaim    = "clm_"
)

// ids makes the entropy of every id: a monotonic sequence per
// millisecond, so that the ids made for one instant are strictly
// increasing whatever ids for other instants are made between them. One
// shared ulid.Monotonic would start a new random sequence each time the
// instant changes: a batch accepted at one instant, while another request
// makes an id for the next millisecond, would get ids out of order.
var ids = idSequences{last: map[uint64][10]byte{}}

// idSequences holds the last entropy of the recentMS instants last begun;
// an older one is forgotten (a sequence lasts as long as its instant is
// being used, well under that many distinct milliseconds).
type idSequences struct {
	mu    sync.Mutex
	last  map[uint64][10]byte
	order [recentMS]uint64 // a ring of the instants begun, oldest at next
	next  int
}

const recentMS = 4096

// NewID returns prefix followed by a lower-case ULID. ULIDs this process
// makes for the same millisecond are strictly increasing (monotonic
// entropy, per millisecond), so ids sort by creation time, which cursor
// paging relies on.
func NewID(prefix string, now time.Time) string {
	return prefix + strings.ToLower(ids.make(ulid.Timestamp(now)).String())
}

func (s *idSequences) make(ms uint64) ulid.ULID {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, seen := s.last[ms]
	if !seen {
		if len(s.last) >= recentMS {
			delete(s.last, s.order[s.next])
		}
		s.order[s.next] = ms
		s.next = (s.next + 1) % recentMS
	}
	if !seen || !increment(&e) {
		// A new instant, or (after 2^80 ids within one millisecond) an
		// overflow: fresh entropy rather than a failure.
		_, _ = rand.Read(e[:])
	}
	s.last[ms] = e
	var id ulid.ULID
	if err := id.SetTime(ms); err != nil {
		panic(err) // after the year 10889
	}
	_ = id.SetEntropy(e[:]) // cannot fail: ten bytes
	return id
}

// increment adds a random number from 1 to 2^32 to e, an 80-bit
// big-endian number, as ulid.Monotonic does (a random step keeps the next
// id hard to guess); false when it overflows.
func increment(e *[10]byte) bool {
	var r [4]byte
	_, _ = rand.Read(r[:])
	add := uint64(binary.BigEndian.Uint32(r[:])) + 1
	for i := len(e) - 1; i >= 0 && add > 0; i-- {
		sum := uint64(e[i]) + add&0xff
		e[i] = byte(sum)
		add = add>>8 + sum>>8
	}
	return add == 0
}

// IsID says whether s has the form of an id NewID makes with prefix: the
// prefix and a ULID in lower case, 26 characters of Crockford's base32
// (no i, l, o or u), the first at most 7 (128 bits). A path or filter
// value of any other form names nothing, and is answered without a lookup;
// every id of this form has a stored key (the store's idKey).
func IsID(s, prefix string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	return ok && len(rest) == 26 && '0' <= rest[0] && rest[0] <= '7' &&
		!strings.ContainsFunc(rest, func(r rune) bool { return !strings.ContainsRune(crockford, r) })
}

// crockford is the alphabet of a ULID's text, in lower case.
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// IDTime is the instant an id NewID made with prefix was made, to the
// millisecond (a ULID's first 48 bits); false when id has not that form.
// A message's id is made with its CreatedAt, so that this is when the
// message was accepted.
func IDTime(id, prefix string) (time.Time, bool) {
	if !IsID(id, prefix) {
		return time.Time{}, false
	}
	u, err := ulid.ParseStrict(strings.ToUpper(id[len(prefix):]))
	if err != nil {
		return time.Time{}, false
	}
	return ulid.Time(u.Time()).UTC(), true
}
