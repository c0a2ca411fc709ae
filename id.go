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
// prefix and 26 lower-case ULID characters. A path or filter value of any
// other form names nothing, and is answered without a lookup.
func IsID(s, prefix string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	return ok && len(rest) == 26 && !strings.ContainsFunc(rest, func(r rune) bool { return !('0' <= r && r <= '9' || 'a' <= r && r <= 'z') })
}
