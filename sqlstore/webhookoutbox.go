package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// The webhook outbox: deliveries are written by the transaction of their
// event (fanOut), leased by ClaimWebhookDeliveries and moved on by
// RecordWebhookOutcomes (docs/design.md "Webhooks").

// fanOut writes e's deliveries: one per enabled endpoint of its account
// that subscribes to its type, in one statement that reads the endpoints
// where they are, so an event costs no round trip more when the account
// has none. A delivery's id is its event's and endpoint's together: an
// event reaches an endpoint once, unless it is replayed.
func (s *Store) fanOut(ctx context.Context, tx *sql.Tx, e *mailroom.Event) error {
	bit := eventBit(e.Type)
	if bit == 0 {
		return nil
	}
	_, err := s.txExec(ctx, tx, `INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, attempts, due_at, created_at)
		SELECT $1 || '.' || id, account_id, id, $1, 0, $3, $3 FROM webhook_endpoints
		WHERE account_id = $2 AND enabled AND (event_mask & $4) <> 0`, e.ID, e.AccountID, micros(e.CreatedAt), bit)
	return s.wrap(err, "queue webhook deliveries")
}

// fanOutMany is fanOut for the many events of an accept: one query finds
// the enabled endpoints of their accounts (none, mostly), and the
// deliveries are written with multi-row statements.
func (s *Store) fanOutMany(ctx context.Context, tx *sql.Tx, events []*mailroom.Event) error {
	if len(events) == 0 {
		return nil
	}
	accounts := map[string]bool{}
	for _, e := range events {
		accounts[e.AccountID] = true
	}
	type endpoint struct {
		id   string
		mask int64
	}
	byAccount := map[string][]endpoint{}
	err := s.queryIn(ctx, tx, `SELECT id, account_id, event_mask FROM webhook_endpoints WHERE enabled AND account_id IN `,
		nil, slices.Sorted(maps.Keys(accounts)), func(rows *sql.Rows) error {
			var ep endpoint
			var account string
			if err := rows.Scan(&ep.id, &account, &ep.mask); err != nil {
				return err
			}
			if !slices.ContainsFunc(byAccount[account], func(x endpoint) bool { return x.id == ep.id }) {
				byAccount[account] = append(byAccount[account], ep) // the padding repeats the last account
			}
			return nil
		})
	if err != nil || len(byAccount) == 0 {
		return s.wrap(err, "find webhook endpoints")
	}
	var rows []any
	for _, e := range events {
		bit := eventBit(e.Type)
		for _, ep := range byAccount[e.AccountID] {
			if ep.mask&bit != 0 {
				at := micros(e.CreatedAt)
				rows = append(rows, e.ID+"."+ep.id, e.AccountID, ep.id, e.ID, 0, at, at)
			}
		}
	}
	return s.wrap(s.insertRows(ctx, tx, deliveryInsert, rows, nil), "queue webhook deliveries")
}

var deliveryInsert = multiInsert{
	head:  `INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, attempts, due_at, created_at) VALUES `,
	width: 7,
}

// InsertEventFor writes e with a delivery to each endpoint named, and no
// others (a webhook.test event).
func (s *Store) InsertEventFor(ctx context.Context, e *mailroom.Event, endpointIDs []string) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.insertEventOnly(ctx, tx, e); err != nil {
			return err
		}
		return s.addDeliveries(ctx, tx, e.AccountID, e.ID, endpointIDs, e.CreatedAt)
	})
}

// AddWebhookDeliveries queues a stored event again to the endpoints named
// (a replay): new deliveries with ids of their own, beside any still
// pending.
func (s *Store) AddWebhookDeliveries(ctx context.Context, accountID, eventID string, endpointIDs []string, now time.Time) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		return s.addDeliveries(ctx, tx, accountID, eventID, endpointIDs, now)
	})
}

// addDeliveries queues eventID to each endpoint named, both the
// account's (at most the account's few endpoints: one statement each).
func (s *Store) addDeliveries(ctx context.Context, tx *sql.Tx, accountID, eventID string, endpointIDs []string, now time.Time) error {
	account, err := s.accountKey(ctx, tx, accountID)
	if err != nil {
		return err
	}
	for _, id := range endpointIDs {
		res, err := s.txExec(ctx, tx, `INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, attempts, due_at, created_at)
			SELECT $1, w.account_id, w.id, $2, 0, $3, $3 FROM webhook_endpoints w, events e
			WHERE w.id = $4 AND w.account_id = $5 AND e.account_id = $6 AND e.id = $7`,
			mailroom.NewID(mailroom.PrefixWebhookDelivery, now), eventID, micros(now), id, accountID, account, eventKey(eventID))
		if err != nil {
			return s.wrap(err, "queue webhook deliveries")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return mailroom.Errorf(mailroom.ECodeNotFound, "No webhook %q with event %q in this account.", id, eventID)
		}
	}
	return nil
}

// ClaimWebhookDeliveries leases due deliveries: their due_at moves to the
// lease's end under a new token, so that a delivery whose node dies is due
// again when the lease runs out, and an outcome recorded under an older
// token changes nothing. On PostgreSQL the rows are locked with SKIP LOCKED,
// so nodes claim side by side without taking the same delivery twice.
//
// The claim goes endpoint by endpoint, the one waiting longest first, at
// most PerEndpoint deliveries each: an endpoint with a backlog (one that was
// down, or hangs) cannot fill a claim, nor make the claim read through its
// backlog to find the others' deliveries. Finding the endpoints costs an
// index probe per enabled endpoint (webhook_deliveries_by_endpoint), not
// a read of the backlog. Deliveries whose event has expired, or whose
// endpoint was turned off, are removed rather than returned.
func (s *Store) ClaimWebhookDeliveries(ctx context.Context, c mailroom.WebhookClaim) ([]*mailroom.WebhookDelivery, error) {
	// The idle poll: one probe of the due index, no transaction.
	var waiting int
	err := s.readRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries WHERE due_at <= $1 LIMIT 1) AS due`, micros(c.Now)).Scan(&waiting)
	if err != nil || waiting == 0 {
		return nil, s.wrap(err, "look for due webhook deliveries")
	}
	token := mailroom.NewID(mailroom.PrefixClaim, c.Now)
	perEndpoint := c.PerEndpoint
	if perEndpoint <= 0 {
		perEndpoint = c.Limit
	}
	skip := ""
	args := []any{micros(c.Now), c.Limit}
	for _, id := range c.SkipEndpoints {
		args = append(args, id)
	}
	if len(c.SkipEndpoints) > 0 {
		skip = ` AND w.id NOT IN (` + placeholders(3, len(c.SkipEndpoints)) + `)`
	}
	var out []*mailroom.WebhookDelivery
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		out = nil
		// The texts vary with the number of ids: not kept prepared.
		rows, err := tx.QueryContext(ctx, `SELECT id FROM (SELECT w.id,
			(SELECT min(d.due_at) FROM webhook_deliveries d WHERE d.endpoint_id = w.id) AS first_due
			FROM webhook_endpoints w WHERE w.enabled`+skip+`) AS waiting
			WHERE first_due <= $1 ORDER BY first_due LIMIT $2`, args...)
		if err != nil {
			return s.wrap(err, "claim webhook deliveries")
		}
		endpoints, err := collect(rows, func(r scanner) (string, error) {
			var id string
			return id, r.Scan(&id)
		})
		if err != nil {
			return s.wrap(err, "claim webhook deliveries")
		}
		dueBefore := map[string]int64{}
		var ids []any
		for _, endpoint := range endpoints {
			n := min(perEndpoint, c.Limit-len(ids))
			if n <= 0 {
				break
			}
			rows, err := s.txQuery(ctx, tx, `SELECT id, due_at FROM webhook_deliveries WHERE endpoint_id = $1 AND due_at <= $2
				ORDER BY due_at LIMIT $3`+s.dialect.Locks.SkipLocked, endpoint, micros(c.Now), n)
			if err != nil {
				return s.wrap(err, "claim webhook deliveries")
			}
			err = eachOf(rows, func(r scanner) error {
				var id string
				var due int64
				if err := r.Scan(&id, &due); err != nil {
					return err
				}
				ids, dueBefore[id] = append(ids, id), due
				return nil
			})
			if err != nil {
				return s.wrap(err, "claim webhook deliveries")
			}
		}
		if len(ids) == 0 {
			return nil
		}
		in := placeholders(5, len(ids))
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET claim_token = $1, claim_node = $2, due_at = $3
			WHERE due_at <= $4 AND id IN (`+in+`)`, append([]any{token, c.Node, micros(c.Now.Add(c.Lease)), micros(c.Now)}, ids...)...); err != nil {
			return s.wrap(err, "claim webhook deliveries")
		}
		rows, err = tx.QueryContext(ctx, `SELECT d.id, d.account_id, d.endpoint_id, d.attempts, d.created_at, d.event_id,
			`+qualified("w", webhookColumns)+`
			FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
			WHERE d.claim_token = $1 AND d.id IN (`+placeholders(2, len(ids))+`)`, append([]any{token}, ids...)...)
		if err != nil {
			return s.wrap(err, "read claimed webhook deliveries")
		}
		claimed, err := collect(rows, scanClaimed)
		if err != nil {
			return s.wrap(err, "read claimed webhook deliveries")
		}
		events, err := s.claimedEvents(ctx, tx, claimed)
		if err != nil {
			return err
		}
		var gone []string
		for _, d := range claimed {
			d.Event = events[d.Event.ID]
			if d.Event == nil || !d.Endpoint.Enabled {
				gone = append(gone, d.ID)
				continue
			}
			d.ClaimToken, d.DueAt = token, fromMicros(dueBefore[d.ID])
			out = append(out, d)
		}
		for _, id := range gone {
			if _, err := s.txExec(ctx, tx, `DELETE FROM webhook_deliveries WHERE id = $1`, id); err != nil {
				return s.wrap(err, "drop an orphaned webhook delivery")
			}
		}
		return nil
	})
	return out, err
}

// scanClaimed reads a claimed delivery with its endpoint. Its Event has
// only its id, until claimedEvents finds it.
func scanClaimed(row scanner) (*mailroom.WebhookDelivery, error) {
	d := &mailroom.WebhookDelivery{Event: &mailroom.Event{}}
	var created int64
	w := &mailroom.WebhookEndpoint{}
	var events string
	var prevUntil, failing sql.NullInt64
	var wCreated, wUpdated int64
	err := row.Scan(&d.ID, &d.AccountID, &d.EndpointID, &d.Attempts, &created, &d.Event.ID,
		&w.ID, &w.AccountID, &w.URL, &w.Description, &events, &w.Enabled, &w.DisabledReason,
		&w.SecretSealed, &w.PreviousSecretSealed, &prevUntil, &failing, &wCreated, &wUpdated, &w.Format)
	if err != nil {
		return nil, err
	}
	d.CreatedAt = fromMicros(created)
	w.PreviousSecretUntil, w.FailingSince = fromNullMicros(prevUntil), fromNullMicros(failing)
	w.CreatedAt, w.UpdatedAt = fromMicros(wCreated), fromMicros(wUpdated)
	d.Endpoint = w
	return d, nil
}

// claimedEvents reads the events of claimed deliveries, by account and id
// (events' primary key), in one query: the deliveries hold an event's id as
// text, the events table its key (migration 00015), so they are not joined.
// An event retention has removed is missing from the map.
func (s *Store) claimedEvents(ctx context.Context, tx *sql.Tx, claimed []*mailroom.WebhookDelivery) (map[string]*mailroom.Event, error) {
	out := map[string]*mailroom.Event{}
	var args []any
	seen := map[string]bool{}
	for _, d := range claimed {
		if !seen[d.Event.ID] {
			seen[d.Event.ID] = true
			account, err := s.accountKey(ctx, tx, d.AccountID)
			if err != nil {
				return nil, err
			}
			args = append(args, account, eventKey(d.Event.ID))
		}
	}
	if len(args) == 0 {
		return out, nil
	}
	rows, err := tx.QueryContext(ctx, ClaimedEventsQuery(len(args)/2), args...)
	if err != nil {
		return nil, s.wrap(err, "read claimed webhook events")
	}
	refs := s.accountRefs()
	events, err := collect(rows, refs.scanEventOfMessage)
	if err == nil {
		err = s.resolve(ctx, tx, refs)
	}
	for _, e := range events {
		out[e.ID] = e
	}
	return out, s.wrap(err, "read claimed webhook events")
}

// ClaimedEventsQuery reads n events by account key and event key, the
// parameters in pairs, as an OR of the pairs: each is a search of the
// primary key on both engines (older SQLite scanned the table for an IN
// list of row values). Each event comes with what its message gives its
// data (withMessages), so a claim costs no query more. Exported for
// storetest's plan check.
func ClaimedEventsQuery(n int) string {
	pairs := make([]string, n)
	for i := range pairs {
		pairs[i] = fmt.Sprintf("(account_id = $%d AND id = $%d)", 2*i+1, 2*i+2)
	}
	return withMessages(`SELECT ` + eventColumns + ` FROM events WHERE ` + strings.Join(pairs, " OR "))
}

// webhookDisabledReason is what an endpoint that failed for
// mailroom.WebhookDisableAfter shows.
const webhookDisabledReason = "Disabled automatically: every delivery attempt failed for 5 days. Fix the endpoint, then PATCH it with \"enabled\": true."

// RecordWebhookOutcomes logs attempts and moves their deliveries on, in a
// transaction shared with other writes (group commit), so that a fast
// endpoint's many small outcomes do not each pay a commit.
func (s *Store) RecordWebhookOutcomes(ctx context.Context, outcomes []*mailroom.WebhookOutcome, disableBefore time.Time) error {
	if len(outcomes) == 0 {
		return nil
	}
	return s.committer.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var attemptRows []any
		succeeded, failedAt := map[string]bool{}, map[string]time.Time{}
		for _, o := range outcomes {
			d, a := o.Delivery, o.Attempt
			var res sql.Result
			var err error
			if a.NextAttemptAt == nil {
				res, err = s.txExec(ctx, tx, `DELETE FROM webhook_deliveries WHERE id = $1 AND claim_token = $2`, d.ID, d.ClaimToken)
			} else {
				res, err = s.txExec(ctx, tx, `UPDATE webhook_deliveries SET attempts = $3, due_at = $4, claim_token = NULL, claim_node = NULL
					WHERE id = $1 AND claim_token = $2`, d.ID, d.ClaimToken, a.Attempt, micros(*a.NextAttemptAt))
			}
			if err != nil {
				return s.wrap(err, "record webhook attempt")
			}
			var code any
			if a.StatusCode != 0 {
				code = a.StatusCode
			}
			if n, _ := res.RowsAffected(); n == 0 {
				// The delivery is not this claim's any more: its lease ran
				// out and another claim took it, or its endpoint was turned
				// off meanwhile. The attempt was made all the same, so it
				// is logged, with no next attempt, but it changes nothing.
				if err := s.logStaleAttempt(ctx, tx, d, a, code); err != nil {
					return err
				}
				continue
			}
			attemptRows = append(attemptRows, a.ID, d.AccountID, d.EndpointID, d.ID, a.EventID, a.EventType, a.Attempt,
				string(a.Status), code, a.Error, a.Duration.Microseconds(), a.ResponseBody, micros(a.CreatedAt), microsOrNil(a.NextAttemptAt))
			if a.Status == mailroom.WebhookAttemptSucceeded {
				succeeded[d.EndpointID] = true
			} else if t, ok := failedAt[d.EndpointID]; !ok || a.CreatedAt.Before(t) {
				failedAt[d.EndpointID] = a.CreatedAt
			}
		}
		if err := s.insertRows(ctx, tx, attemptInsert, attemptRows, nil); err != nil {
			return s.wrap(err, "log webhook attempts")
		}
		return s.trackFailures(ctx, tx, succeeded, failedAt, disableBefore)
	})
}

// trackFailures keeps each endpoint's failing time: cleared by a success,
// started by the first failure after one. An endpoint failing since
// disableBefore is turned off and its pending deliveries dropped. The
// statements change rows only when the state changes, so that a healthy
// endpoint's outcomes lock nothing of it.
func (s *Store) trackFailures(ctx context.Context, tx *sql.Tx, succeeded map[string]bool, failedAt map[string]time.Time, disableBefore time.Time) error {
	for _, id := range slices.Sorted(maps.Keys(succeeded)) {
		if _, err := s.txExec(ctx, tx, `UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`, id); err != nil {
			return s.wrap(err, "webhook failing time")
		}
	}
	for _, id := range slices.Sorted(maps.Keys(failedAt)) {
		if succeeded[id] {
			continue
		}
		if _, err := s.txExec(ctx, tx, `UPDATE webhook_endpoints SET failing_since = $2 WHERE id = $1 AND failing_since IS NULL`,
			id, micros(failedAt[id])); err != nil {
			return s.wrap(err, "webhook failing time")
		}
		res, err := s.txExec(ctx, tx, `UPDATE webhook_endpoints SET enabled = $3, disabled_reason = $4
			WHERE id = $1 AND enabled AND failing_since <= $2`, id, micros(disableBefore), false, webhookDisabledReason)
		if err != nil {
			return s.wrap(err, "disable a failing webhook")
		}
		if n, _ := res.RowsAffected(); n > 0 {
			if _, err := s.txExec(ctx, tx, `DELETE FROM webhook_deliveries WHERE endpoint_id = $1`, id); err != nil {
				return s.wrap(err, "drop deliveries of a disabled webhook")
			}
		}
	}
	return nil
}

// logStaleAttempt logs an attempt whose delivery moved on without it,
// unless its endpoint is gone (deleted with its log).
func (s *Store) logStaleAttempt(ctx context.Context, tx *sql.Tx, d *mailroom.WebhookDelivery, a *mailroom.WebhookAttempt, code any) error {
	var n int
	if err := s.txQueryRow(ctx, tx, `SELECT count(*) FROM webhook_endpoints WHERE id = $1`, d.EndpointID).Scan(&n); err != nil || n == 0 {
		return s.wrap(err, "log webhook attempt")
	}
	_, err := s.txExec(ctx, tx, attemptInsert.text(1, s.dialect.Writes.AnonymousParams), a.ID, d.AccountID, d.EndpointID, d.ID, a.EventID,
		a.EventType, a.Attempt, string(a.Status), code, a.Error, a.Duration.Microseconds(), a.ResponseBody, micros(a.CreatedAt), nil)
	return s.wrap(err, "log webhook attempt")
}

var attemptInsert = multiInsert{
	head: `INSERT INTO webhook_attempts (id, account_id, endpoint_id, delivery_id, event_id, event_type, attempt,
		status, status_code, error, duration_us, response_body, created_at, next_attempt_at) VALUES `,
	width: 14,
}

// ReleaseWebhookClaims hands deliveries back unattempted, due when they
// were before the claim.
func (s *Store) ReleaseWebhookClaims(ctx context.Context, deliveries []*mailroom.WebhookDelivery) error {
	if len(deliveries) == 0 {
		return nil
	}
	return s.committer.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, d := range deliveries {
			if _, err := s.txExec(ctx, tx, `UPDATE webhook_deliveries SET claim_token = NULL, claim_node = NULL, due_at = $3
				WHERE id = $1 AND claim_token = $2`, d.ID, d.ClaimToken, micros(d.DueAt)); err != nil {
				return s.wrap(err, "release webhook claim")
			}
		}
		return nil
	})
}

// WebhookBacklog counts the deliveries not yet made and finds the oldest.
func (s *Store) WebhookBacklog(ctx context.Context) (int, time.Time, error) {
	var n int
	var oldest sql.NullInt64
	err := s.readRow(ctx, `SELECT count(*), min(created_at) FROM webhook_deliveries`).Scan(&n, &oldest)
	if err != nil || !oldest.Valid {
		return n, time.Time{}, s.wrap(err, "webhook backlog")
	}
	return n, fromMicros(oldest.Int64), nil
}

// qualified prefixes each column of a list with a table's alias.
func qualified(alias, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// eachOf passes each row to scan and closes rows.
func eachOf(rows *sql.Rows, scan func(scanner) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
