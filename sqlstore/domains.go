package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mailroom/mailroom"
)

const domainColumns = `id, account_id, name, status, dkim_selector, dkim_public_key, dkim_private_key,
	return_path_domain, records, created_at, verified_at, last_checked_at, next_check_at, failing_since, ip_pool, tls, checks, dkim_keys, receiving,
	open_tracking, click_tracking`

// CreateDomain inserts d if its account has fewer than max domains. On
// PostgreSQL the account's row is locked first, so that concurrent creates
// count one after the other (SQLite's one writer does so by itself), as
// CreateWebhook and CreateTemplate do.
func (s *Store) CreateDomain(ctx context.Context, d *mailroom.Domain, max int) error {
	records, err := json.Marshal(d.Records)
	if err != nil {
		return err
	}
	checks, err := marshalHealthChecks(d.Checks)
	if err != nil {
		return err
	}
	keys, err := marshalDKIMKeys(d.DKIMKeys)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT id FROM accounts WHERE id = $1`+s.dialect.Locks.Rows, d.AccountID).Scan(new(string))
		if errors.Is(err, sql.ErrNoRows) {
			return mailroom.Errorf(mailroom.ECodeNotFound, "No account %q.", d.AccountID)
		}
		if err != nil {
			return s.wrap(err, "lock account")
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM domains WHERE account_id = $1`, d.AccountID).Scan(&n); err != nil {
			return s.wrap(err, "count domains")
		}
		if n >= max {
			return mailroom.DomainLimit.Err(n, max)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO domains (`+domainColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`,
			d.ID, d.AccountID, d.Name, string(d.Status), d.DKIMSelector, d.DKIMPublicKey, d.DKIMPrivateKeySealed,
			d.ReturnPathDomain, string(records), micros(d.CreatedAt), microsOrNil(d.VerifiedAt),
			microsOrNil(d.LastCheckedAt), microsOrNil(d.NextCheckAt), microsOrNil(d.FailingSince), d.IPPool, string(d.TLS), checks, keys, boolInt(d.Receiving),
			d.Tracking.Opens, d.Tracking.Clicks)
		if err != nil && s.dialect.Errors.UniqueViolation(err) {
			return mailroom.Errorf(mailroom.ECodeAlreadyExists, "This account already has the domain %s.", d.Name)
		}
		if err != nil {
			return s.wrap(err, "create domain")
		}
		return s.recordAudit(ctx, tx, d.AccountID, mailroom.AuditDomainCreated, domainTarget(d.ID), mailroom.DomainCreatedChanges(d))
	})
}

// CountDomains counts an account's domains (domains_by_account serves it).
func (s *Store) CountDomains(ctx context.Context, accountID string) (int, error) {
	var n int
	err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM domains WHERE account_id = $1`, accountID).Scan(&n)
	return n, s.wrap(err, "count domains")
}

// Domain finds an account's domain by name.
func (s *Store) Domain(ctx context.Context, accountID, name string) (*mailroom.Domain, error) {
	d, err := scanDomain(s.read.QueryRowContext(ctx,
		`SELECT `+domainColumns+` FROM domains WHERE account_id = $1 AND name = $2`, accountID, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mailroom.Errorf(mailroom.ECodeNotFound, "No domain %q in this account.", name)
	}
	return d, s.wrap(err, "find domain")
}

// DomainByID finds an account's domain by id.
func (s *Store) DomainByID(ctx context.Context, accountID, id string) (*mailroom.Domain, error) {
	d, err := scanDomain(s.read.QueryRowContext(ctx,
		`SELECT `+domainColumns+` FROM domains WHERE account_id = $1 AND id = $2`, accountID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mailroom.Errorf(mailroom.ECodeNotFound, "No domain %q in this account.", id)
	}
	return d, s.wrap(err, "find domain")
}

// DomainStatus reads the status of an account's domain.
func (s *Store) DomainStatus(ctx context.Context, accountID, name string) (mailroom.DomainStatus, mailroom.Tracking, error) {
	var status string
	var t mailroom.Tracking
	err := s.readRow(ctx, `SELECT status, open_tracking, click_tracking FROM domains WHERE account_id = $1 AND name = $2`,
		accountID, name).Scan(&status, &t.Opens, &t.Clicks)
	if errors.Is(err, sql.ErrNoRows) {
		return "", mailroom.Tracking{}, mailroom.Errorf(mailroom.ECodeNotFound, "No domain %q in this account.", name)
	}
	if err != nil {
		return "", mailroom.Tracking{}, s.wrap(err, "domain status")
	}
	return mailroom.DomainStatus(status), t, nil
}

// ListDomains lists an account's domains, newest first.
func (s *Store) ListDomains(ctx context.Context, accountID string, p mailroom.Page) ([]*mailroom.Domain, string, error) {
	after, err := parseCursor(p.Cursor)
	if err != nil {
		return nil, "", err
	}
	limit := pageLimit(p)
	rows, err := s.read.QueryContext(ctx, `SELECT `+domainColumns+` FROM domains
		WHERE account_id = $1 AND (created_at < $2 OR (created_at = $2 AND id < $3))
		ORDER BY created_at DESC, id DESC LIMIT $4`, accountID, after.at, after.id, limit+1)
	if err != nil {
		return nil, "", s.wrap(err, "list domains")
	}
	out, err := collect(rows, scanDomain)
	if err != nil {
		return nil, "", s.wrap(err, "list domains")
	}
	out, next := trimPage(out, limit, func(x *mailroom.Domain) cursor { return cursor{at: micros(x.CreatedAt), id: x.ID} })
	return out, next, nil
}

// DeleteDomain removes an account's domain, with its audit entry
// (domain.deleted).
func (s *Store) DeleteDomain(ctx context.Context, accountID, name string) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var id string
		err := tx.QueryRowContext(ctx, `DELETE FROM domains WHERE account_id = $1 AND name = $2 RETURNING id`, accountID, name).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return mailroom.Errorf(mailroom.ECodeNotFound, "No domain %q in this account.", name)
		}
		if err != nil {
			return s.wrap(err, "delete domain")
		}
		return s.recordAudit(ctx, tx, accountID, mailroom.AuditDomainDeleted, domainTarget(id), mailroom.DomainDeletedChanges(name))
	})
}

// domainTarget names a domain in the audit log by its id.
func domainTarget(id string) mailroom.AuditTarget {
	return mailroom.AuditTarget{Type: mailroom.AuditTargetDomain, ID: id}
}

// UpdateDomain applies u's fields to an account's domain in one UPDATE
// (COALESCE keeps a column whose field is nil) and returns the domain as it
// now is. The row is locked and read first, so that the audit entry
// (domain.updated) names what changed, and is written only when something
// did.
func (s *Store) UpdateDomain(ctx context.Context, accountID, name string, u mailroom.DomainUpdate) (*mailroom.Domain, error) {
	if u.Empty() {
		return s.Domain(ctx, accountID, name)
	}
	var tls, pool, opens, clicks any
	if u.TLS != nil {
		tls = string(*u.TLS)
	}
	if u.IPPool != nil {
		pool = *u.IPPool
	}
	if u.OpenTracking != nil {
		opens = *u.OpenTracking
	}
	if u.ClickTracking != nil {
		clicks = *u.ClickTracking
	}
	const update = `UPDATE domains SET tls = COALESCE($3, tls), ip_pool = COALESCE($4, ip_pool),
		open_tracking = COALESCE($5, open_tracking), click_tracking = COALESCE($6, click_tracking)
		WHERE account_id = $1 AND name = $2 RETURNING ` + domainColumns
	var d *mailroom.Domain
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		before, err := scanDomain(tx.QueryRowContext(ctx, `SELECT `+domainColumns+` FROM domains
			WHERE account_id = $1 AND name = $2`+s.dialect.Locks.Rows, accountID, name))
		if errors.Is(err, sql.ErrNoRows) {
			return mailroom.Errorf(mailroom.ECodeNotFound, "No domain %q in this account.", name)
		}
		if err != nil {
			return s.wrap(err, "update domain")
		}
		d, err = scanDomain(tx.QueryRowContext(ctx, update, accountID, name, tls, pool, opens, clicks))
		if err != nil {
			return s.wrap(err, "update domain")
		}
		// The Ed25519 key changes the domain's keys and records, read
		// under the row's lock and written in the same transaction, so
		// that a concurrent rotation or check is not lost.
		if u.DKIMEd25519 != nil {
			var key mailroom.DomainDKIMKey
			if u.Ed25519Key != nil {
				key = *u.Ed25519Key
			} else if *u.DKIMEd25519 && d.DKIMKeyOf(mailroom.DKIMKeyEd25519) == nil {
				// Removed since package domain saw it there and made no key.
				return mailroom.Errorf(mailroom.ECodeInvalidState, "The Ed25519 key of %s was removed meanwhile; ask again.", name)
			}
			if mailroom.SetDKIMEd25519(d, *u.DKIMEd25519, key) {
				if err := s.writeDomainKeys(ctx, tx, d); err != nil {
					return err
				}
			}
		}
		// Receiving changes the flag and the records, under the same
		// lock, with the next check brought forward when it turns on.
		if u.Receiving != nil {
			if *u.Receiving && u.ReceivingRecord == nil {
				return errors.New("update domain: receiving turned on without its record")
			}
			var rec mailroom.DNSRecord
			if u.ReceivingRecord != nil {
				rec = *u.ReceivingRecord
			}
			if mailroom.SetReceiving(d, *u.Receiving, rec, time.Now()) {
				records, err := json.Marshal(d.Records)
				if err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `UPDATE domains SET receiving = $2, records = $3, next_check_at = $4 WHERE id = $1`,
					d.ID, boolInt(d.Receiving), string(records), microsOrNil(d.NextCheckAt)); err != nil {
					return s.wrap(err, "update domain receiving")
				}
			}
		}
		if c := mailroom.DomainUpdatedChanges(before, d); len(c) > 0 {
			return s.recordAudit(ctx, tx, accountID, mailroom.AuditDomainUpdated, domainTarget(d.ID), c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// RotateDomainDKIM adds next as the domain's pending DKIM key in one
// transaction: the row is read under its lock, so that two rotations at
// once cannot both find no pending key.
func (s *Store) RotateDomainDKIM(ctx context.Context, accountID, name string, next mailroom.DomainDKIMKey) (*mailroom.Domain, error) {
	var d *mailroom.Domain
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		d, err = scanDomain(tx.QueryRowContext(ctx, `SELECT `+domainColumns+` FROM domains
			WHERE account_id = $1 AND name = $2`+s.dialect.Locks.Rows, accountID, name))
		if errors.Is(err, sql.ErrNoRows) {
			return mailroom.Errorf(mailroom.ECodeNotFound, "No domain %q in this account.", name)
		}
		if err != nil {
			return s.wrap(err, "rotate domain DKIM key")
		}
		if err := mailroom.RotateDKIM(d, next); err != nil {
			return err
		}
		if err := s.writeDomainKeys(ctx, tx, d); err != nil {
			return err
		}
		return s.recordAudit(ctx, tx, accountID, mailroom.AuditDomainDKIMRotated, domainTarget(d.ID),
			mailroom.DomainDKIMRotatedChanges(d.DKIMSelector, next.Selector))
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// writeDomainKeys writes d's DKIM keys, active and others, and its records.
func (s *Store) writeDomainKeys(ctx context.Context, tx *sql.Tx, d *mailroom.Domain) error {
	records, err := json.Marshal(d.Records)
	if err != nil {
		return err
	}
	keys, err := marshalDKIMKeys(d.DKIMKeys)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE domains SET dkim_selector = $2, dkim_public_key = $3, dkim_private_key = $4,
		dkim_keys = $5, records = $6 WHERE id = $1`,
		d.ID, d.DKIMSelector, d.DKIMPublicKey, d.DKIMPrivateKeySealed, keys, string(records))
	return s.wrap(err, "write domain DKIM keys")
}

// marshalDKIMKeys is the dkim_keys column's JSON: "[]" for none.
func marshalDKIMKeys(keys []mailroom.DomainDKIMKey) (string, error) {
	if len(keys) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(keys)
	return string(b), err
}

// SaveDomainCheck stores a check's outcome and its event in one transaction.
// The DKIM keys are read again under the row's lock and settled with the
// check's records: a rotation or Ed25519 change made while the check
// looked up DNS is kept, and its record joins (pending).
//
// The status before is read under the same lock: a check that moves it is
// audited (domain.verified), by whoever asked for the check (an API key
// through POST …/verify, the system for a re-check).
func (s *Store) SaveDomainCheck(ctx context.Context, d *mailroom.Domain, event *mailroom.Event) error {
	checks, err := marshalHealthChecks(d.Checks)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var was, keys, stored string
		var receiving int64
		err := tx.QueryRowContext(ctx, `SELECT status, dkim_selector, dkim_public_key, dkim_private_key, dkim_keys, receiving, records FROM domains
			WHERE id = $1`+s.dialect.Locks.Rows, d.ID).Scan(&was, &d.DKIMSelector, &d.DKIMPublicKey, &d.DKIMPrivateKeySealed, &keys, &receiving, &stored)
		if errors.Is(err, sql.ErrNoRows) {
			return mailroom.Errorf(mailroom.ECodeNotFound, "The domain %s was deleted.", d.Name)
		}
		if err != nil {
			return s.wrap(err, "save domain check")
		}
		if d.DKIMKeys, err = unmarshalDKIMKeys(d.ID, keys); err != nil {
			return err
		}
		now := time.Now()
		if d.LastCheckedAt != nil {
			now = *d.LastCheckedAt
		}
		mailroom.SettleDKIMKeys(d, now)
		if err := s.writeDomainKeys(ctx, tx, d); err != nil {
			return err
		}
		// Receiving turned on or off while the check ran keeps its
		// record, or its removal.
		var storedRecords []mailroom.DNSRecord
		if err := json.Unmarshal([]byte(stored), &storedRecords); err != nil {
			return fmt.Errorf("domain %s records: %w", d.ID, err)
		}
		mailroom.SettleReceivingRecord(d, receiving != 0, storedRecords)
		records, err := json.Marshal(d.Records)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE domains SET status = $2, records = $3, verified_at = $4,
			last_checked_at = $5, next_check_at = $6, failing_since = $7, lease_until = NULL, checks = $8 WHERE id = $1`,
			d.ID, string(d.Status), string(records), microsOrNil(d.VerifiedAt), microsOrNil(d.LastCheckedAt),
			microsOrNil(d.NextCheckAt), microsOrNil(d.FailingSince), checks); err != nil {
			return s.wrap(err, "save domain check")
		}
		if was != string(d.Status) {
			if err := s.recordAudit(ctx, tx, d.AccountID, mailroom.AuditDomainVerified, domainTarget(d.ID),
				mailroom.DomainStatusChanges(mailroom.DomainStatus(was), d.Status)); err != nil {
				return err
			}
		}
		if event != nil {
			return s.insertEvent(ctx, tx, event)
		}
		return nil
	})
}

// ClaimDueDomains leases due domains. On PostgreSQL, SKIP LOCKED lets nodes
// claim side by side without waiting on each other's rows; on SQLite the
// single writer makes the UPDATE atomic by itself.
func (s *Store) ClaimDueDomains(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*mailroom.Domain, error) {
	rows, err := s.write.QueryContext(ctx, fmt.Sprintf(`UPDATE domains SET lease_until = $2
		WHERE id IN (SELECT id FROM domains
			WHERE next_check_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
			ORDER BY next_check_at LIMIT $3 %s)
		RETURNING `+domainColumns, s.dialect.Locks.SkipLocked), micros(now), micros(now.Add(lease)), limit)
	if err != nil {
		return nil, s.wrap(err, "claim due domains")
	}
	out, err := collect(rows, scanDomain)
	return out, s.wrap(err, "claim due domains")
}

func scanDomain(row scanner) (*mailroom.Domain, error) {
	var d mailroom.Domain
	var status, records, tls, checks, keys string
	var created int64
	var verified, checked, next, failing sql.NullInt64
	var receiving int64
	if err := row.Scan(&d.ID, &d.AccountID, &d.Name, &status, &d.DKIMSelector, &d.DKIMPublicKey,
		&d.DKIMPrivateKeySealed, &d.ReturnPathDomain, &records, &created, &verified, &checked, &next, &failing, &d.IPPool, &tls, &checks, &keys, &receiving,
		&d.Tracking.Opens, &d.Tracking.Clicks); err != nil {
		return nil, err
	}
	d.Receiving = receiving != 0
	var err error
	if d.DKIMKeys, err = unmarshalDKIMKeys(d.ID, keys); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(records), &d.Records); err != nil {
		return nil, fmt.Errorf("domain %s records: %w", d.ID, err)
	}
	if d.Checks, err = unmarshalHealthChecks(checks); err != nil {
		return nil, fmt.Errorf("domain %s checks: %w", d.ID, err)
	}
	d.Status = mailroom.DomainStatus(status)
	d.TLS = mailroom.TLSMode(tls).OrDefault()
	d.CreatedAt = fromMicros(created)
	d.VerifiedAt = fromNullMicros(verified)
	d.LastCheckedAt = fromNullMicros(checked)
	d.NextCheckAt = fromNullMicros(next)
	d.FailingSince = fromNullMicros(failing)
	return &d, nil
}

func unmarshalDKIMKeys(id, keys string) ([]mailroom.DomainDKIMKey, error) {
	var out []mailroom.DomainDKIMKey
	if err := json.Unmarshal([]byte(keys), &out); err != nil {
		return nil, fmt.Errorf("domain %s DKIM keys: %w", id, err)
	}
	return out, nil
}

// collect scans every row with scan and closes rows.
func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
