package storetest_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// sqliteSchema reads SQLite's schema from sqlite_master and its pragmas.
func sqliteSchema(ctx context.Context, db *sql.DB) (schema, error) {
	names, err := strs(ctx, db, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	s := schema{}
	for _, name := range names {
		if notOurs[name] {
			continue
		}
		tb := &table{columns: map[string]column{}}
		s[name] = tb
		rows, err := db.QueryContext(ctx, `SELECT name, type, "notnull", pk FROM pragma_table_info(?) ORDER BY cid`, name)
		if err != nil {
			return nil, err
		}
		pk := map[int]string{}
		for rows.Next() {
			var col, typ string
			var notNull bool
			var pkAt int
			if err := rows.Scan(&col, &typ, &notNull, &pkAt); err != nil {
				rows.Close()
				return nil, err
			}
			if pkAt > 0 {
				pk[pkAt] = col
			}
			tb.columns[col] = column{typ: normalType(typ), notNull: notNull}
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		for i := 1; i <= len(pk); i++ {
			tb.primaryKey = append(tb.primaryKey, pk[i])
			// SQLite lets the primary key of a rowid table hold NULL
			// unless it says NOT NULL (a bug it keeps for compatibility;
			// PostgreSQL never does); no statement of the store writes a
			// NULL key, so it reads as the NOT NULL it is in use.
			c := tb.columns[pk[i]]
			c.notNull = true
			tb.columns[pk[i]] = c
		}
		if tb.indexes, err = sqliteIndexes(ctx, db, name); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func sqliteIndexes(ctx context.Context, db *sql.DB, tableName string) ([]index, error) {
	rows, err := db.QueryContext(ctx, `SELECT l.name, l."unique", l.origin, coalesce(m.sql, '')
		FROM pragma_index_list(?) l LEFT JOIN sqlite_master m ON m.type = 'index' AND m.name = l.name ORDER BY l.name`, tableName)
	if err != nil {
		return nil, err
	}
	type listed struct {
		name, origin, sql string
		unique            bool
	}
	var list []listed
	for rows.Next() {
		var l listed
		if err := rows.Scan(&l.name, &l.unique, &l.origin, &l.sql); err != nil {
			rows.Close()
			return nil, err
		}
		list = append(list, l)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	var out []index
	for _, l := range list {
		ix := index{unique: l.unique, origin: map[string]string{"c": "index", "u": "unique", "pk": "primary key"}[l.origin]}
		if ix.origin == "index" {
			ix.name = l.name
		}
		// Expressions are not in the pragma (their column is -2): they,
		// and the predicate, are read from the statement that made the
		// index.
		exprs, where := createIndexParts(l.sql)
		cols, err := db.QueryContext(ctx, `SELECT cid, coalesce(name, ''), "desc" FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno`, l.name)
		if err != nil {
			return nil, err
		}
		for i := 0; cols.Next(); i++ {
			var cid int
			var name string
			var desc bool
			if err := cols.Scan(&cid, &name, &desc); err != nil {
				cols.Close()
				return nil, err
			}
			if cid == -2 {
				if i >= len(exprs) {
					cols.Close()
					return nil, fmt.Errorf("index %s: expression %d not found in %q", l.name, i, l.sql)
				}
				name = normalExpr(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(exprs[i]), " DESC"), " ASC"))
			}
			if desc {
				name += " desc"
			}
			ix.columns = append(ix.columns, name)
		}
		if err := cols.Close(); err != nil {
			return nil, err
		}
		if where != "" {
			ix.where = normalExpr(where)
		}
		out = append(out, ix)
	}
	return out, nil
}

// createIndexParts splits "CREATE INDEX n ON t (a, lower(b) DESC) WHERE p"
// into its key parts and its predicate.
func createIndexParts(stmt string) (parts []string, where string) {
	open := strings.IndexByte(stmt, '(')
	if open < 0 {
		return nil, ""
	}
	depth, start := 0, open+1
	for i := open; i < len(stmt); i++ {
		switch stmt[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				parts = append(parts, stmt[start:i])
				rest := strings.TrimSpace(stmt[i+1:])
				if len(rest) > 6 && strings.EqualFold(rest[:6], "WHERE ") {
					where = rest[6:]
				}
				return parts, where
			}
		case ',':
			if depth == 1 {
				parts = append(parts, stmt[start:i])
				start = i + 1
			}
		}
	}
	return parts, ""
}
