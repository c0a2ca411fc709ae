package postgres

import (
	"fmt"

	"github.com/jackc/pgx/v5"
)

// pgconnConfig parses a postgres:// URL. The error never repeats the URL,
// which may hold a password.
func pgconnConfig(url string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("the database URL is not a valid PostgreSQL connection string")
	}
	return cfg, nil
}
