package sqlstore

import (
	"database/sql"
	"fmt"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/mailroom/mailroom"
)

// The tables that grow with the mail (messages, recipients, message_tags
// and events) store the ids of messages and events as the 16 bytes of
// their ULID, not as the 30-odd characters of their text (migration 00015,
// issue 17): each message's ids are repeated in about twenty index
// entries. Bytes compare as the text does (a ULID's encoding keeps its
// order), so every range and order on ids is unchanged. Accounts there are
// integer keys (00016, accountkeys.go). The other tables, which grow with
// the configuration, keep the text.
//
// The text is the id's prefix and its ULID in lower case (mailroom.NewID);
// the key is the ULID's bytes, and the prefix comes from the column.

// idKey is the stored key of id, an id of prefix's kind. A string that is
// no such id has no key, and gets noKey, which equals no stored key.
func idKey(prefix, id string) []byte {
	if !mailroom.IsID(id, prefix) {
		return noKey
	}
	u, err := ulid.ParseStrict(id[len(prefix):])
	if err != nil {
		return noKey
	}
	return u[:]
}

// noKey is 17 bytes, one more than any stored key, all 0xff: it equals no
// key and sorts above every key.
var noKey = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

func messageKey(id string) []byte { return idKey(mailroom.PrefixMessage, id) }
func eventKey(id string) []byte   { return idKey(mailroom.PrefixEvent, id) }

// keyText is the id of prefix's kind stored as key.
func keyText(prefix string, key []byte) (string, error) {
	var u ulid.ULID
	if len(key) != len(u) {
		return "", fmt.Errorf("a stored %sid of %d bytes, not %d", prefix, len(key), len(u))
	}
	copy(u[:], key)
	return prefix + strings.ToLower(u.String()), nil
}

// idColumn scans a key column into its id's text, with prefix; NULL is "".
type idColumn struct {
	prefix string
	dst    *string
}

func (c idColumn) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c.dst = ""
		return nil
	case []byte:
		s, err := keyText(c.prefix, v)
		*c.dst = s
		return err
	}
	return fmt.Errorf("a stored %sid of type %T", c.prefix, src)
}

var _ sql.Scanner = idColumn{}

func messageColumn(dst *string) idColumn { return idColumn{mailroom.PrefixMessage, dst} }
func eventColumn(dst *string) idColumn   { return idColumn{mailroom.PrefixEvent, dst} }

// keysOf is the keys of ids, for an IN list.
func keysOf(key func(string) []byte, ids []string) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = key(id)
	}
	return out
}

// timeKey is the least key of a ULID of millisecond ms: every id made in
// ms or later has a key at least this. Before 1970 it is the least key of
// all; past the ULID's last millisecond (the year 10889) it is noKey,
// above every key.
func timeKey(ms int64) []byte {
	var u ulid.ULID
	switch {
	case ms < 0:
		return u[:]
	case ms > int64(ulid.MaxTime()):
		return noKey
	}
	_ = u.SetTime(uint64(ms)) // within MaxTime
	return u[:]
}

// StoredKey is the key of id, whatever its kind: the bytes of the ULID
// after its prefix. Migration 00015 converts the stored text ids with it,
// and 00016 finds the accounts' keys by the bytes 00015 stored.
func StoredKey(id string) ([]byte, error) {
	_, text, ok := strings.Cut(id, "_")
	u, err := ulid.ParseStrict(text)
	if !ok || err != nil {
		return nil, fmt.Errorf("%q is not an id with a ULID", id)
	}
	return u[:], nil
}
