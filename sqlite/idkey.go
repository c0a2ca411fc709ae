package sqlite

import (
	"database/sql/driver"
	"fmt"

	"modernc.org/sqlite"

	"github.com/mailroom/mailroom/sqlstore"
)

// mailroom_id_key(id) is the 16-byte key stored for a text id, NULL for
// NULL (sqlstore.StoredKey). Migration 00015 converts the ids of the
// tables that grow with the mail with it; an id that is no ULID fails the
// migration rather than be stored as something else.
func init() {
	sqlite.MustRegisterDeterministicScalarFunction("mailroom_id_key", 1,
		func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			switch v := args[0].(type) {
			case nil:
				return nil, nil
			case string:
				return sqlstore.StoredKey(v)
			}
			return nil, fmt.Errorf("mailroom_id_key: a %T, not a text id", args[0])
		})
}
