package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mailroom/mailroom"
)

// templateColumns are a template joined with one of its versions (t and v).
const templateColumns = `t.id, t.account_id, t.name, v.version, v.description, v.subject, v.html, v.text,
	v.from_address, v.variables, v.layout_id, l.name, v.layout_version, t.created_at, v.created_at`

// templateSummaryColumns are templateColumns without the html and text,
// which lists do not show (they may be a megabyte each).
var templateSummaryColumns = strings.Replace(templateColumns, "v.html, v.text", "'' AS html, '' AS text", 1)

// templateVersions joins each template with its versions (v) and the
// layout each version names (l; a layout cannot be deleted while a
// current version names it, but an older version's may be gone).
const templateVersions = `templates t JOIN template_versions v ON v.template_id = t.id
	LEFT JOIN templates l ON l.id = v.layout_id`

// byIDOrName is the WHERE clause that finds an account's template ($1) by
// id or name ($2): a name never starts with "tpl_" (mailroom's rule), so
// the two cannot meet.
func byIDOrName(idOrName string) string {
	if strings.HasPrefix(idOrName, mailroom.PrefixTemplate) {
		return `t.account_id = $1 AND t.id = $2`
	}
	return `t.account_id = $1 AND t.name = $2`
}

func templateNotFound(idOrName string) error {
	return mailroom.Errorf(mailroom.ECodeNotFound, "No template %q in this account.", idOrName)
}

// checkRef answers not found, without a query, for a reference that could
// name no template (PostgreSQL would refuse a NUL in its text, a 500).
func checkRef(idOrName string) error {
	if mailroom.CheckTemplateRef(idOrName) != "" {
		return templateNotFound(idOrName)
	}
	return nil
}

// CreateTemplate inserts t and its first version (setting t.Version to 1
// and its times to the microseconds stored), if the account has
// fewer than max templates. On PostgreSQL the account's row is locked
// first, so that concurrent creates count one after the other.
func (s *Store) CreateTemplate(ctx context.Context, t *mailroom.Template, max int) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var n int
		err := tx.QueryRowContext(ctx, `SELECT id FROM accounts WHERE id = $1`+s.dialect.Locks.Rows, t.AccountID).Scan(new(string))
		if errors.Is(err, sql.ErrNoRows) {
			return mailroom.Errorf(mailroom.ECodeNotFound, "No account %q.", t.AccountID)
		}
		if err != nil {
			return s.wrap(err, "lock account")
		}
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM templates WHERE account_id = $1`, t.AccountID).Scan(&n); err != nil {
			return s.wrap(err, "count templates")
		}
		if n >= max {
			return mailroom.TemplateLimit.Err(n, max)
		}
		t.Version = 1
		t.CreatedAt, t.UpdatedAt = fromMicros(micros(t.CreatedAt)), fromMicros(micros(t.UpdatedAt))
		_, err = tx.ExecContext(ctx, `INSERT INTO templates (id, account_id, name, version, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, t.ID, t.AccountID, t.Name, t.Version, micros(t.CreatedAt), micros(t.UpdatedAt))
		if err != nil && s.dialect.Errors.UniqueViolation(err) {
			return mailroom.Errorf(mailroom.ECodeAlreadyExists, "This account already has a template named %q.", t.Name)
		}
		if err != nil {
			return s.wrap(err, "create template")
		}
		if err := s.insertTemplateVersion(ctx, tx, t); err != nil {
			return err
		}
		return s.recordAudit(ctx, tx, t.AccountID, mailroom.AuditTemplateCreated, templateTarget(t.ID), mailroom.TemplateCreatedChanges(t))
	})
}

func (s *Store) insertTemplateVersion(ctx context.Context, tx *sql.Tx, t *mailroom.Template) error {
	variables, err := json.Marshal(t.Variables)
	if err != nil {
		return err
	}
	var layoutID, layoutVersion any
	if t.Layout != nil {
		layoutID, layoutVersion = t.Layout.ID, t.Layout.Version
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO template_versions (template_id, version, description, subject, html,
		text, from_address, variables, layout_id, layout_version, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		t.ID, t.Version, t.Description, t.Subject, t.HTML, t.Text, t.From, string(variables), layoutID, layoutVersion, micros(t.UpdatedAt))
	return s.wrap(err, "insert template version")
}

// UpdateTemplate stores the next version, if the template has fewer than
// max. Versions are numbered from 1 and none is removed but with its
// template, so the current version number is how many it has. The
// template's row is locked first (on PostgreSQL; SQLite has one writer),
// so that concurrent updates count one after the other and each gets a
// version of its own.
func (s *Store) UpdateTemplate(ctx context.Context, t *mailroom.Template, max int) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var n int
		err := tx.QueryRowContext(ctx, `SELECT version FROM templates WHERE id = $1 AND account_id = $2`+s.dialect.Locks.Rows,
			t.ID, t.AccountID).Scan(&n)
		if errors.Is(err, sql.ErrNoRows) {
			return templateNotFound(t.ID)
		}
		if err != nil {
			return s.wrap(err, "lock template")
		}
		if n >= max {
			return mailroom.TemplateVersionLimit.Err(n, max)
		}
		// The current version's short fields, for the audit entry.
		before, err := scanTemplate(tx.QueryRowContext(ctx, `SELECT `+templateSummaryColumns+` FROM `+templateVersions+`
			WHERE v.version = t.version AND t.id = $1 AND t.account_id = $2`, t.ID, t.AccountID))
		if err != nil {
			return s.wrap(err, "read template")
		}
		var created int64
		err = tx.QueryRowContext(ctx, `UPDATE templates SET version = version + 1, updated_at = $3
			WHERE id = $1 AND account_id = $2 RETURNING version, name, created_at`,
			t.ID, t.AccountID, micros(t.UpdatedAt)).Scan(&t.Version, &t.Name, &created)
		if err != nil {
			return s.wrap(err, "update template")
		}
		t.CreatedAt, t.UpdatedAt = fromMicros(created), fromMicros(micros(t.UpdatedAt))
		if err := s.insertTemplateVersion(ctx, tx, t); err != nil {
			return err
		}
		return s.recordAudit(ctx, tx, t.AccountID, mailroom.AuditTemplateUpdated, templateTarget(t.ID), mailroom.TemplateUpdatedChanges(before, t))
	})
}

// templateTarget names a template in the audit log by its id.
func templateTarget(id string) mailroom.AuditTarget {
	return mailroom.AuditTarget{Type: mailroom.AuditTargetTemplate, ID: id}
}

// Template reads an account's template in its current version.
func (s *Store) Template(ctx context.Context, accountID, idOrName string) (*mailroom.Template, error) {
	if err := checkRef(idOrName); err != nil {
		return nil, err
	}
	t, err := scanTemplate(s.read.QueryRowContext(ctx, `SELECT `+templateColumns+` FROM `+templateVersions+`
		WHERE v.version = t.version AND `+byIDOrName(idOrName), accountID, idOrName))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, templateNotFound(idOrName)
	}
	return t, s.wrap(err, "find template")
}

// CurrentTemplateVersion reads the id, name and version of an account's
// template: one indexed row, no content, by a prepared statement (it is on
// every templated send's path).
func (s *Store) CurrentTemplateVersion(ctx context.Context, accountID, idOrName string) (*mailroom.TemplateRef, error) {
	if err := checkRef(idOrName); err != nil {
		return nil, err
	}
	var ref mailroom.TemplateRef
	err := s.readRow(ctx, `SELECT t.id, t.name, t.version FROM templates t WHERE `+byIDOrName(idOrName),
		accountID, idOrName).Scan(&ref.ID, &ref.Name, &ref.Version)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, templateNotFound(idOrName)
	}
	return &ref, s.wrap(err, "find template")
}

// TemplateVersion reads one version of an account's template.
func (s *Store) TemplateVersion(ctx context.Context, accountID, id string, version int) (*mailroom.Template, error) {
	t, err := scanTemplate(s.read.QueryRowContext(ctx, `SELECT `+templateColumns+` FROM `+templateVersions+`
		WHERE t.account_id = $1 AND t.id = $2 AND v.version = $3`, accountID, id, version))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mailroom.Errorf(mailroom.ECodeNotFound, "No version %d of template %q in this account.", version, id)
	}
	return t, s.wrap(err, "find template version")
}

// ListTemplates lists an account's templates, newest first, each in its
// current version.
func (s *Store) ListTemplates(ctx context.Context, accountID string, p mailroom.Page) ([]*mailroom.Template, string, error) {
	after, err := parseCursor(p.Cursor)
	if err != nil {
		return nil, "", err
	}
	limit := pageLimit(p)
	rows, err := s.read.QueryContext(ctx, `SELECT `+templateSummaryColumns+` FROM `+templateVersions+`
		WHERE v.version = t.version AND t.account_id = $1 AND (t.created_at < $2 OR (t.created_at = $2 AND t.id < $3))
		ORDER BY t.created_at DESC, t.id DESC LIMIT $4`, accountID, after.at, after.id, limit+1)
	if err != nil {
		return nil, "", s.wrap(err, "list templates")
	}
	out, err := collect(rows, scanTemplate)
	if err != nil {
		return nil, "", s.wrap(err, "list templates")
	}
	out, next := trimPage(out, limit, func(x *mailroom.Template) cursor { return cursor{at: micros(x.CreatedAt), id: x.ID} })
	return out, next, nil
}

// ListTemplateVersions lists a template's versions, newest first. The
// cursor's id is the version number.
func (s *Store) ListTemplateVersions(ctx context.Context, accountID, idOrName string, p mailroom.Page) ([]*mailroom.Template, string, error) {
	after, err := parseCursor(p.Cursor)
	if err != nil {
		return nil, "", err
	}
	below := int64(1<<31 - 1)
	if after.id != "" {
		below = after.at
	}
	ref, err := s.CurrentTemplateVersion(ctx, accountID, idOrName)
	if err != nil {
		return nil, "", err
	}
	limit := pageLimit(p)
	rows, err := s.read.QueryContext(ctx, `SELECT `+templateSummaryColumns+` FROM `+templateVersions+`
		WHERE t.account_id = $1 AND t.id = $2 AND v.version < $3
		ORDER BY v.version DESC LIMIT $4`, accountID, ref.ID, below, limit+1)
	if err != nil {
		return nil, "", s.wrap(err, "list template versions")
	}
	out, err := collect(rows, scanTemplate)
	if err != nil {
		return nil, "", s.wrap(err, "list template versions")
	}
	out, next := trimPage(out, limit, func(x *mailroom.Template) cursor { return cursor{at: int64(x.Version), id: x.ID} })
	return out, next, nil
}

// DeleteTemplate removes a template and its versions.
func (s *Store) DeleteTemplate(ctx context.Context, accountID, idOrName string) error {
	if err := checkRef(idOrName); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var id, name string
		err := tx.QueryRowContext(ctx, `SELECT t.id, t.name FROM templates t WHERE `+byIDOrName(idOrName)+s.dialect.Locks.Rows,
			accountID, idOrName).Scan(&id, &name)
		if errors.Is(err, sql.ErrNoRows) {
			return templateNotFound(idOrName)
		}
		if err != nil {
			return s.wrap(err, "delete template")
		}
		// A template whose current version is wrapped in this one would
		// no longer render.
		var user string
		err = tx.QueryRowContext(ctx, `SELECT t.name FROM template_versions v
			JOIN templates t ON t.id = v.template_id AND t.version = v.version
			WHERE v.layout_id = $1 LIMIT 1`, id).Scan(&user)
		switch {
		case err == nil:
			return mailroom.Errorf(mailroom.ECodeInvalidState, "The template %q is the layout of the template %q; save that one without it (or with another layout) first.", idOrName, user)
		case !errors.Is(err, sql.ErrNoRows):
			return s.wrap(err, "delete template")
		}
		// Versions first: SQLite enforces the foreign key only when told to.
		if _, err := tx.ExecContext(ctx, `DELETE FROM template_versions WHERE template_id = $1`, id); err != nil {
			return s.wrap(err, "delete template versions")
		}
		if _, err = tx.ExecContext(ctx, `DELETE FROM templates WHERE id = $1`, id); err != nil {
			return s.wrap(err, "delete template")
		}
		return s.recordAudit(ctx, tx, accountID, mailroom.AuditTemplateDeleted, templateTarget(id), mailroom.TemplateDeletedChanges(name))
	})
}

func scanTemplate(row scanner) (*mailroom.Template, error) {
	var t mailroom.Template
	var variables string
	var layoutID, layoutName sql.NullString
	var layoutVersion sql.NullInt64
	var created, updated int64
	if err := row.Scan(&t.ID, &t.AccountID, &t.Name, &t.Version, &t.Description, &t.Subject, &t.HTML, &t.Text,
		&t.From, &variables, &layoutID, &layoutName, &layoutVersion, &created, &updated); err != nil {
		return nil, err
	}
	if layoutID.Valid {
		t.Layout = &mailroom.TemplateRef{ID: layoutID.String, Name: layoutName.String, Version: int(layoutVersion.Int64)}
	}
	if err := json.Unmarshal([]byte(variables), &t.Variables); err != nil {
		return nil, fmt.Errorf("template %s variables: %w", t.ID, err)
	}
	if t.Variables == nil {
		t.Variables = []string{}
	}
	t.CreatedAt, t.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &t, nil
}
