package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
)

// maxStatementRows bounds the rows of one multi-row statement: 128 rows of
// the widest insert (a message, 16 columns) hold 2,048 parameters, far
// below SQLite's 32,766 and PostgreSQL's 65,535.
const maxStatementRows = 128

// multiInsert is an INSERT of many rows in one statement: head is the text
// up to VALUES, tail what follows the rows (ON CONFLICT, RETURNING).
type multiInsert struct {
	head  string
	width int // columns a row
	tail  string
}

// statementTexts keeps the text of each multi-row statement by size.
var statementTexts sync.Map // string → string

// insertRows inserts rows (width values each, flattened) in statements of
// power-of-two sizes, largest first: n rows take at most about log2(n)
// statements plus n/maxStatementRows, and every statement has one of eight
// texts per insert, each prepared once (stmtCache). When tail returns
// rows, each one is passed to scan.
func (s *Store) insertRows(ctx context.Context, tx *sql.Tx, ins multiInsert, rows []any, scan func(*sql.Rows) error) error {
	for n := len(rows) / ins.width; n > 0; {
		size := chunkSize(n)
		query := ins.text(size, s.dialect.Writes.AnonymousParams)
		args := rows[:size*ins.width]
		rows, n = rows[size*ins.width:], n-size
		if scan == nil {
			if _, err := s.txExec(ctx, tx, query, args...); err != nil {
				return err
			}
			continue
		}
		if err := s.eachRow(ctx, tx, query, args, scan); err != nil {
			return err
		}
	}
	return nil
}

// chunkSize is the largest power of two not over n or maxStatementRows.
func chunkSize(n int) int {
	size := 1
	for size*2 <= n && size*2 <= maxStatementRows {
		size *= 2
	}
	return size
}

func (ins multiInsert) text(rows int, anonymous bool) string {
	key := fmt.Sprintf("%s|%d|%t", ins.head, rows, anonymous)
	if t, ok := statementTexts.Load(key); ok {
		return t.(string)
	}
	var b strings.Builder
	b.WriteString(ins.head)
	for r := range rows {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(" + params(r*ins.width+1, ins.width, anonymous) + ")")
	}
	b.WriteString(ins.tail)
	statementTexts.Store(key, b.String())
	return b.String()
}

// queryIn runs head + "(…)" for values in chunks, in tx or on the read
// pool when tx is nil. Each chunk is padded to a power of two with its last
// value (which changes nothing in an IN list), so that the texts are few
// and prepared once; args come first, and scan sees every row.
func (s *Store) queryIn(ctx context.Context, tx *sql.Tx, head string, args []any, values []string, scan func(*sql.Rows) error) error {
	for len(values) > 0 {
		n := min(len(values), maxStatementRows)
		size := 1
		for size < n {
			size *= 2
		}
		all := append([]any{}, args...)
		for i := range size {
			all = append(all, values[min(i, n-1)])
		}
		values = values[n:]
		query := head + "(" + params(len(args)+1, size, s.dialect.Writes.AnonymousParams) + ")"
		if err := s.eachRow(ctx, tx, query, all, scan); err != nil {
			return err
		}
	}
	return nil
}

// eachRow runs a query in tx, or on the read pool when tx is nil, and
// passes each row to scan.
func (s *Store) eachRow(ctx context.Context, tx *sql.Tx, query string, args []any, scan func(*sql.Rows) error) error {
	var rows *sql.Rows
	var err error
	if tx == nil {
		rows, err = s.readQuery(ctx, query, args...)
	} else {
		rows, err = s.txQuery(ctx, tx, query, args...)
	}
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// params is placeholders, or n "?" (numbered on from the statement's
// last parameter) when anonymous.
func params(first, n int, anonymous bool) string {
	if !anonymous {
		return placeholders(first, n)
	}
	return strings.Repeat("?, ", n-1) + "?"
}
