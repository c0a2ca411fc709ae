package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/mailroom/mailroom"
)

// CreateAccount inserts a; a taken name is ECodeAlreadyExists.
func (s *Store) CreateAccount(ctx context.Context, a *mailroom.Account) error {
	_, err := s.write.ExecContext(ctx,
		`INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)`,
		a.ID, a.Name, micros(a.CreatedAt))
	if err != nil && s.engine.IsUniqueViolation(err) {
		return mailroom.Errorf(mailroom.ECodeAlreadyExists, "An account named %q already exists.", a.Name)
	}
	return s.wrap(err, "create account")
}

// AccountByID finds an account by id.
func (s *Store) AccountByID(ctx context.Context, id string) (*mailroom.Account, error) {
	return s.oneAccount(ctx, `SELECT id, name, created_at FROM accounts WHERE id = $1`, id)
}

// AccountByName finds an account by name.
func (s *Store) AccountByName(ctx context.Context, name string) (*mailroom.Account, error) {
	return s.oneAccount(ctx, `SELECT id, name, created_at FROM accounts WHERE name = $1`, name)
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
	rows, err := s.read.QueryContext(ctx, `SELECT id, name, created_at FROM accounts ORDER BY id`)
	if err != nil {
		return nil, s.wrap(err, "list accounts")
	}
	out, err := collect(rows, scanAccount)
	return out, s.wrap(err, "list accounts")
}

type scanner interface{ Scan(dest ...any) error }

func scanAccount(row scanner) (*mailroom.Account, error) {
	var a mailroom.Account
	var created int64
	if err := row.Scan(&a.ID, &a.Name, &created); err != nil {
		return nil, err
	}
	a.CreatedAt = fromMicros(created)
	return &a, nil
}
