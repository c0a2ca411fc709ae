package storetest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// TestMigrationWaitsForNodes: a store that lacks migrations is not
// migrated while another node of it is alive, since a node of the old
// version would read the rewritten rows wrong (it kept answering /readyz
// while every request failed); it is once that node's heartbeat is older
// than NodeStaleAfter (a node that died), or its row is gone (one that
// stopped).
func TestMigrationWaitsForNodes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		old := newOldDatabase(t, e, 15)
		db := old.connect(t)
		mustExec(t, db, `INSERT INTO nodes (id, hostname, started_at, heartbeat_at) VALUES ('node_old', 'mail-old-1', $1, $1)`,
			time.Now().UnixMicro())
		s, err := old.open()
		if err == nil {
			s.Close()
			t.Fatal("the store was migrated while a node of it was alive")
		}
		if !strings.Contains(err.Error(), "mail-old-1") || !strings.Contains(err.Error(), "stop every node") {
			t.Errorf("the refusal %q does not name the running node and what to do", err)
		}
		if v, err := old.provider(t, db).GetDBVersion(ctx); err != nil || v != 15 {
			t.Fatalf("after the refusal the store is at version %d (%v), want 15", v, err)
		}

		// The node's last heartbeat is older than NodeStaleAfter: it died.
		mustExec(t, db, `UPDATE nodes SET heartbeat_at = $1`, time.Now().Add(-mailroom.NodeStaleAfter-5*time.Second).UnixMicro())
		s, err = old.open()
		if err != nil {
			t.Fatalf("a node silent for longer than %s kept the store from migrating: %v", mailroom.NodeStaleAfter, err)
		}
		s.Close()
		if v, err := old.provider(t, db).GetDBVersion(ctx); err != nil || v < 16 {
			t.Fatalf("the store is at version %d (%v) after opening", v, err)
		}
	})
}
