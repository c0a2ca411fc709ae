package e2e

import (
	"bytes"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
)

// sessions is the most connections a node opens to the one MX host these
// tests deliver to: the default site profile's (docs/api.md "How mail
// leaves"), which bounds the exchanges in flight at a signal or a kill.
var sessions = mailroom.DefaultSiteProfile.MaxConnections

var nodeLine = regexp.MustCompile(`node=(node_[0-9a-z]+)|"node":"(node_[0-9a-z]+)"`)

// nodeID is the node id a server logged at start.
func (s *server) nodeID(t *testing.T) string {
	t.Helper()
	m := nodeLine.FindStringSubmatch(s.Stderr())
	if m == nil {
		t.Fatalf("no node id in the log:\n%s", s.Stderr())
	}
	return m[1] + m[2]
}

// flood sends from 8 clients until stop is closed or the server goes away,
// remembering every accepted message and every status seen. Two of its
// eight senders send batches.
type flood struct {
	mu       sync.Mutex
	accepted map[string]bool
	statuses map[int]int
	n        atomic.Int64
	stop     chan struct{}
	wg       sync.WaitGroup
}

func startFlood(t *testing.T, base string, s *server, key string) *flood {
	f := &flood{accepted: map[string]bool{}, statuses: map[int]int{}, stop: make(chan struct{})}
	client := apitest.New(t, base, s.roots())
	client.T = quietT{t}
	for g := range 8 {
		f.wg.Go(func() {
			for {
				select {
				case <-f.stop:
					return
				default:
				}
				var status int
				var ids []string
				if g < 2 { // batches of 20, beside single sends
					const n = 20
					status, ids = tryBatch(client, key, f.n.Add(n)-n+1, n)
				} else {
					var id string
					status, id = trySend(client, key, f.n.Add(1))
					ids = []string{id}
				}
				f.mu.Lock()
				f.statuses[status]++
				for _, id := range ids {
					if status == 200 {
						f.accepted[id] = true
					}
				}
				f.mu.Unlock()
				if status == 0 {
					return // the server is gone
				}
			}
		})
	}
	return f
}

func (f *flood) count() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.accepted) }

func (f *flood) end() { close(f.stop); f.wg.Wait() }

// waitAllArrived polls until every accepted message reached the receiver.
func (w *world) waitAllArrived(t *testing.T, accepted map[string]bool, within time.Duration, after string) {
	t.Helper()
	missing := 0
	if !poll.Within(within, func() bool {
		got := w.receivedByMessageID()
		missing = 0
		for id := range accepted {
			if got[messageIDHeader(id)] == 0 {
				missing++
			}
		}
		return missing == 0
	}) {
		t.Fatalf("%d of %d accepted messages did not arrive within %v %s", missing, len(accepted), within, after)
	}
}

// startAcmeNode starts a node on eng that delivers into w, with flags
// added, makes the account acme (its request rate lifted: these tests send
// and read back more than 100 a second) and verifies shop.example for it.
// It returns the node, acme's key, and a function that starts the node
// again on the same storage.
func (w *world) startAcmeNode(t *testing.T, eng storetest.Engine, flags ...string) (*server, string, func() *server) {
	t.Helper()
	work := t.TempDir()
	dataDir := filepath.Join(work, "data")
	storage := append([]string{"--data-dir", dataDir}, eng.Storage(t)...)
	args := append(append(w.flags(), storage...), flags...)
	node := startServer(t, dataDir, args...)
	key := printedKey.FindString(cli(t, work, nil, append([]string{"accounts", "create", "acme"}, storage...)...))
	cli(t, work, nil, append([]string{"accounts", "update", "acme", "--rate", "100000", "--burst", "100000"}, storage...)...)
	w.verifyDomain(t, node.client, key, "shop.example")
	return node, key, func() *server { return startServer(t, dataDir, args...) }
}

// sendMany sends n messages one after another through c, each of which
// must be accepted, and returns their ids.
func sendMany(t *testing.T, c *apitest.Client, key string, n int) map[string]bool {
	t.Helper()
	accepted := map[string]bool{}
	for i := range n {
		status, id := trySend(c, key, int64(i))
		if status != 200 {
			t.Fatalf("send %d: %d", i, status)
		}
		accepted[id] = true
	}
	return accepted
}

// SIGTERM during a flood of sends, with a slow receiver: the node answers
// nothing 5xx but 503, lets the SMTP exchanges in flight finish instead of
// cutting them off mid-DATA, hands back what it had not started, and exits 0;
// after a restart every accepted message arrives, and none twice.
func TestSIGTERMDrains(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		w := newWorld(t)
		w.mx.SlowData(50 * time.Millisecond)
		node, key, restart := w.startAcmeNode(t, eng)

		f := startFlood(t, node.base, node, key)
		if !poll.Within(60*time.Second, func() bool { return f.count() >= 200 && len(w.mx.Messages()) >= 10 }) {
			t.Fatalf("the flood did not get going: %d accepted, %d received", f.count(), len(w.mx.Messages()))
		}
		atSignal := len(w.mx.Messages())
		err := node.stop(syscall.SIGTERM)
		f.end()
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, node.Stderr())
		}
		// Only the exchanges in flight at the signal (at most one per
		// connection the default site profile allows to the one MX host,
		// and as many whose data was on its way) finish; mail waiting for
		// a session is handed back, not started during the drain.
		if after := len(w.mx.Messages()) - atSignal; after > 2*sessions {
			t.Errorf("%d messages were delivered after SIGTERM: the drain started new exchanges", after)
		}
		for status, n := range f.statuses {
			if status >= 500 && status != 503 {
				t.Errorf("%d requests answered %d during the drain", n, status)
			}
		}
		if !strings.Contains(node.Stderr(), "stopped") {
			t.Fatalf("no orderly stop in the log:\n%s", node.Stderr())
		}

		restart()
		w.waitAllArrived(t, f.accepted, 60*time.Second, "of the restart")
		dups := 0
		for _, n := range w.receivedByMessageID() {
			dups += n - 1
		}
		if dups > 0 {
			t.Fatalf("%d messages arrived twice: the drain cut exchanges off", dups)
		}
		t.Logf("%d accepted (statuses %v), none twice", len(f.accepted), f.statuses)
	})
}

// Two nodes on one PostgreSQL; one is killed while it holds claimed mail.
// The other delivers everything within 2 minutes, and only exchanges that
// were in flight at the kill arrive twice.
func TestKillNineOneOfTwoNodes(t *testing.T) {
	dbURL := postgresOrSkip(t)
	w := newWorld(t)
	w.mx.SlowData(100 * time.Millisecond)
	work := t.TempDir()
	// Nodes sharing PostgreSQL share the secret key that seals DKIM keys.
	secret := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	args := append(w.flags(), "--database-url", dbURL, "--secret-key", secret)
	a := startServer(t, filepath.Join(work, "a"), args...)
	key := printedKey.FindString(cli(t, work, nil, "accounts", "create", "acme", "--database-url", dbURL))
	w.verifyDomain(t, a.client, key, "shop.example")

	// Node a alone takes the backlog; node b joins once a holds claims.
	f := startFlood(t, a.base, a, key)
	going := poll.Within(60*time.Second, func() bool { return f.count() >= 300 })
	f.end()
	if !going {
		t.Fatalf("the flood did not get going: %d accepted", f.count())
	}
	db := adminDB(t, dbURL)
	held := func() int {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM recipients WHERE claim_node = $1`, a.nodeID(t)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	poll.Until(t, 30*time.Second, "node a holds claims", func() bool { return held() > 0 })
	b := startServer(t, filepath.Join(work, "b"), args...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("node b's log:\n%s", lastLines(b.Stderr(), 40))
		}
	})
	poll.Until(t, 30*time.Second, "node a holds claims with b running", func() bool { return held() > 0 })
	receivedAtKill := len(w.mx.Messages())
	a.stop(syscall.SIGKILL)
	killed := time.Now()

	w.waitAllArrived(t, f.accepted, 2*time.Minute, "of the kill")
	first := map[string]int{}
	dups := 0
	for i, m := range w.mx.Messages() {
		id := messageIDOf(m.Data)
		if at, seen := first[id]; seen {
			dups++
			// Node a had at most the default site profile's sessions to
			// the one MX host, each with one exchange in flight, and
			// possibly as many outcomes not yet committed.
			if at < receivedAtKill-2*sessions {
				t.Errorf("message %s arrived twice, first long before the kill (%d of %d)", id, at, receivedAtKill)
			}
			continue
		}
		first[id] = i
	}
	if dups > 2*sessions {
		t.Errorf("%d messages arrived twice; at most the %d exchanges in flight at the kill may", dups, 2*sessions)
	}
	t.Logf("%d accepted; everything arrived %v after the kill; %d twice", len(f.accepted), time.Since(killed).Round(time.Second), dups)
}

// PostgreSQL cut off under a running node: sends answer 503 with
// Retry-After, /readyz 503 and /healthz 200; once the database is back the
// node accepts and delivers again without a restart, and nothing accepted
// before the outage is lost.
func TestPostgresCutOff(t *testing.T) {
	dbURL := postgresOrSkip(t)
	w := newWorld(t)
	work := t.TempDir()
	node := startServer(t, filepath.Join(work, "a"), append(w.flags(), "--database-url", dbURL)...)
	key := printedKey.FindString(cli(t, work, nil, "accounts", "create", "acme", "--database-url", dbURL))
	w.verifyDomain(t, node.client, key, "shop.example")
	accepted := sendMany(t, node.client, key, 5)

	u, _ := url.Parse(dbURL)
	name := strings.TrimPrefix(u.Path, "/")
	admin := adminDB(t, "")
	cut := func(allow bool) {
		t.Helper()
		if _, err := admin.Exec(fmt.Sprintf(`ALTER DATABASE %s ALLOW_CONNECTIONS %t`, name, allow)); err != nil {
			t.Fatal(err)
		}
		if !allow {
			if _, err := admin.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, name); err != nil {
				t.Fatal(err)
			}
		}
	}
	cut(false)
	t.Cleanup(func() { cut(true) })

	c := apitest.New(t, node.base, node.roots())
	c.HTTP.Timeout = 20 * time.Second // a hang fails the request, and the test
	r := c.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: key, Body: map[string]any{
		"from": "orders@shop.example", "to": "late@example.net", "subject": "Order", "text": "Thanks"}})
	if r.Status != 503 || r.Code() != "service_unavailable" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("send with the database cut off: %d %s (Retry-After %q)\n%s", r.Status, r.Body, r.Header.Get("Retry-After"), lastLines(node.Stderr(), 10))
	}
	if r := c.Do(apitest.Request{Method: "GET", Path: "/readyz"}); r.Status != 503 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("readyz with the database cut off: %d %s", r.Status, r.Body)
	}
	if r := c.Do(apitest.Request{Method: "GET", Path: "/healthz"}); r.Status != 200 {
		t.Fatalf("healthz with the database cut off: %d %s", r.Status, r.Body)
	}

	cut(true)
	var id string
	poll.Until(t, 30*time.Second, "a send accepted after the database came back", func() bool {
		var status int
		status, id = trySend(c, key, 100)
		return status == 200
	})
	accepted[id] = true
	poll.Until(t, 10*time.Second, "readyz 200 after the database came back", func() bool {
		return c.Do(apitest.Request{Method: "GET", Path: "/readyz"}).Status == 200
	})
	w.waitAllArrived(t, accepted, 60*time.Second, "of the database's return")

	// The world's receiver offers no STARTTLS: the log and the event say the
	// mail went in clear text.
	var msg struct {
		Recipients []struct {
			Status      string `json:"status"`
			Unencrypted bool   `json:"unencrypted"`
		} `json:"recipients"`
		Events []struct {
			Type   string         `json:"type"`
			Detail map[string]any `json:"detail"`
		} `json:"events"`
	}
	poll.Until(t, 30*time.Second, "the last send recorded delivered", func() bool {
		r := c.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: key})
		_ = json.Unmarshal(r.Body, &msg)
		return len(msg.Recipients) == 1 && msg.Recipients[0].Status == "delivered"
	})
	last := msg.Events[len(msg.Events)-1]
	if !msg.Recipients[0].Unencrypted || last.Type != "email.delivered" || last.Detail["unencrypted"] != true {
		t.Fatalf("a delivery in clear text is not shown as such: %+v", msg)
	}
}

// adminDB opens url (the test server's own when empty).
func adminDB(t *testing.T, dbURL string) *sql.DB {
	t.Helper()
	if dbURL == "" {
		dbURL = os.Getenv(storetest.EnvDatabaseURL)
	}
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// lastLines is the end of a log, for failure messages.
func lastLines(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// One of two nodes loses PostgreSQL (its role may no longer log in) while it
// holds claimed mail and a slow receiver keeps its sessions busy. It stops
// starting SMTP exchanges as soon as storage refuses its writes, the other
// node takes its claims once its heartbeat is stale, and only the exchanges
// in flight when it was cut off arrive twice.
func TestNodeCutOffFromStorage(t *testing.T) {
	storetest.RequirePostgres(t)
	// The role is made (and its removal registered) before the database,
	// so that it is dropped after the database is: a role that still owns
	// or may connect to a database cannot be dropped.
	admin := adminDB(t, "")
	role := fmt.Sprintf("mailroom_node_%d", time.Now().UnixNano())
	if _, err := admin.Exec(`CREATE ROLE ` + role + ` LOGIN SUPERUSER`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, role)
		if _, err := admin.Exec(`DROP ROLE IF EXISTS ` + role); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	dbURL := postgresOrSkip(t)
	// Migrated by the administrator, so that the node's role owns nothing.
	cli(t, t.TempDir(), nil, "migrate", "--database-url", dbURL)
	u, _ := url.Parse(dbURL)
	u.User = url.User(role)
	roleURL := u.String()

	w := newWorld(t)
	w.mx.SlowData(500 * time.Millisecond)
	work := t.TempDir()
	secret := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32))
	a := startServer(t, filepath.Join(work, "a"), append(w.flags(), "--database-url", roleURL, "--secret-key", secret)...)
	key := printedKey.FindString(cli(t, work, nil, "accounts", "create", "acme", "--database-url", dbURL))
	w.verifyDomain(t, a.client, key, "shop.example")
	accepted := sendMany(t, a.client, key, 100)
	db := adminDB(t, dbURL)
	poll.Until(t, 30*time.Second, "node a holds claims", func() bool {
		var n int
		_ = db.QueryRow(`SELECT count(*) FROM recipients WHERE claim_node = $1`, a.nodeID(t)).Scan(&n)
		return n > 0
	})
	startServer(t, filepath.Join(work, "b"), append(w.flags(), "--database-url", dbURL, "--secret-key", secret)...)

	receivedAtCut := len(w.mx.Messages())
	if _, err := admin.Exec(`ALTER ROLE ` + role + ` NOLOGIN`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, role); err != nil {
		t.Fatal(err)
	}
	w.waitAllArrived(t, accepted, 2*time.Minute, "of node a's cut-off")
	// Duplicates come when node b re-sends what node a sent but could not
	// record: count once every outcome is recorded.
	poll.Until(t, 2*time.Minute, "every outcome recorded", func() bool {
		var n int
		_ = db.QueryRow(`SELECT count(*) FROM recipients WHERE status <> 'delivered'`).Scan(&n)
		return n == 0
	})
	dups := 0
	for _, n := range w.receivedByMessageID() {
		dups += n - 1
	}
	// Node a has at most the default site profile's sessions to the one MX
	// host; each may finish the exchange it had begun, and begin one more
	// before its first outcome fails to record.
	if dups > 2*sessions {
		t.Fatalf("%d messages arrived twice (%d had arrived at the cut): node a went on sending after losing storage", dups, receivedAtCut)
	}
	t.Logf("%d accepted, %d arrived before the cut, %d twice", len(accepted), receivedAtCut, dups)
}
