package mailroom

import (
	"crypto/rand"
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

var (
	idMu      sync.Mutex
	idEntropy = ulid.Monotonic(rand.Reader, 0)
)

// NewID returns prefix followed by a lower-case ULID. ULIDs made in the same
// millisecond by this process are strictly increasing (monotonic entropy),
// so ids sort by creation time, which cursor paging relies on.
func NewID(prefix string, now time.Time) string {
	idMu.Lock()
	id, err := ulid.New(ulid.Timestamp(now), idEntropy)
	if err != nil {
		// The monotonic counter overflowed within one millisecond
		// (2^80 ids): fall back to fresh entropy rather than fail.
		id = ulid.MustNew(ulid.Timestamp(now), rand.Reader)
	}
	idMu.Unlock()
	return prefix + strings.ToLower(id.String())
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
