package cluster_test

import (
	"context"
	"database/sql"
	"log/slog"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/cluster"
	"github.com/mailroom/mailroom/sqlstore"
	"github.com/mailroom/mailroom/storetest"
)

// These tests run the membership of several nodes on one real store, as
// nodes sharing storage do. Heartbeats are kept in the database's clock,
// so time passes by aging the rows in SQL (age), never by sleeping; a
// node's loop is watched through what it reports (OnNodes, OnReleased).

// interval is how often the nodes under test beat: short, so that a test
// waits little for a tick. A beat or sweep slower than this on a loaded
// machine only delays the next tick.
const interval = 50 * time.Millisecond

// waitFor bounds every wait for something a node's loop reports.
const waitFor = 20 * time.Second

// node is one node's membership and what its loop reports.
type node struct {
	*cluster.Membership
	live     chan int      // the live count after each beat
	released chan struct{} // a dead node's claims were released
}

func newNode(s mailroom.NodeStore, id string) *node {
	n := &node{live: make(chan int, 1024), released: make(chan struct{}, 1024)}
	n.Membership = &cluster.Membership{
		Store:    s,
		Node:     &mailroom.Node{ID: id, Hostname: id, StartedAt: time.Now()},
		Log:      slog.New(slog.DiscardHandler),
		Interval: interval,
		OnNodes: func(live int) {
			select {
			case n.live <- live:
			default:
			}
		},
		OnReleased: func() {
			select {
			case n.released <- struct{}{}:
			default:
			}
		},
	}
	return n
}

// join joins n and returns the live count its first beat reported.
func (n *node) join(t *testing.T) int {
	t.Helper()
	if err := n.Join(context.Background()); err != nil {
		t.Fatalf("%s joins: %v", n.Node.ID, err)
	}
	return n.nextLive(t)
}

// run starts n's loop; the returned stop ends it and waits until it has.
func (n *node) run(t *testing.T) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.Run(ctx)
	}()
	stop = func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return stop
}

// nextLive waits for n's next beat and returns the live count it saw.
func (n *node) nextLive(t *testing.T) int {
	t.Helper()
	select {
	case live := <-n.live:
		return live
	case <-time.After(waitFor):
		t.Fatalf("%s did not beat within %s", n.Node.ID, waitFor)
		return 0
	}
}

// age moves the last heartbeat of the nodes ids back by d, as if d had
// passed since.
func age(t *testing.T, db *sql.DB, d time.Duration, ids ...string) {
	t.Helper()
	for _, id := range ids {
		res, err := db.Exec(`UPDATE nodes SET heartbeat_at = heartbeat_at - $1 WHERE id = $2`, d.Microseconds(), id)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("aging %s: no row", id)
		}
	}
}

// isMember reports whether id has a row in the node table.
func isMember(t *testing.T, db *sql.DB, id string) bool {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM nodes WHERE id = $1`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// queue accepts a message to each address and has node id claim them all.
func queue(t *testing.T, s *sqlstore.Store, id string, to ...string) {
	t.Helper()
	ctx := context.Background()
	acct := storetest.NewAccount(t, s, "acme-"+id)
	for _, a := range to {
		storetest.Try(s.AcceptMessage(ctx, storetest.NewMessage(acct, time.Now(), a))).Must(t)
	}
	if got := claims(t, s, id); got != len(to) {
		t.Fatalf("%s claimed %d recipients, want %d", id, got, len(to))
	}
}

// claims has node id claim what is due and free, and says how many.
func claims(t *testing.T, s *sqlstore.Store, id string) int {
	t.Helper()
	got := storetest.Try(s.ClaimDueRecipients(context.Background(),
		mailroom.Claim{Node: id, Now: time.Now(), Lease: time.Hour, Limit: 100})).Must(t)
	return len(got)
}

// A node that keeps beating stays alive past the stale time, counted and
// holding its claims, while the time since its first beat alone would
// have made it dead.
func TestHeartbeatsKeepANodeAlive(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		open, db := storetest.Reopenable(t, e)
		s := open()
		a, b := newNode(s, "node_a"), newNode(s, "node_b")
		a.join(t)
		if live := b.join(t); live != 2 {
			t.Fatalf("%d live nodes after two joined, want 2", live)
		}
		queue(t, s, "node_a", "x@a.example", "y@a.example")

		// 25 s pass; node a beats once in its loop; 10 s more pass: 35 s
		// since it joined, 10 s since it last beat.
		age(t, db, mailroom.NodeStaleAfter-5*time.Second, "node_a", "node_b")
		stop := a.run(t)
		a.nextLive(t)
		stop()
		age(t, db, 10*time.Second, "node_a", "node_b")

		// Node b's loop beats and sweeps; its second beat follows its
		// first sweep.
		b.run(t)
		if live := b.nextLive(t); live != 2 {
			t.Errorf("node b counts %d live nodes, want 2: node a beat 10 s ago", live)
		}
		b.nextLive(t)
		if !isMember(t, db, "node_a") {
			t.Error("node a was taken for dead although it beat 10 s ago")
		}
		if got := claims(t, s, "node_b"); got != 0 {
			t.Errorf("node b took %d of node a's claims although node a beats", got)
		}
		select {
		case <-b.released:
			t.Error("node b's sweep says it released claims")
		default:
		}
	})
}

// A node silent for longer than the stale time is taken for dead: the
// sweep of another node releases its claims, which that node can then
// take, and it no longer counts among the live nodes (the rate limiter's
// divisor).
func TestSilentNodeIsReleased(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		open, db := storetest.Reopenable(t, e)
		s := open()
		a, b := newNode(s, "node_a"), newNode(s, "node_b")
		a.join(t)
		if live := b.join(t); live != 2 {
			t.Fatalf("%d live nodes after two joined, want 2", live)
		}
		queue(t, s, "node_a", "x@a.example", "y@a.example")

		age(t, db, mailroom.NodeStaleAfter+5*time.Second, "node_a")
		b.run(t)
		if live := b.nextLive(t); live != 1 {
			t.Errorf("node b counts %d live nodes, want 1: node a is silent for %s", live, mailroom.NodeStaleAfter+5*time.Second)
		}
		select {
		case <-b.released:
		case <-time.After(waitFor):
			t.Fatalf("node b did not release the silent node's claims within %s", waitFor)
		}
		if isMember(t, db, "node_a") {
			t.Error("the silent node a is still in the node table")
		}
		if got := claims(t, s, "node_b"); got != 2 {
			t.Errorf("node b took %d of the silent node's 2 recipients", got)
		}

		// Node a, only cut off, beats again: it is back in the count.
		a.join(t)
		for deadline := time.Now().Add(waitFor); b.nextLive(t) != 2; {
			if time.Now().After(deadline) {
				t.Fatalf("node a beat again, and node b still does not count it within %s", waitFor)
			}
		}
	})
}

// Storage that answers slower than the beat interval (a loaded disk
// whose commits take long) slows a node's beats and sweeps but does not
// fail them: the node stays healthy and still releases a dead node's
// claims.
func TestSlowStorageStillBeatsAndSweeps(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		open, db := storetest.Reopenable(t, e)
		s := open()
		a := newNode(s, "node_a")
		a.join(t)
		queue(t, s, "node_a", "x@a.example")
		age(t, db, mailroom.NodeStaleAfter+5*time.Second, "node_a")

		b := newNode(slowNodes{NodeStore: s, delay: 4 * interval}, "node_b")
		b.join(t)
		if !b.Healthy() {
			t.Error("node b is unhealthy after a slow beat that succeeded")
		}
		b.run(t)
		select {
		case <-b.released:
		case <-time.After(waitFor):
			t.Fatalf("node b, on slow storage, did not release the silent node's claims within %s", waitFor)
		}
		if got := claims(t, s, "node_b"); got != 1 {
			t.Errorf("node b took %d of the silent node's 1 recipient", got)
		}
	})
}

// slowNodes is node storage that takes delay longer to answer each beat
// and sweep.
type slowNodes struct {
	mailroom.NodeStore
	delay time.Duration
}

func (s slowNodes) wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(s.delay):
		return nil
	}
}

func (s slowNodes) Heartbeat(ctx context.Context, n *mailroom.Node) (int, error) {
	if err := s.wait(ctx); err != nil {
		return 0, err
	}
	return s.NodeStore.Heartbeat(ctx, n)
}

func (s slowNodes) ReleaseLostClaims(ctx context.Context, staleAfter time.Duration) (int, error) {
	if err := s.wait(ctx); err != nil {
		return 0, err
	}
	return s.NodeStore.ReleaseLostClaims(ctx, staleAfter)
}

// A node that leaves is gone at once: its claims are free for the others
// without waiting for the stale time, and it is no longer counted.
func TestLeavingRemovesTheNode(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		open, db := storetest.Reopenable(t, e)
		s := open()
		a, b := newNode(s, "node_a"), newNode(s, "node_b")
		a.join(t)
		b.join(t)
		queue(t, s, "node_a", "x@a.example", "y@a.example")

		if err := a.Leave(context.Background()); err != nil {
			t.Fatal(err)
		}
		if isMember(t, db, "node_a") {
			t.Error("node a is still in the node table after it left")
		}
		if live := b.join(t); live != 1 {
			t.Errorf("node b counts %d live nodes after node a left, want 1", live)
		}
		if got := claims(t, s, "node_b"); got != 2 {
			t.Errorf("node b took %d of the 2 recipients node a held when it left", got)
		}
	})
}
