package storetest_test

import (
	"context"
	"database/sql"
)

// postgresSchema reads PostgreSQL's schema from information_schema and
// pg_catalog.
func postgresSchema(ctx context.Context, db *sql.DB) (schema, error) {
	names, err := strs(ctx, db, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`)
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
		rows, err := db.QueryContext(ctx, `SELECT column_name, data_type, is_nullable = 'NO' FROM information_schema.columns
			WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position`, name)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var col, typ string
			var notNull bool
			if err := rows.Scan(&col, &typ, &notNull); err != nil {
				rows.Close()
				return nil, err
			}
			tb.columns[col] = column{typ: normalType(typ), notNull: notNull}
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		if tb.indexes, err = postgresIndexes(ctx, db, name); err != nil {
			return nil, err
		}
		for _, ix := range tb.indexes {
			if ix.origin == "primary key" {
				tb.primaryKey = ix.columns
			}
		}
	}
	return s, nil
}

func postgresIndexes(ctx context.Context, db *sql.DB, tableName string) ([]index, error) {
	rows, err := db.QueryContext(ctx, `SELECT i.indexrelid, c.relname, i.indisunique, i.indisprimary,
			coalesce(con.contype::text, ''), coalesce(pg_get_expr(i.indpred, i.indrelid, true), '')
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		LEFT JOIN pg_constraint con ON con.conindid = i.indexrelid AND con.conrelid = i.indrelid
		WHERE i.indrelid = ('public.' || quote_ident($1))::regclass ORDER BY c.relname`, tableName)
	if err != nil {
		return nil, err
	}
	type listed struct {
		oid                 int64
		name, contype, pred string
		unique, primary     bool
	}
	var list []listed
	for rows.Next() {
		var l listed
		if err := rows.Scan(&l.oid, &l.name, &l.unique, &l.primary, &l.contype, &l.pred); err != nil {
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
		ix := index{unique: l.unique, origin: "index", name: l.name}
		switch {
		case l.primary:
			ix.origin, ix.name = "primary key", ""
		case l.contype == "u":
			ix.origin, ix.name = "unique", ""
		}
		cols, err := db.QueryContext(ctx, `SELECT pg_get_indexdef(i.indexrelid, k, true), (i.indoption[k - 1] & 1) = 1
			FROM pg_index i, generate_series(1, i.indnkeyatts) k WHERE i.indexrelid = $1 ORDER BY k`, l.oid)
		if err != nil {
			return nil, err
		}
		for cols.Next() {
			var def string
			var desc bool
			if err := cols.Scan(&def, &desc); err != nil {
				cols.Close()
				return nil, err
			}
			def = normalExpr(def)
			if desc {
				def += " desc"
			}
			ix.columns = append(ix.columns, def)
		}
		if err := cols.Close(); err != nil {
			return nil, err
		}
		if l.pred != "" {
			ix.where = normalExpr(l.pred)
		}
		out = append(out, ix)
	}
	return out, nil
}

// strs reads a query's one column of text.
func strs(ctx context.Context, db *sql.DB, query string) ([]string, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
