package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/testwait"
)

// Closing the store while a transaction holds the writer and a call waits for it ends: the
// transaction finishes (looking up its kept statements), the waiting call runs, and Close
// returns. It deadlocked when Close held the statements' lock while closing them.
func TestCloseWhileWritesAreInFlight(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, filepath.Join(t.TempDir(), "loopback.db")) // closed by the test itself
	if err != nil {
		t.Fatal(err)
	}
	const q = `DELETE FROM leases WHERE space = ? AND ask_id = ? AND holder = ?`
	if _, err := d.w.ExecContext(ctx, q, "s", "a", "h"); err != nil { // kept from now on
		t.Fatal(err)
	}
	tx, err := d.w.BeginTx(ctx, nil) // holds the writer's one connection
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() { // waits for the writer
		_, err := d.w.ExecContext(ctx, q, "s", "b", "h")
		waiting <- err
	}()
	testwait.Eventually(t, "the call to wait for the writer", func() bool { return d.w.Stats().WaitCount >= 1 })
	closed := make(chan error, 1)
	go func() { closed <- d.Close() }()
	// Close has taken the kept statements to close them: the pool holds none now (or, as before
	// the fix, Close holds the pool's lock while it closes them).
	testwait.Eventually(t, "Close to take the kept statements", func() bool {
		if !d.w.mu.TryLock() {
			return true
		}
		defer d.w.mu.Unlock()
		return len(d.w.stmts) == 0
	})
	committed := make(chan error, 1)
	go func() { // the transaction goes on: a kept statement, then its commit
		if _, err := tx.ExecContext(ctx, q, "s", "c", "h"); err != nil {
			committed <- err
			return
		}
		committed <- tx.Commit()
	}()
	for what, ch := range map[string]chan error{"the transaction": committed, "Close": closed} {
		select {
		case err := <-ch:
			if what == "the transaction" && err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not end: Close, the transaction and the waiting call deadlocked", what)
		}
	}
	<-waiting // ran, or was refused because the store closed: either way it ended
}
