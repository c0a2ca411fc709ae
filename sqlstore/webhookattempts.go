package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

const attemptColumns = `id, account_id, endpoint_id, delivery_id, event_id, event_type, attempt, status, status_code,
	error, duration_us, response_body, created_at, next_attempt_at`

// ListWebhookAttempts lists an endpoint's attempts, newest first: attempt
// ids sort by the time they were made.
func (s *Store) ListWebhookAttempts(ctx context.Context, accountID, endpointID string, f mailroom.WebhookAttemptFilter, p mailroom.Page) ([]*mailroom.WebhookAttempt, string, error) {
	after, err := parseCursor(p.Cursor)
	if err != nil {
		return nil, "", err
	}
	limit := pageLimit(p)
	where := []string{"endpoint_id = $1", "account_id = $2"}
	args := []any{endpointID, accountID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, cond+" $"+strconv.Itoa(len(args)))
	}
	if after.id != "" {
		add("id <", after.id)
	}
	if f.EventID != "" {
		add("event_id =", f.EventID)
	}
	if f.Status != "" {
		add("status =", string(f.Status))
	}
	args = append(args, limit+1)
	rows, err := s.read.QueryContext(ctx, `SELECT `+attemptColumns+` FROM webhook_attempts WHERE `+strings.Join(where, " AND ")+
		` ORDER BY id DESC LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, "", s.wrap(err, "list webhook attempts")
	}
	out, err := collect(rows, scanAttempt)
	if err != nil {
		return nil, "", s.wrap(err, "list webhook attempts")
	}
	out, next := trimPage(out, limit, func(x *mailroom.WebhookAttempt) cursor { return cursor{at: micros(x.CreatedAt), id: x.ID} })
	return out, next, nil
}

func scanAttempt(row scanner) (*mailroom.WebhookAttempt, error) {
	var a mailroom.WebhookAttempt
	var status string
	var code, next sql.NullInt64
	var duration, created int64
	if err := row.Scan(&a.ID, &a.AccountID, &a.EndpointID, &a.DeliveryID, &a.EventID, &a.EventType, &a.Attempt, &status, &code,
		&a.Error, &duration, &a.ResponseBody, &created, &next); err != nil {
		return nil, err
	}
	a.Status, a.StatusCode = mailroom.WebhookAttemptStatus(status), int(code.Int64)
	a.Duration = time.Duration(duration) * time.Microsecond
	a.CreatedAt, a.NextAttemptAt = fromMicros(created), fromNullMicros(next)
	return &a, nil
}

// DeleteExpiredWebhookData removes up to limit each of the events of no
// message (a message's go with it, DeleteExpiredMessages), the attempts
// and the deliveries created before cutoff, oldest first, and says how
// many rows went.
func (s *Store) DeleteExpiredWebhookData(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	total := 0
	for _, q := range []string{
		// By the primary key, the account's and the id together (00015).
		`DELETE FROM events WHERE (account_id, id) IN (SELECT account_id, id FROM events WHERE message_id IS NULL AND created_at < $1 ORDER BY created_at LIMIT $2)`,
		`DELETE FROM webhook_attempts WHERE id IN (SELECT id FROM webhook_attempts WHERE created_at < $1 ORDER BY created_at LIMIT $2)`,
		`DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE created_at < $1 ORDER BY created_at LIMIT $2)`,
	} {
		res, err := s.write.ExecContext(ctx, q, micros(cutoff), limit)
		if err != nil {
			return total, s.wrap(err, "delete expired webhook data")
		}
		n, _ := res.RowsAffected()
		total += int(n)
	}
	return total, nil
}
