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

type acceptRequest struct {
	m     *mailroom.Message
	reply chan acceptReply
}

type acceptReply struct {
	res mailroom.AcceptResult
	err error
}

// committer turns concurrent accepts into few transactions. Each worker
// takes whatever requests are waiting (at least one), writes them in one
// transaction and answers each after the commit. Nothing waits for a batch
// to fill: under light load a batch is one request and adds no latency.
type committer struct {
	s     *Store
	queue chan *acceptRequest
	stop  chan struct{}
	wg    sync.WaitGroup

	// closed is set under mu's write lock, and requests are queued under
	// its read lock: once close holds the lock, no request can arrive
	// after the workers' final drain.
	mu     sync.RWMutex
	closed bool
}

func newCommitter(s *Store, workers int) *committer {
	c := &committer{s: s, queue: make(chan *acceptRequest, 4*maxBatch), stop: make(chan struct{})}
	for range workers {
		c.wg.Go(c.run)
	}
	return c
}

func (c *committer) submit(ctx context.Context, m *mailroom.Message) (mailroom.AcceptResult, error) {
	req := &acceptRequest{m: m, reply: make(chan acceptReply, 1)}
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return mailroom.AcceptResult{}, mailroom.Unavailable(sql.ErrConnDone)
	}
	select {
	case c.queue <- req:
		c.mu.RUnlock()
	case <-ctx.Done():
		c.mu.RUnlock()
		return mailroom.AcceptResult{}, mailroom.Unavailable(ctx.Err())
	}
	// Once queued, the request is answered after its commit whatever the
	// client does: the reply says whether the message is stored.
	r := <-req.reply
	return r.res, r.err
}

func (c *committer) run() {
	for {
		var first *acceptRequest
		select {
		case first = <-c.queue:
		case <-c.stop:
			// Commit what was queued before close: every queued request
			// gets its answer.
			for {
				select {
				case r := <-c.queue:
					c.commit([]*acceptRequest{r})
				default:
					return
				}
			}
		}
		batch := []*acceptRequest{first}
	drain:
		for len(batch) < maxBatch {
			select {
			case r := <-c.queue:
				batch = append(batch, r)
			default:
				break drain
			}
		}
		c.commit(batch)
	}
}

// commit writes batch in one transaction. If the transaction fails as a
// whole, each request is retried in a transaction of its own, so that one
// bad request cannot fail the others.
func (c *committer) commit(batch []*acceptRequest) {
	replies := make([]acceptReply, len(batch))
	err := c.s.inTx(context.Background(), func(tx *sql.Tx) error {
		for i, req := range batch {
			res, err := c.s.acceptOne(context.Background(), tx, req.m)
			if err != nil && !mailroom.IsCode(err, mailroom.ECodeIdempotencyKeyReused) {
				return err
			}
			replies[i] = acceptReply{res, err}
		}
		return nil
	})
	if err == nil || len(batch) == 1 {
		for i, req := range batch {
			if err != nil {
				replies[i] = acceptReply{err: err}
			}
			req.reply <- replies[i]
		}
		return
	}
	for _, req := range batch {
		c.commit([]*acceptRequest{req})
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
