package sealer

import (
	"github.com/mailroom/mailroom/atomicfile"

	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// KeyFileName is the name of the key file LoadOrCreate keeps in the data
// directory when no key is given on the command line.
const KeyFileName = "secret.key"

// LoadOrCreate returns the Sealer of the service.
//
// A non-empty flagValue (--secret-key) is the key and the data directory is
// not consulted. Otherwise the key is read from KeyFileName in dataDir, or,
// when there is no such file, made from crypto/rand and stored there
// (mode 0600) for every later start; created reports that case, so the CLI
// can tell the operator to back the file up.
//
// A key file that exists but does not hold a key is an error, never
// replaced: secrets sealed under the lost key would become unreadable.
func LoadOrCreate(dataDir, flagValue string) (s *Sealer, created bool, err error) {
	var key []byte
	if flagValue != "" {
		if key, err = decodeKey(flagValue); err != nil {
			return nil, false, fmt.Errorf("sealer: --secret-key %w", err)
		}
	} else {
		path := filepath.Join(dataDir, KeyFileName)
		key, err = readKeyFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			key, created, err = createKeyFile(path)
		}
		if err != nil {
			return nil, false, err
		}
	}
	if s, err = New(key); err != nil {
		return nil, false, err
	}
	return s, created, nil
}

// ErrNoKey is Load's answer when no key is given and the data directory
// holds no key file.
var ErrNoKey = errors.New("no secret key")

// Load returns the Sealer of flagValue (--secret-key) or, without it, of
// the key file in dataDir, as LoadOrCreate does, but never makes a key:
// when there is neither it returns an error wrapping ErrNoKey. restore uses
// it: a key made for a restored store could open none of its secrets.
func Load(dataDir, flagValue string) (*Sealer, error) {
	if flagValue != "" {
		key, err := decodeKey(flagValue)
		if err != nil {
			return nil, fmt.Errorf("sealer: --secret-key %w", err)
		}
		return New(key)
	}
	path := filepath.Join(dataDir, KeyFileName)
	key, err := readKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: no --secret-key, and no %s in %s", ErrNoKey, KeyFileName, dataDir)
	} else if err != nil {
		return nil, err
	}
	return New(key)
}

// readKeyFile reads the base64 key stored at path. A file readable by
// others still loads: refusing to start would not make the key secret
// again.
func readKeyFile(path string) ([]byte, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sealer: reading key file: %w", err)
	}
	key, err := decodeKey(string(text))
	if err != nil {
		return nil, fmt.Errorf("sealer: key file %s %w", path, err)
	}
	return key, nil
}

// createKeyFile makes a key and stores it at path, unless another process
// (say `mailroom accounts create` started beside `mailroom serve`) stored
// one first, in which case that one is returned and created is false: two
// processes must never go on with different keys.
func createKeyFile(path string) (key []byte, created bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("sealer: creating data directory: %w", err)
	}
	key = make([]byte, KeySize)
	rand.Read(key) // never fails; see Seal
	text := []byte(base64.StdEncoding.EncodeToString(key) + "\n")
	err = atomicfile.CreateExclusive(path, text, 0o600)
	if errors.Is(err, fs.ErrExist) {
		key, err = readKeyFile(path)
		return key, false, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("sealer: writing key file: %w", err)
	}
	return key, true, nil
}
