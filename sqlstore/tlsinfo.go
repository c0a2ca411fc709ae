package sqlstore

import (
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/mailroom/mailroom"
)

// tlsColumn is a recipient's TLS of its last attempt (recipients.tls,
// migration 00019) as stored: JSON {version, cipher, verified, policy}, or
// NULL when the session ran in clear or none was had (docs/api.md "TLS
// policy").
func tlsColumn(t *mailroom.TLSInfo) (any, error) {
	if t == nil {
		return nil, nil
	}
	b, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// scanTLS reads recipients.tls back; NULL (and every row written before
// the column) is nil.
func scanTLS(col sql.NullString) (*mailroom.TLSInfo, error) {
	if !col.Valid || col.String == "" {
		return nil, nil
	}
	var t mailroom.TLSInfo
	if err := json.Unmarshal([]byte(col.String), &t); err != nil {
		return nil, fmt.Errorf("recipient tls: %w", err)
	}
	return &t, nil
}
