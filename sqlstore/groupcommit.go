package sqlstore

import (
	"context"
	"database/sql"
	"sync"

	"github.com/mailroom/mailroom"
)

// maxBatch bounds one group commit: large enough to amortise the fsync
// (SQLite commits about 2,500 times a second here, but writes about 70,000
// rows a second in batches of 100), small enough to keep each
// transaction's latency low.
const maxBatch = 128

// job is one unit of work that must be durable before its caller hears
// back: an accept, or a delivery's outcome. run writes inside the shared
// transaction; an error from it aborts the whole batch, so outcomes that
// must not (a reused idempotency key) are kept by the job itself.
type job struct {
	run   func(ctx context.Context, tx *sql.Tx) error
	reply chan error
}

// committer turns concurrent writes into few transactions (DESIGN.md §2).
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
}

func newCommitter(s *Store, workers int) *committer {
	c := &committer{s: s, queue: make(chan *job, 4*maxBatch), stop: make(chan struct{})}
	for range workers {
		c.wg.Go(c.run)
	}
	return c
}

// do runs fn in a shared transaction and returns once it is committed (or
// failed). Once queued, a job is answered after its commit whatever the
// caller's context does: the answer says whether the write is stored.
func (c *committer) do(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	j := &job{run: fn, reply: make(chan error, 1)}
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return mailroom.Unavailable(sql.ErrConnDone)
	}
	select {
	case c.queue <- j:
		c.mu.RUnlock()
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
		batch := []*job{first}
	drain:
		for len(batch) < maxBatch {
			select {
			case j := <-c.queue:
				batch = append(batch, j)
			default:
				break drain
			}
		}
		c.commit(batch)
	}
}

// commit runs batch in one transaction. If it fails as a whole, each job is
// retried in a transaction of its own, so that one bad job cannot fail the
// others.
func (c *committer) commit(batch []*job) {
	ctx := context.Background()
	err := c.s.inTx(ctx, func(tx *sql.Tx) error {
		for _, j := range batch {
			if err := j.run(ctx, tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && len(batch) > 1 {
		for _, j := range batch {
			c.commit([]*job{j})
		}
		return
	}
	for _, j := range batch {
		j.reply <- err
	}
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
