package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

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

// open opens and migrates the configured store, creating it on SQLite
// when the data directory holds none: for serve and accounts create, which
// start a store.
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

// openExisting is open for the commands that work on what a store holds
// (keys, accounts list and update): on SQLite, a data directory without a
// database is refused, and nothing is created there. (A PostgreSQL
// database exists before Mailroom does; it is migrated as open does.)
func (f *storageFlags) openExisting(ctx context.Context) (*sqlstore.Store, error) {
	if f.databaseURL != "" {
		return f.open(ctx)
	}
	s, err := sqlite.OpenExisting(ctx, f.dataDir)
	if errors.Is(err, sqlite.ErrNoStore) {
		return nil, fmt.Errorf("no store at %s (no %s there): run `mailroom serve`, `mailroom migrate` or `mailroom accounts create` first, "+
			"or give the --data-dir where it is", f.dataDir, sqlite.FileName)
	} else if err != nil {
		return nil, fmt.Errorf("SQLite in %s: %w", f.dataDir, err)
	}
	return s, nil
}

// migrate applies the migrations the configured store lacks, creating it
// on SQLite, and returns their versions.
func (f *storageFlags) migrate(ctx context.Context) ([]int64, error) {
	if f.databaseURL != "" {
		applied, err := postgres.Migrate(ctx, f.databaseURL)
		if err != nil {
			return nil, fmt.Errorf("PostgreSQL: %w", err)
		}
		return applied, nil
	}
	applied, err := sqlite.Migrate(ctx, f.dataDir)
	if err != nil {
		return nil, fmt.Errorf("SQLite in %s: %w", f.dataDir, err)
	}
	return applied, nil
}

// versionRanges writes migration versions as runs: 1–12, 14–16.
func versionRanges(versions []int64) string {
	var runs []string
	for i := 0; i < len(versions); {
		j := i
		for j+1 < len(versions) && versions[j+1] == versions[j]+1 {
			j++
		}
		run := strconv.FormatInt(versions[i], 10)
		if j > i {
			run += "–" + strconv.FormatInt(versions[j], 10)
		}
		runs = append(runs, run)
		i = j + 1
	}
	return strings.Join(runs, ", ")
}

// describe says where the data lives, without revealing a password.
func (f *storageFlags) describe() string {
	if f.databaseURL != "" {
		return "PostgreSQL"
	}
	return "SQLite at " + filepath.Join(f.dataDir, sqlite.FileName)
}
