package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
)

// A job that panics fails alone: its caller gets an error (an internal one,
// not "unavailable"), the jobs that shared its batch are committed, and the
// committer goes on serving.
func TestCommitterSurvivesPanickingJob(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		s := eng.Open(t)
		ctx := context.Background()
		acct := storetest.NewAccount(t, s, "acme")
		var wg sync.WaitGroup
		errs := make([]error, 20)
		for i := range errs {
			wg.Go(func() {
				errs[i] = s.Commit(ctx, func(ctx context.Context, tx *sql.Tx) error {
					if i == 7 {
						panic("a bug in one job")
					}
					_, err := tx.ExecContext(ctx, `INSERT INTO suppressions (account_id, address, reason, created_at) VALUES ($1, $2, 'manual', 0)`,
						acct.ID, "a"+string(rune('a'+i))+"@x.example")
					return err
				})
			})
		}
		wg.Wait()
		for i, err := range errs {
			switch {
			case i == 7 && (err == nil || mailroom.IsCode(err, mailroom.ECodeUnavailable)):
				t.Fatalf("the panicking job answered %v", err)
			case i != 7 && err != nil:
				t.Fatalf("job %d failed beside the panicking one: %v", i, err)
			}
		}
		list, _, err := s.ListSuppressions(ctx, acct.ID, mailroom.Page{Limit: 100})
		if err != nil || len(list) != 19 {
			t.Fatalf("%d rows committed, want 19 (%v)", len(list), err)
		}
		if err := s.Commit(ctx, func(ctx context.Context, tx *sql.Tx) error { return nil }); err != nil {
			t.Fatalf("the committer after a panic: %v", err)
		}
	})
}

// Two transactions that lock two rows in opposite orders deadlock on
// PostgreSQL, which aborts one of them; the committer runs the aborted batch
// again, so both callers succeed.
func TestCommitterRetriesDeadlocks(t *testing.T) {
	s := storetest.Postgres.Open(t)
	ctx := context.Background()
	acct := storetest.NewAccount(t, s, "acme")
	for _, a := range []string{"a@x.example", "b@x.example"} {
		if _, err := s.AddSuppression(ctx, &mailroom.Suppression{AccountID: acct.ID, Address: a, Reason: mailroom.SuppressedManual}); err != nil {
			t.Fatal(err)
		}
	}
	update := func(tx *sql.Tx, address string) error {
		_, err := tx.Exec(`UPDATE suppressions SET reason = 'complaint' WHERE account_id = $1 AND address = $2`, acct.ID, address)
		return err
	}
	// A takes a, then waits until B holds b before asking for b; B,
	// submitted once A runs (so it gets a transaction of its own), takes b
	// and asks for a. The waits happen on the first run only: a retry must
	// not wait again.
	aHolds, bHolds := make(chan struct{}), make(chan struct{})
	var onceA, onceB sync.Once
	jobA := func(ctx context.Context, tx *sql.Tx) error {
		if err := update(tx, "a@x.example"); err != nil {
			return err
		}
		onceA.Do(func() { close(aHolds); <-bHolds })
		return update(tx, "b@x.example")
	}
	jobB := func(ctx context.Context, tx *sql.Tx) error {
		if err := update(tx, "b@x.example"); err != nil {
			return err
		}
		onceB.Do(func() { close(bHolds) })
		return update(tx, "a@x.example")
	}
	var wg sync.WaitGroup
	var errA, errB error
	wg.Go(func() { errA = s.Commit(ctx, jobA) })
	<-aHolds
	wg.Go(func() { errB = s.Commit(ctx, jobB) })
	wg.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("a deadlock was not retried: %v / %v", errA, errB)
	}
}

// Concurrent accepts waiting together are written as one group
// (mergeAccepts), and that group commits as it is: it is not split into a
// transaction each, as the committer does when a group fails. Every
// caller gets its answer either way, so only the split shows a merge that
// fails (a batch field left out of the merge once made each accept commit
// alone, a seventh of the throughput).
func TestConcurrentAcceptsCommitAsOneGroup(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		s := eng.Open(t)
		ctx := context.Background()
		acct := storetest.NewAccount(t, s, "acme")
		// Hold every committer until every accept waits in the queue, so
		// that they are taken in groups.
		release := make(chan struct{})
		var releaseOnce sync.Once
		releaseAll := func() { releaseOnce.Do(func() { close(release) }) }
		defer releaseAll() // a failed test must not leave the committers held
		var held, wg sync.WaitGroup
		for range s.Committers() {
			held.Add(1)
			wg.Go(func() {
				_ = s.Commit(ctx, func(ctx context.Context, tx *sql.Tx) error {
					held.Done()
					<-release
					return nil
				})
			})
		}
		held.Wait()
		const n = 32
		at := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
		errs := make([]error, n)
		for i := range n {
			m := storetest.NewMessage(acct, at.Add(time.Duration(i)*time.Millisecond), fmt.Sprintf("r%d@x.example", i))
			m.Tags = map[string]string{"n": fmt.Sprint(i)}
			wg.Go(func() { _, errs[i] = s.AcceptMessage(ctx, m) })
		}
		if !poll.Within(10*time.Second, func() bool { return s.CommitQueue() >= n }) {
			t.Fatalf("%d of %d accepts queued", s.CommitQueue(), n)
		}
		releaseAll()
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("accept %d: %v", i, err)
			}
		}
		if split := s.SplitGroups(); split != 0 {
			t.Fatalf("%d groups failed and were committed job by job", split)
		}
		list, _, err := s.ListMessages(ctx, acct.ID, mailroom.MessageFilter{}, mailroom.Page{Limit: 100})
		if err != nil || len(list) != n {
			t.Fatalf("%d messages listed, want %d (%v)", len(list), n, err)
		}
	})
}
