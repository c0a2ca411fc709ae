package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/mailroom/mailroom/postgres"
	"github.com/mailroom/mailroom/sqlite"
	"github.com/mailroom/mailroom/sqlstore"
)

// storageFlags are the flags every command that touches storage takes.
type storageFlags struct {
	dataDir     string
	databaseURL string
}

func (f *storageFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.dataDir, "data-dir", "./mailroom-data", "the `DIR` where SQLite, the generated TLS certificate and the secret key live")
	secretFlag(fs, &f.databaseURL, "database-url", "a PostgreSQL `URL` (postgres://…); empty for SQLite in --data-dir")
}

// open opens and migrates the configured store.
func (f *storageFlags) open(ctx context.Context) (*sqlstore.Store, error) {
	if f.databaseURL != "" {
		s, err := postgres.Open(ctx, f.databaseURL)
		if err != nil {
			return nil, fmt.Errorf("PostgreSQL: %w", err)
		}
		return s, nil
	}
	s, err := sqlite.Open(ctx, f.dataDir)
	if err != nil {
		return nil, fmt.Errorf("SQLite in %s: %w", f.dataDir, err)
	}
	return s, nil
}

// describe says where the data lives, without revealing a password.
func (f *storageFlags) describe() string {
	if f.databaseURL != "" {
		return "PostgreSQL"
	}
	return "SQLite at " + filepath.Join(f.dataDir, sqlite.FileName)
}
