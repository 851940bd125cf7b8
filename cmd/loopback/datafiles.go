package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// The data folder holds the owner's key and every ask: readable by this user alone. A folder made
// by an earlier version, or by hand, is tightened at start, and so are the files in it.

// privateFiles are the data folder's files that hold secrets or everything: the database (and
// SQLite's -wal and -shm beside it, which hold recent writes), the kept tokens, the Web Push
// keys and the action links' key.
var privateFiles = []string{"loopback.db", "loopback.db-wal", "loopback.db-shm", ownerTokenFile, agentTokenFile, "vapid.json", actionKeyFile}

// tightenDataDir makes dir 0700 and its private files 0600, whatever they were.
func tightenDataDir(dir string) error {
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("making the data folder %s private (0700): %w", dir, err)
	}
	for _, name := range privateFiles {
		err := os.Chmod(filepath.Join(dir, name), 0o600)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("making %s private (0600): %w", filepath.Join(dir, name), err)
		}
	}
	return nil
}

// databaseCheckEvery is how often serve checks that its database file is still the one it opened.
const databaseCheckEvery = time.Second

// errDatabaseGone stops serve when its database file was deleted or replaced: SQLite would go on
// writing into the file it has open, and every write it acknowledged would be gone at the next
// start.
var errDatabaseGone = errors.New("the database file was deleted or replaced under the running server")

// watchDatabase checks every databaseCheckEvery that path is still the file opened (opened) and,
// the first time it is not, logs it loudly and stops the server with errDatabaseGone.
func watchDatabase(ctx context.Context, path string, opened os.FileInfo, stop context.CancelCauseFunc, logger *slog.Logger) {
	t := time.NewTicker(databaseCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now, err := os.Stat(path)
		if err == nil && os.SameFile(opened, now) {
			continue
		}
		why := "deleted"
		if err == nil {
			why = "replaced by another file"
		}
		logger.Error("the database file was "+why+" while Loopback was running: stopping, since writes into the file it still has open would be lost at the next start; restore the data folder from a backup, or start again to begin an empty one",
			"path", path)
		stop(fmt.Errorf("%w: %s was %s", errDatabaseGone, path, why))
		return
	}
}
