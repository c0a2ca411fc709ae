package main

import (
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime/debug"

	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/membudget"
	"github.com/mailroom/mailroom/submission"
)

// requestMemoryFlags size the node's memory budget for requests in flight
// (docs/api.md "Limits", "Memory").
type requestMemoryFlags struct {
	requestMemory sizeFlag
}

func (f *requestMemoryFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.requestMemory, "request-memory", "the `SIZE` (512MiB, 2GiB) of memory that request bodies and submitted messages in flight and their decoded forms may take on this node, one account at most half; past it requests are answered 503 and SMTP submission 452 (default: a quarter of the cgroup memory limit, or of physical memory)")
}

// minRequestMemory is the smallest budget that takes the largest request
// of either surface that takes from it: a 16 MiB body of the HTTPS API
// (mhttp.MinRequestMemory) or a 16 MiB message of SMTP submission
// (submission.MinMemory), expanded by its measured factor.
const minRequestMemory = max(mhttp.MinRequestMemory, submission.MinMemory)

// fallbackRequestMemory is the budget where the machine's memory cannot be
// read (not Linux).
const fallbackRequestMemory = 1 << 30

// budget makes the budget of --request-memory, or a quarter of the
// machine's memory (membudget.Machine), never less than one largest
// request (minRequestMemory), and sets Go's soft memory limit to
// match, unless GOMEMLIMIT sets it: twice the budget (the budget, and as
// much again for the rest of the process: delivery, caches, the garbage of
// requests already answered), at most three quarters of the machine's
// memory and never under the budget. With the limit, the Go collector
// works harder as the heap nears it instead of letting it double.
func (f *requestMemoryFlags) budget(log *slog.Logger) *membudget.Budget {
	machine, source := membudget.Machine()
	total := int64(f.requestMemory)
	switch {
	case total > 0:
		source = "--request-memory"
	case machine > 0:
		total = max(machine/4, minRequestMemory)
		source = "a quarter of " + source
	default:
		total, source = fallbackRequestMemory, "the default where the machine's memory cannot be read"
	}
	limit := "GOMEMLIMIT"
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		soft := 2 * total
		if machine > 0 {
			soft = min(soft, machine/4*3)
		}
		soft = max(soft, total)
		debug.SetMemoryLimit(soft)
		limit = membudget.FormatSize(soft)
	}
	log.Info("memory budget for requests in flight", "budget", membudget.FormatSize(total), "from", source,
		"per_account", membudget.FormatSize(total/2), "go_memory_limit", limit)
	return membudget.New(total, total/2)
}

// sizeFlag is --request-memory's value: a number of bytes, written
// 512MiB, 2GiB or in bytes, at least one largest request; 0 is unset.
type sizeFlag int64

func (s *sizeFlag) String() string {
	if *s == 0 {
		return ""
	}
	return membudget.FormatSize(int64(*s))
}

func (s *sizeFlag) Set(v string) error {
	n, err := membudget.ParseSize(v)
	if err != nil {
		return err
	}
	if n < minRequestMemory {
		return fmt.Errorf("at least %s is needed: one request of the largest size (16 MiB) takes %d times its body, one submitted message %d times its size",
			membudget.FormatSize(minRequestMemory), mhttp.BodyExpansion, submission.MessageExpansion)
	}
	if n > math.MaxInt64/4 {
		return fmt.Errorf("%q is more than this node can have", v)
	}
	*s = sizeFlag(n)
	return nil
}
