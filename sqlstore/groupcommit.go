package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mailroom/mailroom"
)

// maxBatch bounds one group commit: large enough to amortise the fsync
// (SQLite commits about 2,500 times a second here, but writes about 70,000
// rows a second in batches of 100), small enough to keep each
// transaction's latency low.
const maxBatch = 128

// Bounds of a write under a failing or overloaded database (docs/api.md "Limits"
// "Staying up"): a job waits at most commitWait for its turn (it is then
// answered 503 without being run), and a batch's transaction may take at
// most commitTimeout, so that every caller hears back within seconds.
const (
	commitWait    = 5 * time.Second
	commitTimeout = 5 * time.Second
	// retryConflicts is how many times a batch that PostgreSQL aborted for
	// a deadlock or a serialization failure is run again.
	retryConflicts = 3
)

// job is one unit of work that must be durable before its caller hears
// back: an accept, or a delivery's outcome. run writes inside the shared
// transaction; an error from it aborts the whole batch, so outcomes that
// must not (a reused idempotency key) are kept by the job itself.
type job struct {
	run func(ctx context.Context, tx *sql.Tx) error
	// accept, when set, is what run writes: messages to accept, which the
	// committer writes together with the other accepts of its group, in
	// one set of multi-row statements (mergeAccepts), instead of calling
	// run.
	accept *acceptJob
	// locks are the ids of the messages whose rows the job changes: the
	// batch locks all of its jobs' messages first, in one global order,
	// so that two batches cannot deadlock on them.
	locks []string
	// deadline is when the caller stops waiting for the job to start.
	deadline time.Time
	reply    chan error
}

// committer turns concurrent writes into few transactions (docs/design.md "How a message travels").
// Each worker takes whatever jobs are waiting (at least one), runs them in
// one transaction and answers each after the commit. Nothing waits for a
// batch to fill: under light load a batch is one job and adds no latency.
type committer struct {
	s     *Store
	queue chan *job
	stop  chan struct{}
	wg    sync.WaitGroup

	// closed is set under mu's write lock, and jobs are queued under its
	// read lock: once close holds the lock, no job can arrive after the
	// workers' final drain.
	mu     sync.RWMutex
	closed bool

	// split counts the groups that failed and were run again job by job:
	// a job that fails only beside others (a bug in merging them) shows
	// here, where its callers, answered by the second runs, see nothing.
	split atomic.Int64
}

func newCommitter(s *Store, workers int) *committer {
	c := &committer{s: s, queue: make(chan *job, 4*maxBatch), stop: make(chan struct{})}
	for range workers {
		c.wg.Go(c.run)
	}
	return c
}

// do runs fn in a shared transaction and returns once it is committed (or
// failed). locks names the messages fn changes (see job.locks). A job that
// cannot start within commitWait (or the caller's deadline, if sooner) is
// answered ECodeUnavailable without being run. Once started, a job is
// answered after its commit whatever the caller's context does: the answer
// says whether the write is stored.
func (c *committer) do(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error, locks ...string) error {
	return c.submit(ctx, &job{run: fn, locks: locks})
}

// submit queues j and waits for its answer, as do describes.
func (c *committer) submit(ctx context.Context, j *job) error {
	deadline := time.Now().Add(commitWait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	j.deadline, j.reply = deadline, make(chan error, 1)
	wait := time.NewTimer(time.Until(deadline))
	defer wait.Stop()
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return mailroom.Unavailable(sql.ErrConnDone)
	}
	select {
	case c.queue <- j:
		c.mu.RUnlock()
	case <-wait.C:
		c.mu.RUnlock()
		return mailroom.Unavailable(errors.New("no commit slot in time"))
	case <-ctx.Done():
		c.mu.RUnlock()
		return mailroom.Unavailable(ctx.Err())
	}
	return <-j.reply
}

func (c *committer) run() {
	for {
		var first *job
		select {
		case first = <-c.queue:
		case <-c.stop:
			// Commit what was queued before close: every job is answered.
			for {
				select {
				case j := <-c.queue:
					c.commit([]*job{j})
				default:
					return
				}
			}
		}
		c.commit(takeWaiting(c.queue, first, maxBatch))
	}
}

// takeWaiting is first and whatever else is already waiting in queue, up
// to max in all: a batch never waits to fill, so under light load it is
// one item and adds no latency.
func takeWaiting[T any](queue chan T, first T, max int) []T {
	batch := []T{first}
	for len(batch) < max {
		select {
		case x := <-queue:
			batch = append(batch, x)
		default:
			return batch
		}
	}
	return batch
}

// commit runs batch in one transaction. Jobs whose callers stopped waiting
// are answered without being run. A deadlock or serialization failure is
// retried; an unreachable database fails the batch as a whole; any other
// failure (one bad job) is retried job by job, so that one job cannot fail
// the others.
func (c *committer) commit(batch []*job) {
	live := batch[:0:0]
	now := time.Now()
	for _, j := range batch {
		if now.After(j.deadline) {
			j.reply <- mailroom.Unavailable(errors.New("the write waited too long for its turn"))
			continue
		}
		live = append(live, j)
	}
	if len(live) == 0 {
		return
	}
	var err error
	for try := 0; ; try++ {
		err = c.once(live)
		if err == nil || !c.s.dialect.Errors.Conflict(err) || try == retryConflicts {
			break
		}
	}
	if err != nil && len(live) > 1 && !mailroom.IsCode(err, mailroom.ECodeUnavailable) {
		c.split.Add(1)
		for _, j := range live {
			c.commit([]*job{j})
		}
		return
	}
	for _, j := range live {
		j.reply <- err
	}
}

// once runs the jobs in one transaction, bounded by commitTimeout, after
// locking every message they change in id order.
func (c *committer) once(jobs []*job) error {
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	return c.s.inTx(ctx, func(tx *sql.Tx) error {
		if err := c.s.lockMessages(ctx, tx, jobs); err != nil {
			return err
		}
		var accepts []*job
		for _, j := range jobs {
			if j.accept != nil && len(jobs) > 1 {
				accepts = append(accepts, j)
				continue
			}
			if err := runJob(ctx, tx, j); err != nil {
				return err
			}
		}
		if len(accepts) == 0 {
			return nil
		}
		return runJob(ctx, tx, &job{run: func(ctx context.Context, tx *sql.Tx) error {
			return c.s.mergeAccepts(ctx, tx, accepts)
		}})
	})
}

// runJob runs one job, turning a panic into an error: the committer must
// outlive a bug in one job, whose caller then gets an internal error.
func runJob(ctx context.Context, tx *sql.Tx, j *job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in a storage write: %v\n%s", p, debug.Stack())
		}
	}()
	return j.run(ctx, tx)
}

// lockMessages locks the message rows the jobs change, in one statement
// ordered by id: every transaction takes its message locks in the same
// order, so none waits for another that waits for it. SQLite's single
// writer needs no lock.
func (s *Store) lockMessages(ctx context.Context, tx *sql.Tx, jobs []*job) error {
	if s.dialect.Locks.Rows == "" {
		return nil
	}
	ids := map[string]bool{}
	for _, j := range jobs {
		for _, id := range j.locks {
			ids[id] = true
		}
	}
	if len(ids) == 0 {
		return nil
	}
	args := make([]any, 0, len(ids))
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		args = append(args, messageKey(id))
	}
	rows, err := tx.QueryContext(ctx, `SELECT id FROM messages WHERE id IN (`+placeholders(1, len(args))+`) ORDER BY id`+s.dialect.Locks.Rows, args...)
	if err != nil {
		return s.wrap(err, "lock messages")
	}
	for rows.Next() {
	}
	return s.wrap(errors.Join(rows.Err(), rows.Close()), "lock messages")
}

// close stops the workers once they have committed what is queued. It may
// be called more than once.
func (c *committer) close() {
	c.mu.Lock()
	already := c.closed
	c.closed = true
	c.mu.Unlock()
	if !already {
		close(c.stop)
	}
	c.wg.Wait()
}
