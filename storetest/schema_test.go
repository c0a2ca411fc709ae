package storetest_test

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/storetest"
)

// TestSchemasAgree migrates a SQLite and a PostgreSQL store to the newest
// migration and compares what they hold: tables, columns (type and
// nullability), primary keys, unique constraints and indexes (columns,
// their order and direction, uniqueness, partial predicates). The two
// engines have a migration each for every change, written twice by hand;
// a column or an index that one of them forgot shows up here, not as a
// query that is slow or wrong on one engine only. The differences meant
// to be are in schemaDifferences, each with its reason.
func TestSchemasAgree(t *testing.T) {
	storetest.RequirePostgres(t)
	ctx := context.Background()
	schemas := map[string]schema{}
	for _, e := range []storetest.Engine{storetest.SQLite, storetest.Postgres} {
		open, db := storetest.Reopenable(t, e)
		open() // migrates to the newest
		read := map[string]func(context.Context, *sql.DB) (schema, error){"sqlite": sqliteSchema, "postgres": postgresSchema}[e.Name]
		s, err := read(ctx, db)
		if err != nil {
			t.Fatalf("reading the %s schema: %v", e.Name, err)
		}
		if len(s) == 0 {
			t.Fatalf("the %s schema has no tables", e.Name)
		}
		schemas[e.Name] = s
	}
	lite, pg := schemas["sqlite"].facts(), schemas["postgres"].facts()
	for _, d := range schemaDifferences {
		for engine, fact := range map[string]string{"SQLite": d.sqlite, "PostgreSQL": d.postgres} {
			facts := map[string]map[string]bool{"SQLite": lite, "PostgreSQL": pg}[engine]
			if fact == "" {
				continue
			}
			if !facts[fact] {
				t.Errorf("schemaDifferences says %s has %q (%s), and it has not: remove or correct the entry", engine, fact, d.why)
			}
			delete(facts, fact)
		}
	}
	for _, f := range slices.Sorted(maps.Keys(lite)) {
		if !pg[f] {
			t.Errorf("only SQLite has %s", f)
		}
	}
	for _, f := range slices.Sorted(maps.Keys(pg)) {
		if !lite[f] {
			t.Errorf("only PostgreSQL has %s", f)
		}
	}
}

// schemaDifferences are the differences between the engines' schemas that
// are meant to be: what SQLite has instead of what PostgreSQL has (either
// may be "", for nothing), each fact as schema.facts writes it, and why.
var schemaDifferences = []struct{ sqlite, postgres, why string }{
	{"column accounts.key integer null", "column accounts.key integer not null",
		"SQLite's ALTER TABLE cannot add a NOT NULL column without a default (00016); every INSERT sets it (Dialect.SQL.NewAccountKey)"},
}

// schema is one engine's tables by name.
type schema map[string]*table

type table struct {
	columns    map[string]column
	primaryKey []string // in key order
	indexes    []index
}

type column struct {
	typ     string // integer, text, bytes, bool, real
	notNull bool
}

// index is an index, or a unique or primary-key constraint (which both
// engines keep as an index).
type index struct {
	name string // "" for an index a constraint made, whose name the engine chose
	// origin is "index" (CREATE INDEX), "unique" (a UNIQUE constraint) or
	// "primary key".
	origin  string
	unique  bool
	columns []string // each a column or an expression, normalised, with " desc" when descending
	where   string   // the partial index's predicate, normalised; "" for none
}

// facts writes the schema as a set of one-line statements, so that the
// two engines' schemas compare as sets and each difference reads as one
// line. An index a constraint made is named by what it holds, since each
// engine names it its own way.
func (s schema) facts() map[string]bool {
	out := map[string]bool{}
	for name, tb := range s {
		out["table "+name] = true
		for c, col := range tb.columns {
			null := "null"
			if col.notNull {
				null = "not null"
			}
			out[fmt.Sprintf("column %s.%s %s %s", name, c, col.typ, null)] = true
		}
		if len(tb.primaryKey) > 0 {
			out[fmt.Sprintf("primary key %s (%s)", name, strings.Join(tb.primaryKey, ", "))] = true
		}
		for _, ix := range tb.indexes {
			if ix.origin == "primary key" {
				continue // the primary key above
			}
			f := "index " + ix.name
			if ix.origin == "unique" {
				f = "unique constraint"
			} else if ix.unique {
				f = "unique " + f
			}
			f += fmt.Sprintf(" on %s (%s)", name, strings.Join(ix.columns, ", "))
			if ix.where != "" {
				f += " where " + ix.where
			}
			out[f] = true
		}
	}
	return out
}

// notOurs are the tables neither engine's migrations made: goose's own.
var notOurs = map[string]bool{"goose_db_version": true}

// normalType maps each engine's name of a column type to one small
// vocabulary.
func normalType(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	switch t {
	case "integer", "int", "bigint", "smallint", "int8", "int4", "int2":
		return "integer"
	case "text", "character varying", "varchar":
		return "text"
	case "blob", "bytea":
		return "bytes"
	case "boolean", "bool":
		return "bool"
	case "real", "double precision", "float8":
		return "real"
	}
	return "other(" + t + ")"
}

var (
	casts       = regexp.MustCompile(`::[a-z ]+(\[\])?`)
	spaces      = regexp.MustCompile(`\s+`)
	anyOfArray  = regexp.MustCompile(`= any \(array\[([^\]]*)\]\)`)
	tightParens = strings.NewReplacer("( ", "(", " )", ")")
)

// normalExpr writes an index expression or predicate as both engines'
// texts of it read the same: lower case, one space between words,
// PostgreSQL's casts (::text) and added parentheses gone, its "= ANY
// (ARRAY[…])" an IN list again.
func normalExpr(e string) string {
	e = strings.ToLower(e)
	e = spaces.ReplaceAllString(e, " ")
	e = casts.ReplaceAllString(e, "")
	e = anyOfArray.ReplaceAllString(e, "in ($1)")
	e = tightParens.Replace(strings.TrimSpace(e))
	for strings.HasPrefix(e, "(") && strings.HasSuffix(e, ")") && balanced(e[1:len(e)-1]) {
		e = e[1 : len(e)-1]
	}
	return e
}

// balanced reports whether every parenthesis in s closes in s, so that the
// parentheses around it only wrap the whole.
func balanced(s string) bool {
	depth := 0
	for _, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			if depth--; depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}
