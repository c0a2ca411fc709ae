package mailroom

import (
	"crypto/rand"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// Audit entries' ids come from an entropy source of their own: NewID's is
// monotonic only within one millisecond, so an entry's id, made at the
// time of writing, between two ids a caller makes for the same instant
// (a test's fixed clock, a batch) would break their order. Entries made
// in one millisecond still sort in the order they were made.
var (
	auditIDMu      sync.Mutex
	auditIDEntropy = ulid.Monotonic(rand.Reader, 0)
)

// NewAuditID returns an audit entry's id, aud_ and a lower-case ULID.
func NewAuditID(now time.Time) string {
	auditIDMu.Lock()
	id, err := ulid.New(ulid.Timestamp(now), auditIDEntropy)
	if err != nil {
		id = ulid.MustNew(ulid.Timestamp(now), rand.Reader)
	}
	auditIDMu.Unlock()
	return PrefixAudit + strings.ToLower(id.String())
}
