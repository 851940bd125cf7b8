package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDataFolderIsPrivate: a new data folder is 0700 and its files 0600 (the database, its -wal
// and -shm, the kept tokens); one made before, open to others, is tightened at start.
func TestDataFolderIsPrivate(t *testing.T) {
	for _, existing := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "data")
		if existing {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"loopback.db", "owner.token"} {
				if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			os.Remove(filepath.Join(dir, "owner.token")) // a kept token is written anew; the folder and db stay
			os.Chmod(dir, 0o755)
		}
		s := startServeIn(t, dir, 15*time.Second, map[string]string{"LOOPBACK_TOKEN": ""})
		s.do(t, "GET", "/api/v1/snapshot", "", "")
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("existing=%v: the data folder is %v %v, want 0700", existing, fi.Mode().Perm(), err)
		}
		for _, name := range []string{"loopback.db", "loopback.db-wal", "loopback.db-shm", "owner.token", "agent.token"} {
			fi, err := os.Stat(filepath.Join(dir, name))
			if err != nil {
				t.Errorf("existing=%v: %s: %v", existing, name, err)
			} else if fi.Mode().Perm() != 0o600 {
				t.Errorf("existing=%v: %s is %v, want 0600", existing, name, fi.Mode().Perm())
			}
		}
		s.stop()
	}
}

// TestDeletedDatabaseStopsTheServer: the database file deleted under a running server (its writes
// would go on into the unlinked file and vanish at the next start) stops it with an error and a
// log line saying what happened.
func TestDeletedDatabaseStopsTheServer(t *testing.T) {
	for _, how := range []string{"deleted", "replaced"} {
		t.Run(how, func(t *testing.T) {
			t.Setenv("LOOPBACK_TOKEN", ownerToken)
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out, log syncBuffer
			done := make(chan error, 1)
			ready := make(chan Listening, 1)
			go func() {
				done <- serve(ctx, []string{"--addr", "127.0.0.1:0", "--data", dir}, &out, &log, func(l Listening) { ready <- l })
			}()
			select {
			case <-ready:
			case err := <-done:
				t.Fatalf("serve exited early: %v\n%s", err, log.String())
			}
			db := filepath.Join(dir, "loopback.db")
			for _, f := range []string{db, db + "-wal", db + "-shm"} {
				os.Remove(f)
			}
			if how == "replaced" {
				os.WriteFile(db, nil, 0o600)
			}
			select {
			case err := <-done:
				if !errors.Is(err, errDatabaseGone) {
					t.Fatalf("serve returned %v, want errDatabaseGone", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("serve kept running on a deleted database")
			}
			if !strings.Contains(log.String(), "the database file was") {
				t.Errorf("no log line says why:\n%s", log.String())
			}
		})
	}
}
