package sealer_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mailroom/mailroom/sealer"
)

func keyFilePath(dataDir string) string { return filepath.Join(dataDir, "secret.key") }

func mustLoadOrCreate(t *testing.T, dataDir, flagValue string, wantCreated bool) *sealer.Sealer {
	t.Helper()
	s, created, err := sealer.LoadOrCreate(dataDir, flagValue)
	if err != nil {
		t.Fatalf("LoadOrCreate: %v", err)
	}
	if created != wantCreated {
		t.Fatalf("LoadOrCreate: created = %v, want %v", created, wantCreated)
	}
	return s
}

func TestLoadOrCreateCreatesKeyFile(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data") // not yet there
	mustLoadOrCreate(t, dataDir, "", true)

	info, err := os.Stat(keyFilePath(dataDir))
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("key file mode %v, want 0600", perm)
	}
	text, err := os.ReadFile(keyFilePath(dataDir))
	if err != nil {
		t.Fatal(err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(string(text), "\n"))
	if err != nil || len(key) != 32 {
		t.Errorf("key file does not hold standard base64 of 32 bytes: %d bytes, %v", len(key), err)
	}
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("data directory holds %v, want only secret.key", names)
	}
}

func TestLoadOrCreateKeysDiffer(t *testing.T) {
	a := mustLoadOrCreate(t, t.TempDir(), "", true)
	b := mustLoadOrCreate(t, t.TempDir(), "", true)
	if _, err := b.Open(a.Seal(dkimKey, domainID), domainID); err == nil {
		t.Fatal("two data directories were given the same key")
	}
}

func TestLoadOrCreateReusesKeyFile(t *testing.T) {
	dataDir := t.TempDir()
	first := mustLoadOrCreate(t, dataDir, "", true)
	before, err := os.ReadFile(keyFilePath(dataDir))
	if err != nil {
		t.Fatal(err)
	}
	sealed := first.Seal(dkimKey, domainID)

	second := mustLoadOrCreate(t, dataDir, "", false)
	got, err := second.Open(sealed, domainID)
	if err != nil {
		t.Fatalf("second sealer cannot open what the first sealed: %v", err)
	}
	if string(got) != string(dkimKey) {
		t.Fatal("second sealer opened to other bytes")
	}
	after, err := os.ReadFile(keyFilePath(dataDir))
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Error("loading rewrote the key file")
	}
}

func TestLoadOrCreateFlagOverridesFile(t *testing.T) {
	dataDir := t.TempDir()
	fromFile := mustLoadOrCreate(t, dataDir, "", true)

	flagKey := base64.StdEncoding.EncodeToString(testKey(9))
	fromFlag := mustLoadOrCreate(t, dataDir, flagKey, false)
	sealed := fromFlag.Seal(dkimKey, domainID)
	if _, err := fromFile.Open(sealed, domainID); err == nil {
		t.Fatal("the flag's sealer uses the file's key")
	}
	if _, err := newSealer(t, testKey(9)).Open(sealed, domainID); err != nil {
		t.Fatalf("the flag's sealer does not use the flag's key: %v", err)
	}
}

func TestLoadOrCreateFlagTouchesNoFile(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	mustLoadOrCreate(t, dataDir, base64.RawURLEncoding.EncodeToString(testKey(9)), false)
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("with --secret-key the data directory was touched: %v", err)
	}
}

func TestLoadOrCreateBadFlag(t *testing.T) {
	const short = "c2hvcnQta2V5LW9mLWZvcnR5LWJ5dGVz" // 24 bytes
	_, _, err := sealer.LoadOrCreate(t.TempDir(), short)
	if err == nil {
		t.Fatal("a 24-byte --secret-key was accepted")
	}
	if !strings.Contains(err.Error(), "--secret-key") || strings.Contains(err.Error(), short[:8]) {
		t.Errorf("error %q should name --secret-key and not echo it", err)
	}
}

func TestLoadOrCreateLoadsKeyFileWithBroadMode(t *testing.T) {
	dataDir := t.TempDir()
	sealed := mustLoadOrCreate(t, dataDir, "", true).Seal(dkimKey, domainID)
	if err := os.Chmod(keyFilePath(dataDir), 0o644); err != nil {
		t.Fatal(err)
	}
	s := mustLoadOrCreate(t, dataDir, "", false)
	if _, err := s.Open(sealed, domainID); err != nil {
		t.Fatalf("key file with mode 0644 gave another key: %v", err)
	}
}

func TestLoadOrCreateAcceptsHandWrittenKeyFile(t *testing.T) {
	dataDir := t.TempDir()
	// An operator may write the file with echo, unpadded URL base64 and all.
	text := base64.RawURLEncoding.EncodeToString(testKey(5)) + "\n"
	if err := os.WriteFile(keyFilePath(dataDir), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	s := mustLoadOrCreate(t, dataDir, "", false)
	if _, err := newSealer(t, testKey(5)).Open(s.Seal(dkimKey, domainID), domainID); err != nil {
		t.Fatalf("sealer does not use the key in the file: %v", err)
	}
}

func TestLoadOrCreateCorruptKeyFile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
	}{
		{"empty", ""},
		{"not base64", "this is not a key!\n"},
		{"wrong length", base64.StdEncoding.EncodeToString(make([]byte, 16)) + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dataDir := t.TempDir()
			path := keyFilePath(dataDir)
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, err := sealer.LoadOrCreate(dataDir, "")
			if err == nil {
				t.Fatal("corrupt key file was accepted")
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name %s", err, path)
			}
			// The corrupt file is left for the operator, not replaced.
			after, readErr := os.ReadFile(path)
			if readErr != nil || string(after) != tc.content {
				t.Errorf("corrupt key file was changed (read error %v)", readErr)
			}
		})
	}
}

func TestLoadOrCreateConcurrentStartsAgree(t *testing.T) {
	// Processes started together (serve beside a CLI command) must settle
	// on one key; goroutines race through the same file system calls.
	dataDir := t.TempDir()
	const starts = 16
	sealers := make([]*sealer.Sealer, starts)
	createdBy := make([]bool, starts)
	var wg sync.WaitGroup
	errs := make(chan error, starts)
	for i := range starts {
		wg.Go(func() {
			s, created, err := sealer.LoadOrCreate(dataDir, "")
			if err != nil {
				errs <- err
				return
			}
			sealers[i], createdBy[i] = s, created
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("LoadOrCreate: %v", err)
	}
	creators := 0
	for _, created := range createdBy {
		if created {
			creators++
		}
	}
	if creators != 1 {
		t.Errorf("%d starts reported creating the key, want 1", creators)
	}
	sealed := sealers[0].Seal(dkimKey, domainID)
	for i, s := range sealers {
		if _, err := s.Open(sealed, domainID); err != nil {
			t.Errorf("start %d holds another key: %v", i, err)
		}
	}
	final := mustLoadOrCreate(t, dataDir, "", false)
	if _, err := final.Open(sealed, domainID); err != nil {
		t.Errorf("the stored key is not the one the starts used: %v", err)
	}
}
