package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/mailroom/mailroom"
)

// The tables that grow with the mail (messages, recipients, message_tags,
// events) hold an account as its integer key, accounts.key, not its id
// (migration 00016): the account leads nearly every index entry of a
// message, and accounts are few. The rest of the program knows accounts
// by their text ids; the store turns an id into its key for what it writes
// and looks for, and the key of each row it reads back into the id.
//
// The keys are kept in memory, per Store, both ways: the accept path
// then reads nothing to find them, and SQLite's one writer waits on no
// lookup. A key is assigned once, when its account is created (by the
// database: nodes share PostgreSQL), never changed and never given to
// another account (on PostgreSQL a sequence, on SQLite one more than any
// key stored), so a pair once read stays true for every row that holds
// the key. Only accounts that exist are kept; an id no account has is read
// again each time, so that an account created since (by another node) is
// found. Mailroom deletes no account. One deleted by hand (its API keys,
// which reference it, first, so no request can come in its name) keeps its
// pair here until the node restarts, which finds only its own mail left
// behind, as the rows found by its id did before this key: never another
// account's.
type accountKeys struct {
	byID  sync.Map // string → int64
	byKey sync.Map // int64 → string
}

// noAccountKey is the key of an id no account has: keys start at 1, so
// no row holds it, and a read for such an account finds nothing, as it
// did when rows held the account's id.
const noAccountKey int64 = 0

func (c *accountKeys) remember(id string, key int64) {
	c.byID.Store(id, key)
	c.byKey.Store(key, id)
}

func (c *accountKeys) keyOf(id string) (int64, bool) {
	v, ok := c.byID.Load(id)
	if !ok {
		return 0, false
	}
	return v.(int64), true
}

func (c *accountKeys) idOf(key int64) (string, bool) {
	v, ok := c.byKey.Load(key)
	if !ok {
		return "", false
	}
	return v.(string), true
}

// accountKey is the key of account id, for a read: noAccountKey when no
// account has the id. A key not in memory is read through tx (the read
// pool when nil).
func (s *Store) accountKey(ctx context.Context, tx *sql.Tx, id string) (int64, error) {
	if key, ok := s.accountKeys.keyOf(id); ok {
		return key, nil
	}
	var key int64
	err := s.lookupRow(ctx, tx, `SELECT key FROM accounts WHERE id = $1`, id).Scan(&key)
	if errors.Is(err, sql.ErrNoRows) {
		return noAccountKey, nil
	}
	if err != nil {
		return 0, s.wrap(err, "read account key")
	}
	s.accountKeys.remember(id, key)
	return key, nil
}

// writtenAccountKey is the key of account id, for rows to write: an id no
// account has is ECodeNotFound, as the foreign keys to accounts answered
// before migration 00015, rather than rows no read would find.
func (s *Store) writtenAccountKey(ctx context.Context, tx *sql.Tx, id string) (int64, error) {
	key, err := s.accountKey(ctx, tx, id)
	if err == nil && key == noAccountKey {
		return 0, mailroom.Errorf(mailroom.ECodeNotFound, "No account %q.", id)
	}
	return key, err
}

// lookupRow runs a single-row query in tx, or on the read pool when tx is
// nil.
func (s *Store) lookupRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	if tx == nil {
		return s.readRow(ctx, query, args...)
	}
	return s.txQueryRow(ctx, tx, query, args...)
}

// accountRefs turns the account keys of the rows a read scans into ids:
// at once for a key in memory, or after the rows are read (resolve) for
// one that is not, which cannot be read while the rows hold their
// connection.
type accountRefs struct {
	keys    *accountKeys
	pending []accountRef
}

type accountRef struct {
	key int64
	dst *string
}

func (s *Store) accountRefs() *accountRefs { return &accountRefs{keys: &s.accountKeys} }

// column scans an account key column into *dst, the account's id.
func (r *accountRefs) column(dst *string) sql.Scanner { return accountColumn{r, dst} }

type accountColumn struct {
	refs *accountRefs
	dst  *string
}

func (c accountColumn) Scan(src any) error {
	key, ok := src.(int64)
	if !ok {
		return fmt.Errorf("a stored account key of type %T", src)
	}
	if id, ok := c.refs.keys.idOf(key); ok {
		*c.dst = id
		return nil
	}
	*c.dst = ""
	c.refs.pending = append(c.refs.pending, accountRef{key, c.dst})
	return nil
}

// resolve sets the ids of the keys scanned that were not in memory, read
// through tx (the read pool when nil), one read a key. A key no account
// has is an error: its rows would be shown without their account.
func (s *Store) resolve(ctx context.Context, tx *sql.Tx, r *accountRefs) error {
	for _, ref := range r.pending {
		id, ok := s.accountKeys.idOf(ref.key)
		if !ok {
			err := s.lookupRow(ctx, tx, `SELECT id FROM accounts WHERE key = $1`, ref.key).Scan(&id)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%s: no account has the key %d, stored in a row", s.dialect.Name, ref.key)
			}
			if err != nil {
				return s.wrap(err, "read account id")
			}
			s.accountKeys.remember(id, ref.key)
		}
		*ref.dst = id
	}
	r.pending = nil
	return nil
}
