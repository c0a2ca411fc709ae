package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/mailroom/mailroom"
)

// accountColumns are read by scanAccount, in its order.
const accountColumns = `id, name, created_at, request_rate, request_burst`

// CreateAccount inserts a; a taken name is ECodeAlreadyExists. The
// database assigns the account's key (Dialect.SQL.NewAccountKey), which is
// kept in memory from here on.
func (s *Store) CreateAccount(ctx context.Context, a *mailroom.Account) error {
	rate, burst := limitColumns(a.RateLimit)
	var key int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx,
			`INSERT INTO accounts (id, name, created_at, request_rate, request_burst, key) VALUES ($1, $2, $3, $4, $5, `+
				s.dialect.SQL.NewAccountKey+`) RETURNING key`,
			a.ID, a.Name, micros(a.CreatedAt), rate, burst).Scan(&key)
		if err != nil && s.dialect.Errors.UniqueViolation(err) {
			return mailroom.Errorf(mailroom.ECodeAlreadyExists, "An account named %q already exists.", a.Name)
		}
		if err != nil {
			return s.wrap(err, "create account")
		}
		return s.recordAudit(ctx, tx, a.ID, mailroom.AuditAccountCreated,
			mailroom.AuditTarget{Type: mailroom.AuditTargetAccount, ID: a.ID}, mailroom.AccountCreatedChanges(a))
	})
	if err != nil {
		return err
	}
	s.accountKeys.remember(a.ID, key)
	return nil
}

// AccountByID finds an account by id.
func (s *Store) AccountByID(ctx context.Context, id string) (*mailroom.Account, error) {
	return s.oneAccount(ctx, `SELECT `+accountColumns+` FROM accounts WHERE id = $1`, id)
}

// AccountByName finds an account by name.
func (s *Store) AccountByName(ctx context.Context, name string) (*mailroom.Account, error) {
	return s.oneAccount(ctx, `SELECT `+accountColumns+` FROM accounts WHERE name = $1`, name)
}

func (s *Store) oneAccount(ctx context.Context, query, arg string) (*mailroom.Account, error) {
	a, err := scanAccount(s.read.QueryRowContext(ctx, query, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mailroom.Errorf(mailroom.ECodeNotFound, "No account %q.", arg)
	}
	return a, s.wrap(err, "find account")
}

// ListAccounts lists every account, oldest first (an operator's view).
func (s *Store) ListAccounts(ctx context.Context) ([]*mailroom.Account, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+accountColumns+` FROM accounts ORDER BY id`)
	if err != nil {
		return nil, s.wrap(err, "list accounts")
	}
	out, err := collect(rows, scanAccount)
	return out, s.wrap(err, "list accounts")
}

// UpdateAccountLimits sets the request rate and burst of the account
// named name and returns it as stored. Running nodes read the new limit on
// their next reload (package ratelimit), not through this call.
//
// The audit entry (account.updated) names the parts that changed, and is
// written only when one did.
func (s *Store) UpdateAccountLimits(ctx context.Context, name string, rate float64, burst int) (*mailroom.Account, error) {
	r, b := limitColumns(mailroom.RateLimit{Rate: rate, Burst: burst})
	var a *mailroom.Account
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		before, err := scanAccount(tx.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM accounts WHERE name = $1`+s.dialect.Locks.Rows, name))
		if errors.Is(err, sql.ErrNoRows) {
			return mailroom.Errorf(mailroom.ECodeNotFound, "No account %q.", name)
		}
		if err != nil {
			return s.wrap(err, "update account limits")
		}
		a, err = scanAccount(tx.QueryRowContext(ctx,
			`UPDATE accounts SET request_rate = $2, request_burst = $3 WHERE name = $1 RETURNING `+accountColumns, name, r, b))
		if err != nil {
			return s.wrap(err, "update account limits")
		}
		if c := mailroom.AccountUpdatedChanges(before, a); len(c) > 0 {
			return s.recordAudit(ctx, tx, a.ID, mailroom.AuditAccountUpdated,
				mailroom.AuditTarget{Type: mailroom.AuditTargetAccount, ID: a.ID}, c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// limitColumns stores the parts of l that are not set as NULL, so that
// the account follows the defaults for them.
func limitColumns(l mailroom.RateLimit) (rate sql.NullFloat64, burst sql.NullInt64) {
	return sql.NullFloat64{Float64: l.Rate, Valid: l.Rate != 0},
		sql.NullInt64{Int64: int64(l.Burst), Valid: l.Burst != 0}
}

type scanner interface{ Scan(dest ...any) error }

func scanAccount(row scanner) (*mailroom.Account, error) {
	var a mailroom.Account
	var created int64
	var rate sql.NullFloat64
	var burst sql.NullInt64
	if err := row.Scan(&a.ID, &a.Name, &created, &rate, &burst); err != nil {
		return nil, err
	}
	a.CreatedAt = fromMicros(created)
	a.RateLimit = mailroom.RateLimit{Rate: rate.Float64, Burst: int(burst.Int64)}
	return &a, nil
}
