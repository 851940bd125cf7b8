// Package sqlite keeps Loopback's asks, credentials, tickets, leases and MCP tasks in one SQLite
// file, with the pure-Go driver (no cgo). *DB implements ask.Store, ask.CredentialStore,
// ask.TicketStore, ask.LeaseStore and ask.TaskStore and passes the conformance suite in
// ask/asktest.
//
// The file runs in WAL mode. Writes go through a pool of one connection, each in a BEGIN
// IMMEDIATE transaction, so writers in this process queue in Go instead of failing with "database
// is locked", and busy_timeout covers any other process on the same file. Reads go through their
// own pool and run beside the writer.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/loopback-hq/loopback/shared/ask"
)

// busyTimeout is how long a statement waits for another process's lock before it fails.
const busyTimeout = 5 * time.Second

// Checkpoints. In WAL mode a commit appends its pages to the WAL; a checkpoint copies them back
// into the database file and fsyncs both; the first commit after a checkpoint that copied
// everything starts the WAL again from its beginning, and with synchronous=NORMAL that commit
// fsyncs the WAL's new header (SQLite's rule, so that a power cut cannot mix old frames with
// new). Whichever commit comes first after a checkpoint pays that fsync, and in a quiet house
// that is the person's reply, which comes seconds after the agent's ask: so the WAL is
// checkpointed by size, not by time. A connection of its own looks at the WAL file's size every
// checkpointLook and runs a PASSIVE checkpoint (which waits for no reader or writer) only once
// the file is past walLimit: one commit in about every checkpointPages pages written starts the
// WAL again, and no commit copies it.
//
// The size tells because of journal_size_limit: the commit that starts the WAL again cuts the
// file back to walLimit, and frames are then written from its start, so the file grows past
// walLimit only once checkpointPages pages are in the WAL again.
const (
	checkpointLook  = 200 * time.Millisecond
	checkpointPages = 1000 // SQLite's own default for its automatic checkpoints

	// walLimit is the WAL file's size with checkpointPages frames in it: a 32-byte header, then
	// a 24-byte header and a page (4,096 bytes, SQLite's default, which Loopback keeps) a frame.
	walLimit = 32 + checkpointPages*(24+4096)
)

// autocheckpointPages is the WAL size (in pages) at which a commit checkpoints after all: a
// safety net should the background checkpoints fall behind, well above what one look's interval
// writes.
const autocheckpointPages = 5000

// DB is Loopback's SQLite store.
type DB struct {
	w *pool // one connection; every transaction on it is BEGIN IMMEDIATE
	r *pool // readers; the same pool as w for an in-memory database

	ck      *pool         // the background checkpoints' connection; nil in memory
	wal     string        // the WAL's path
	stopCk  chan struct{} // closed by Close
	ckEnded chan struct{} // closed when the checkpoint loop has returned

	ixWake  chan struct{} // an ask was written (indexSoon)
	ixStop  chan struct{} // closed by Close
	ixEnded chan struct{} // closed when the indexer has returned
}

var (
	_ ask.Store           = (*DB)(nil)
	_ ask.CredentialStore = (*DB)(nil)
	_ ask.TicketStore     = (*DB)(nil)
	_ ask.LeaseStore      = (*DB)(nil)
	_ ask.TaskStore       = (*DB)(nil)
)

// Open opens the database at path, creating it if need be, and brings its schema up to date.
func Open(ctx context.Context, path string) (*DB, error) {
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlite: %q is not a usable database path", path)
	}
	params := fmt.Sprintf("_busy_timeout=%d&_foreign_keys=1&_txlock=immediate", busyTimeout.Milliseconds())
	d := &DB{}
	// The file is made here, readable by this user alone, before SQLite makes it with the
	// process's umask (0644 as a rule): its -wal and -shm take its mode.
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600); err == nil {
		f.Close()
	}
	dsn := path + "?" + params + "&_journal_mode=WAL&_synchronous=NORMAL" +
		fmt.Sprintf("&_pragma=wal_autocheckpoint(%d)&_pragma=journal_size_limit(%d)", autocheckpointPages, walLimit)
	d.w = openPool(dsn, 1)
	d.r = openPool(dsn+"&_query_only=1", max(4, runtime.GOMAXPROCS(0)))
	d.ck = openPool(dsn, 1)
	d.wal = path + "-wal"
	if err := d.init(ctx, path); err != nil {
		d.Close()
		return nil, err
	}
	d.stopCk, d.ckEnded = make(chan struct{}), make(chan struct{})
	go d.checkpoints()
	d.ixWake, d.ixStop, d.ixEnded = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go d.indexer()
	d.indexSoon() // whatever an earlier run left pending
	return d, nil
}

// checkpoints looks at the WAL every checkpointLook until Close, and checkpoints it once it is
// large.
func (d *DB) checkpoints() {
	defer close(d.ckEnded)
	t := time.NewTicker(checkpointLook)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			d.checkpointIfLarge()
		case <-d.stopCk:
			return
		}
	}
}

// checkpointIfLarge runs a PASSIVE checkpoint if the WAL file is past walLimit, and says whether
// it ran one. A failed one (the database busy) is simply tried again at the next look. A
// checkpoint that copied the whole WAL is followed by restartWAL.
func (d *DB) checkpointIfLarge() bool {
	fi, err := os.Stat(d.wal)
	if err != nil || fi.Size() <= walLimit {
		return false
	}
	ctx := context.Background()
	var busy, frames, copied int
	if err := d.ck.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err == nil && busy == 0 && frames > 0 && copied == frames {
		d.restartWAL(ctx)
	}
	return true
}

// restartWAL makes the commit that starts the WAL again from its beginning, and so fsyncs its
// new header (synchronous=NORMAL's one fsync outside checkpoints), a write of its own, through
// the writer's queue: otherwise that commit is whichever comes next, a person's reply as likely
// as not, and it waits for the fsync (up to tens of milliseconds beside a checkpoint's own; the
// reply path's p99, issue 30). Setting user_version to what it is changes nothing but writes
// the database's first page. A commit that comes between the checkpoint and this write pays the
// fsync as before.
func (d *DB) restartWAL(ctx context.Context) {
	_ = d.writeTx(ctx, func(tx *Tx) error {
		var v int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(v))
		return err
	})
}

func openPool(dsn string, conns int) *pool {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		panic(err) // only when the driver is not registered, and it is imported above
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	return newPool(db)
}

// Close closes the database.
func (d *DB) Close() error {
	if d.ixStop != nil {
		close(d.ixStop)
		<-d.ixEnded
		d.ixStop = nil
	}
	if d.stopCk != nil {
		close(d.stopCk)
		<-d.ckEnded
		d.stopCk = nil
	}
	return errors.Join(d.ck.Close(), d.w.Close(), d.r.Close())
}

// init checks the connection settings took and applies the migrations.
func (d *DB) init(ctx context.Context, path string) error {
	if err := d.w.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	var mode string
	if err := d.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if mode != "wal" {
		return fmt.Errorf("sqlite: open %s: journal mode is %s, want wal", path, mode)
	}
	if err := migrate(ctx, d.w.DB); err != nil {
		return fmt.Errorf("sqlite: migrate %s: %w", path, err)
	}
	return nil
}

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrations lists the embedded migrations in the order they apply, with their numbers. Their names
// start with their number (001_, 002_, …), each number once and in order; PRAGMA user_version is
// the number of the last one applied. Numbers are handed out ahead of time to work under way on
// several branches (docs: the team's migration numbers), so one may be missing while another
// branch holds it: a gap is allowed, and a database only ever moves forward.
func migrations() ([]string, []int, error) {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(names)
	nums := make([]int, len(names))
	for i, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		n, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil || len(base) < 4 || base[3] != '_' || n < 1 || (i > 0 && n <= nums[i-1]) {
			return nil, nil, fmt.Errorf("migration %s is out of sequence: want a name starting with a new three-digit number and _", name)
		}
		nums[i] = n
	}
	return names, nums, nil
}

// migrate applies every migration the database has not had yet, all in one transaction.
func migrate(ctx context.Context, w *sql.DB) error {
	names, nums, err := migrations()
	if err != nil {
		return err
	}
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var applied int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&applied); err != nil {
		return err
	}
	last := 0
	if len(nums) > 0 {
		last = nums[len(nums)-1]
	}
	if applied > last {
		return fmt.Errorf("the database has schema version %d; this build knows %d: run a newer Loopback", applied, last)
	}
	for i, name := range names {
		if nums[i] <= applied {
			continue
		}
		text, err := migrationFS.ReadFile(name)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(text)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", last)); err != nil {
		return err
	}
	return tx.Commit()
}

// writeTx runs fn in a write transaction and commits it if fn returns nil. A caller already gone
// starts none; once begun, the transaction runs to its commit or its failure, whether or not the
// caller goes meanwhile (a reply the person sent is kept though their connection dropped), and
// so with a context that is never cancelled: the driver otherwise starts a goroutine for every
// statement to watch for the cancel, and database/sql one for the transaction.
func (d *DB) writeTx(ctx context.Context, fn func(tx *Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer d.w.keep(ctx, tx) // after the rollback below: the connection is free
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// isUnique reports whether err is a UNIQUE or PRIMARY KEY constraint failing.
func isUnique(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// formatTime and parseTime are how every time is stored: ask.FormatTime's fixed-width UTC text.
func formatTime(t time.Time) string { return ask.FormatTime(t) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(ask.TimeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t, nil
}

// nullTime stores an optional time.
func nullTime(t *time.Time) sql.NullString {
	if t == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: formatTime(*t), Valid: true}
}

func parseNullTime(s sql.NullString) (*time.Time, error) {
	if !s.Valid {
		return nil, nil
	}
	t, err := parseTime(s.String)
	return &t, err
}
