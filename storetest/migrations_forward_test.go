package storetest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMigrationsOnlyGoForward: no migration has a goose Down section.
// Nothing runs one (serve and migrate only go up, and docs/api.md
// "Upgrades" says that going back is restoring a backup), so a Down
// section would be code that is never tested and that 00015 and 00016
// could not honour anyway.
func TestMigrationsOnlyGoForward(t *testing.T) {
	var files []string
	for _, dir := range []string{"../sqlite/migrations", "../postgres/migrations"} {
		found, err := filepath.Glob(filepath.Join(dir, "*.sql"))
		if err != nil || len(found) == 0 {
			t.Fatalf("no migrations in %s (%v)", dir, err)
		}
		files = append(files, found...)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "+goose Down") {
			t.Errorf("%s has a Down section: migrations only go forward (docs/api.md \"Upgrades\")", f)
		}
	}
}
