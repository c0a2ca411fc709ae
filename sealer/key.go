package sealer

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// ParseKey decodes a sealing key given as base64, in the standard or the
// URL-safe alphabet, padded or not, with surrounding white space ignored
// (a key pasted from a file keeps its newline). It must decode to exactly
// KeySize bytes.
//
// Errors never quote the input: it is a secret, and errors end up in logs.
func ParseKey(b64 string) ([]byte, error) {
	key, err := decodeKey(b64)
	if err != nil {
		return nil, fmt.Errorf("sealer: secret key %w", err)
	}
	return key, nil
}

// decodeKey does ParseKey's work. Its errors are predicates ("is empty")
// so that each caller can name the key's source in front of them.
func decodeKey(b64 string) ([]byte, error) {
	s := strings.TrimSpace(b64)
	if s == "" {
		return nil, errors.New("is empty")
	}
	// Padding is optional, so drop it and decode unpadded. One alphabet per
	// key: the URL decoder refuses a string that mixes '+' or '/' with '-'
	// or '_'.
	s = strings.TrimRight(s, "=")
	encoding := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		encoding = base64.RawURLEncoding
	}
	key, err := encoding.DecodeString(s)
	if err != nil {
		return nil, errors.New("is not valid base64")
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("decodes to %d bytes, want %d", len(key), KeySize)
	}
	return key, nil
}
