package http

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"

	"github.com/mailroom/mailroom"
)

// The cursors a list hands out (nextCursor) are bound to the list and the
// filters they were made under: a cursor carries a digest of its scope
// (CursorScope for the log, the list's name for the others) before the
// store's own cursor, and is refused under any other scope. Without it, a
// cursor of one list would page another from an arbitrary point, and a
// cursor made under some filters would silently skip items under others.
// The digest is not a secret nor a signature: the store's cursor is a
// position, and the account is always the caller's.
const cursorDigestLen = 6

// cursorDigest covers the scope and the store's cursor, so that a cursor
// edited by hand (or cut short in a copy) is refused rather than read as
// another position or the end of the list.
func cursorDigest(scope, cursor string) []byte {
	d := sha256.Sum256([]byte(scope + "\x00" + cursor))
	return d[:cursorDigestLen]
}

// bindCursor wraps a store's cursor for scope; "" stays "".
func bindCursor(scope, cursor string) string {
	if cursor == "" {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(append(cursorDigest(scope, cursor), cursor...))
}

// openCursor returns the store's cursor inside a cursor of bindCursor, or a
// validation error on field "cursor" for one of another scope or none this
// API made; "" (the first page) stays "".
func openCursor(scope, cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	invalid := func(msg string) error {
		var v mailroom.Validator
		v.Add("cursor", "%s", mailroom.OwnText(msg))
		return v.Err()
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(raw) <= cursorDigestLen {
		return "", invalid("not a cursor this API returned")
	}
	inner := string(raw[cursorDigestLen:])
	if !bytes.Equal(raw[:cursorDigestLen], cursorDigest(scope, inner)) {
		return "", invalid("this cursor belongs to another list or to other filters, or was changed; use it as returned, with the query that returned it")
	}
	return inner, nil
}
