// Package sqlitetest opens a fresh SQLite database for a test, quickly. A new file is brought up
// to date by every migration, which under the race detector takes about 350 ms (modernc's SQLite
// is Go, and all of it is instrumented); the tests of the house open a few hundred. So the
// migrations run once per test process, into a template, and each test gets a copy of its bytes:
// the same database a fresh Open makes, in about a millisecond.
package sqlitetest

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/loopback-hq/loopback/shared/sqlite"
)

var template = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "loopback-sqlitetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "loopback.db")
	d, err := sqlite.Open(context.Background(), path)
	if err != nil {
		return nil, err
	}
	// Closing the last connection checkpoints the WAL into the file and removes it.
	if err := d.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
})

// Open opens a fresh, migrated database in the test's temporary folder, closed when the test
// ends.
func Open(tb testing.TB) *sqlite.DB {
	tb.Helper()
	return OpenAt(tb, filepath.Join(tb.TempDir(), "loopback.db"))
}

// OpenAt opens the database at path, closed when the test ends: a fresh one, as Open makes, if
// there is no file there yet, or the one there (a test that opens it again, as a restart does,
// or reads what a server wrote).
func OpenAt(tb testing.TB, path string) *sqlite.DB {
	tb.Helper()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		b, err := template()
		if err != nil {
			tb.Fatalf("sqlitetest: the template database: %v", err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	d, err := sqlite.Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := d.Close(); err != nil {
			tb.Error(err)
		}
	})
	return d
}
