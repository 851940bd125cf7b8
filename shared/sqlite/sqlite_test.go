package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/ask/asktest"
	"github.com/loopback-hq/loopback/shared/buildinfo"
)

// openTest opens a fresh database file in a temporary folder, closed when the test ends: a copy
// of one migrated once per test process, as sqlitetest gives other packages' tests (which this
// package's own cannot import). Migrating a new file takes about 350 ms under the race detector.
func openTest(tb testing.TB) *DB {
	tb.Helper()
	b, err := migratedFile()
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "loopback.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatal(err)
	}
	return openPath(tb, path)
}

// migratedFile is the bytes of a database file Open made and closed (which checkpoints its WAL).
var migratedFile = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "loopback-sqlite-test-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "loopback.db")
	d, err := Open(context.Background(), path)
	if err != nil {
		return nil, err
	}
	if err := d.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
})

func openPath(tb testing.TB, path string) *DB {
	tb.Helper()
	d, err := Open(context.Background(), path)
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

// TestConformance runs asktest on a fresh database file per test, and on one database file
// shared by every test, as a shared DynamoDB table would be.
func TestConformance(t *testing.T) {
	for _, mode := range []struct {
		name string
		open func(t *testing.T) *DB
	}{
		{"File", func(t *testing.T) *DB { return openTest(t) }},
		{"Shared", sharedDB(t)},
	} {
		t.Run(mode.name, func(t *testing.T) {
			asktest.Run(t, asktest.Backend{Open: func(t *testing.T) asktest.Stores { return mode.open(t) }})
		})
	}
}

// sharedDB opens one database file for every test of the run.
func sharedDB(t *testing.T) func(*testing.T) *DB {
	d := openTest(t)
	return func(*testing.T) *DB { return d }
}

func TestPragmas(t *testing.T) {
	d := openTest(t)
	ctx := context.Background()
	check := func(pool string, q, want string) {
		t.Helper()
		p := d.w
		if pool == "r" {
			p = d.r
		}
		var got string
		if err := p.QueryRowContext(ctx, q).Scan(&got); err != nil {
			t.Fatalf("%s on %s: %v", q, pool, err)
		}
		if got != want {
			t.Fatalf("%s on %s = %s, want %s", q, pool, got, want)
		}
	}
	_, nums, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, pool := range []string{"w", "r"} {
		check(pool, "PRAGMA journal_mode", "wal")
		check(pool, "PRAGMA busy_timeout", "5000")
		check(pool, "PRAGMA foreign_keys", "1")
		check(pool, "PRAGMA synchronous", "1") // NORMAL
		check(pool, "PRAGMA user_version", strconv.Itoa(nums[len(nums)-1]))
	}
	check("w", "PRAGMA wal_autocheckpoint", "5000") // the background checkpoints do it
	check("w", "PRAGMA journal_size_limit", strconv.Itoa(walLimit))
	check("w", "PRAGMA page_size", "4096") // walLimit counts frames of it
	check("r", "PRAGMA query_only", "1")
	check("w", "PRAGMA query_only", "0")
}

// TestReopen: a database opened again keeps its rows and is not migrated twice; one written by a
// newer schema is refused rather than misread.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "loopback.db")
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	svc := ask.NewService(d)
	a, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "kept?", Project: "p"}, ask.Origin{Space: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openPath(t, path)
	if _, err := d.FindAsk(ctx, "s", a.ID); err != nil {
		t.Fatalf("after reopening: %v", err)
	}
	if _, err := d.w.ExecContext(ctx, "PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, path); err == nil || !strings.Contains(err.Error(), "schema version 99") {
		t.Fatalf("opening a database of a newer schema: got %v, want it refused", err)
	}
}

func TestOpenRefusesOddPaths(t *testing.T) {
	for _, p := range []string{"", "a.db?mode=ro", "a#b"} {
		if _, err := Open(context.Background(), p); err == nil {
			t.Errorf("Open(%q): got no error", p)
		}
	}
}

// TestRevision: every row keeps the contract revision that wrote it.
func TestRevision(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	svc := ask.NewService(d)
	a, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "?", Project: "p", Options: []ask.Choice{{Label: "a"}, {Label: "b"}}}, ask.Origin{Space: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Reply(ctx, "s", a.ID, ask.Reply{Outcome: ask.OutcomeDismissed}, nil); err != nil {
		t.Fatal(err)
	}
	if err := d.CreateCredential(ctx, &ask.Credential{ID: "c", Space: "s", TokenHash: []byte{1}, Role: ask.RoleOwner, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := d.CreateTicket(ctx, &ask.Ticket{Hash: []byte{2}, Purpose: "events", Space: "s", ExpiresAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := d.PutLease(ctx, ask.Lease{Space: "s", AskID: a.ID, Holder: "h", ExpiresAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	task := &ask.Task{ID: "task", Space: "s", AskID: a.ID, Tool: "ask_question", Status: ask.TaskWorking,
		TTL: time.Hour, CreatedAt: time.Now(), UpdatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}
	if err := d.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	task.Status, task.Result = ask.TaskCompleted, []byte(`{"content":[]}`)
	if _, err := d.FinishTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	up := &ask.Upload{ID: ask.NewUploadID(), Space: "s", TokenHash: []byte{3}, ContentType: ask.ImagePNG, MaxBytes: 10,
		State: ask.UploadPending, CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}
	if err := d.CreateUpload(ctx, up); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ClaimUpload(ctx, "s", up.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	rule := &ask.Rule{ID: "rule", Space: "s", RuleInput: ask.RuleInput{Effect: ask.EffectAllow, RuleScope: ask.RuleScope{Tool: "Read"}}, CreatedBy: ask.Actor{ID: "o"}}
	if err := d.CreateRule(ctx, rule, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := d.w.ExecContext(ctx, `UPDATE tasks SET revision = 0; UPDATE leases SET revision = 0; UPDATE uploads SET revision = 0; UPDATE rules SET revision = 0`); err != nil {
		t.Fatal(err)
	}
	// Writes after the first must stamp the revision again.
	if err := d.PutLease(ctx, ask.Lease{Space: "s", AskID: a.ID, Holder: "h", ExpiresAt: time.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.w.ExecContext(ctx, `UPDATE tasks SET status = 'working'`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.FinishTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	if err := d.MarkUploadStored(ctx, "s", up.ID, 5, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := d.UpdateRule(ctx, rule); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"asks", "credentials", "tickets", "leases", "tasks", "uploads", "rules"} {
		var n, bad int
		q := fmt.Sprintf("SELECT count(*), count(*) FILTER (WHERE revision <> %d) FROM %s", buildinfo.Revision, table)
		if err := d.r.QueryRowContext(ctx, q).Scan(&n, &bad); err != nil {
			t.Fatal(err)
		}
		if n != 1 || bad != 0 {
			t.Fatalf("%s: %d rows, %d without revision %d", table, n, bad, buildinfo.Revision)
		}
	}
}

// TestCloseTimesStepByMicroseconds: asks of a space closed on one clock reading get that time,
// then that time plus 1µs, 2µs, …; and the unique index holds even against a direct write.
func TestCloseTimesStepByMicroseconds(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	svc := &ask.Service{Store: d, Now: func() time.Time { return now }, NewID: ask.NewID}
	var ids []string
	for i := range 4 {
		a, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "?", Project: "p"}, ask.Origin{Space: "s"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err = svc.Reply(ctx, "s", a.ID, ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{}, Text: "ok"}, nil); err != nil {
			t.Fatal(err)
		}
		if a, err = d.FindAsk(ctx, "s", a.ID); err != nil {
			t.Fatal(err)
		}
		if want := now.Add(time.Duration(i) * time.Microsecond); !a.ClosedAt.Equal(want) || !a.UpdatedAt.Equal(want) {
			t.Fatalf("close %d: closedAt %v, updatedAt %v, want both %v", i, a.ClosedAt, a.UpdatedAt, want)
		}
		ids = append(ids, a.ID)
	}
	_, err := d.w.ExecContext(ctx, `UPDATE asks SET closed_at = (SELECT closed_at FROM asks WHERE id = ?) WHERE id = ?`, ids[0], ids[1])
	if !isUnique(err) {
		t.Fatalf("two asks of a space with one close time: got %v, want a UNIQUE constraint error", err)
	}
}

// TestQueryPlans: the listing queries walk an index in order, without sorting or scanning.
func TestQueryPlans(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	for _, q := range []struct{ query, index string }{
		{`SELECT version, body FROM asks WHERE space = 's' AND status <> 'closed' ORDER BY created_at DESC, id DESC`, "asks_open"},
		{`SELECT version, body FROM asks WHERE space = 's' AND closed_at IS NOT NULL AND closed_at < 'x' ORDER BY closed_at DESC LIMIT 5`, "asks_closed"},
		{`SELECT closed_at FROM asks WHERE space = 's' AND closed_at >= 'x' AND id <> 'y' ORDER BY closed_at`, "asks_closed"},
		{`SELECT version, credential_id, turns, body FROM asks WHERE space = 's' AND credential_id = 'c' AND closed_at IS NOT NULL AND closed_at >= 'x' ORDER BY closed_at DESC LIMIT 5`, "asks_closed_by"},
		{`SELECT * FROM credentials WHERE space = 's' ORDER BY created_at, id`, "credentials_by_space"},
		{`SELECT space, ask_id, holder, expires_at FROM leases WHERE expires_at <= 'x' ORDER BY expires_at, space, ask_id, holder LIMIT 5`, "leases_expiry"},
		{`SELECT * FROM tasks WHERE space = 's' AND expires_at > 'x' ORDER BY created_at DESC, id DESC LIMIT 5`, "tasks_by_space"},
		{`SELECT * FROM tasks WHERE space = 's' AND expires_at > 'x' AND (created_at, id) < ('y', 'z') ORDER BY created_at DESC, id DESC LIMIT 5`, "tasks_by_space"},
		{`SELECT * FROM uploads WHERE used = 0 AND expires_at <= 'x' ORDER BY expires_at, space, id LIMIT 5`, "uploads_reapable"},
	} {
		rows, err := d.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q.query)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		text := strings.Join(plan, "; ")
		if !strings.Contains(text, "INDEX "+q.index) || strings.Contains(text, "TEMP B-TREE") {
			t.Errorf("plan for %q:\n  %s\nwant a walk of index %s with no sort", q.query, text, q.index)
		}
	}
}

// seed stores open and closed asks in one space, in one transaction.
func seed(tb testing.TB, d *DB, space string, open, closed int) {
	tb.Helper()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	asks := make([]*ask.Ask, 0, open+closed)
	for i := range open + closed {
		created := start.Add(time.Duration(i) * time.Second)
		clock := func() time.Time { return created }
		a, err := ask.NewQuestion(ask.NewID(), benchQuestion(i), ask.Origin{Space: space, Client: "bench"}, clock)
		if err != nil {
			tb.Fatal(err)
		}
		if i >= open {
			if err := ask.ApplyReply(a, ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"Yes"}}, nil,
				func() time.Time { return created.Add(time.Minute) }); err != nil {
				tb.Fatal(err)
			}
		}
		asks = append(asks, a)
	}
	if err := d.createAsks(context.Background(), asks...); err != nil {
		tb.Fatal(err)
	}
}

func benchQuestion(i int) ask.QuestionInput {
	return ask.QuestionInput{
		Question: fmt.Sprintf("Question %d: should the store keep asks as JSON with indexed columns beside it?", i),
		Options:  []ask.Choice{{Label: "Yes", Description: "one row per ask"}, {Label: "No"}},
		Context:  "A realistic ask carries a paragraph or two of context, so the benchmark does too. " + strings.Repeat("Context. ", 20),
		Project:  "loopback",
	}
}

// openQuestions stores one fresh open question per iteration of b, made before its timer starts.
func openQuestions(b *testing.B, d *DB, svc *ask.Service) []*ask.Ask {
	asks := make([]*ask.Ask, b.N)
	for i := range asks {
		a, err := ask.NewQuestion(ask.NewID(), benchQuestion(i), ask.Origin{Space: "bench"}, svc.Now)
		if err != nil {
			b.Fatal(err)
		}
		asks[i] = a
	}
	if err := d.createAsks(context.Background(), asks...); err != nil {
		b.Fatal(err)
	}
	// The asks' search rows are written now, not by the indexer during the timed replies.
	if err := d.flushIndex(context.Background()); err != nil {
		b.Fatal(err)
	}
	return asks
}

func BenchmarkReply(b *testing.B) {
	d := openTest(b)
	seed(b, d, "bench", 1000, 10000)
	svc := ask.NewService(d)
	ctx := context.Background()
	asks := openQuestions(b, d, svc)
	reply := ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"Yes"}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := svc.Reply(ctx, "bench", asks[i].ID, reply, nil); err != nil {
			b.Fatal(err)
		}
	}
}
