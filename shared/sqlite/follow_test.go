package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/testwait"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// TestDeleteExpiredTickets: the sweep deletes the tickets that have expired by now (ExpiresAt at
// or before it) and keeps the rest usable.
func TestDeleteExpiredTickets(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	var tickets []*ask.Ticket
	for i, expires := range []time.Duration{-time.Hour, -time.Second, 0, time.Microsecond, time.Minute} {
		tk := &ask.Ticket{Hash: []byte{byte(i + 1)}, Purpose: "events", Space: "s", ExpiresAt: t0.Add(expires)}
		if err := d.CreateTicket(ctx, tk); err != nil {
			t.Fatal(err)
		}
		tickets = append(tickets, tk)
	}
	n, err := d.DeleteExpiredTickets(ctx, t0)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("DeleteExpiredTickets deleted %d tickets, want the 3 expired at or before now", n)
	}
	if n, err := d.DeleteExpiredTickets(ctx, t0); err != nil || n != 0 {
		t.Fatalf("DeleteExpiredTickets again: %d, %v; want 0, nil", n, err)
	}
	var left int
	if err := d.r.QueryRowContext(ctx, `SELECT count(*) FROM tickets`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 2 {
		t.Fatalf("%d tickets left, want 2", left)
	}
	for _, tk := range tickets[3:] {
		if _, err := d.ConsumeTicket(ctx, "events", tk.Hash, t0); err != nil {
			t.Fatalf("a ticket the sweep kept: %v", err)
		}
	}
}

// TestDeleteExpiredTasks: the same for tasks, which FindTask stops finding at ExpiresAt.
func TestDeleteExpiredTasks(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	for i, ttl := range []time.Duration{time.Second, time.Minute, time.Minute + time.Millisecond, time.Hour} {
		tk := &ask.Task{ID: string(rune('a' + i)), Space: "s", AskID: "ask", Tool: "ask_question", Status: ask.TaskWorking,
			TTL: ttl, CreatedAt: t0, UpdatedAt: t0, ExpiresAt: t0.Add(ttl)}
		if err := d.CreateTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	n, err := d.DeleteExpiredTasks(ctx, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("DeleteExpiredTasks deleted %d tasks, want 2", n)
	}
	page, _, err := d.ListTasks(ctx, "s", "", 10, t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 2 || page[0].ID != "d" || page[1].ID != "c" {
		t.Fatalf("tasks left: %v, want d and c", page)
	}
}

// TestListTasksCursor: the page that holds a space's last task says so with an empty cursor, even
// when it is full; a cursor the store did not give out is the caller's error.
func TestListTasksCursor(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	for i := range 4 {
		tk := &ask.Task{ID: string(rune('a' + i)), Space: "s", AskID: "ask", Tool: "ask_question", Status: ask.TaskWorking,
			TTL: time.Hour, CreatedAt: t0.Add(time.Duration(i) * time.Second), UpdatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
		if err := d.CreateTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	page, next, err := d.ListTasks(ctx, "s", "", 2, t0)
	if err != nil || len(page) != 2 || next == "" {
		t.Fatalf("first page of 2: %d tasks, cursor %q, %v", len(page), next, err)
	}
	page, next, err = d.ListTasks(ctx, "s", next, 2, t0)
	if err != nil || len(page) != 2 || next != "" {
		t.Fatalf("second and last page of 2: %d tasks, cursor %q, %v; want 2 tasks and no cursor", len(page), next, err)
	}
	if page, next, err := d.ListTasks(ctx, "s", "", 4, t0); err != nil || len(page) != 4 || next != "" {
		t.Fatalf("one full page of all 4: %d tasks, cursor %q, %v; want no cursor", len(page), next, err)
	}
	for _, bad := range []string{"x", "!!!", ask.EncodeTaskCursor(t0, "")[:10], "bm90IGEgdGltZSBhdCBhbGwsIG5vLCBub3QgYXQgYWxs"} {
		_, _, err := d.ListTasks(ctx, "s", bad, 2, t0)
		if ask.ErrorCode(err) != ask.ERequestInvalid {
			t.Errorf("ListTasks with cursor %q: got %v, want %s", bad, err, ask.ERequestInvalid)
		}
	}
}

// TestTaskWrites: a task id is created once per space, and FinishTask needs a terminal status.
func TestTaskWrites(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	tk := &ask.Task{ID: "a", Space: "s", AskID: "ask", Tool: "ask_question", Status: ask.TaskWorking,
		TTL: time.Hour, CreatedAt: t0, UpdatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	if err := d.CreateTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	dup := *tk
	dup.Tool = "request_review"
	if err := d.CreateTask(ctx, &dup); err == nil {
		t.Fatal("CreateTask of an id already stored in the space: got no error")
	}
	if _, err := d.FinishTask(ctx, tk); err == nil {
		t.Fatal("FinishTask to status working: got no error")
	}
	odd := *tk
	odd.Status = "done"
	if _, err := d.FinishTask(ctx, &odd); err == nil {
		t.Fatal("FinishTask to an unknown status: got no error")
	}
	got, err := d.FindTask(ctx, "s", "a", t0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != ask.TaskWorking || got.Tool != tk.Tool {
		t.Fatalf("after refused writes the task is %s, tool %s", got.Status, got.Tool)
	}
}

// TestMigrateToFollow: a database of schema 1 gets the follow tables and keeps its asks.
func TestMigrateToFollow(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "loopback.db")
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := ask.NewService(d).AskQuestion(ctx, ask.QuestionInput{Question: "kept?", Project: "p"}, ask.Origin{Space: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.w.ExecContext(ctx, `DROP TABLE leases; DROP TABLE tasks; DROP TABLE uploads;
		ALTER TABLE credentials DROP COLUMN last_used_at; ALTER TABLE tickets DROP COLUMN credential_id;
		DROP INDEX asks_closed_by; ALTER TABLE asks DROP COLUMN turns;
		ALTER TABLE asks DROP COLUMN credential_id; DROP TABLE push_subscriptions; DROP TABLE upload_quota; `+undoSince(10)+` PRAGMA user_version = 1`); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openPath(t, path)
	if _, err := d.FindAsk(ctx, "s", a.ID); err != nil {
		t.Fatalf("after migrating: %v", err)
	}
	if err := d.PutLease(ctx, ask.Lease{Space: "s", AskID: a.ID, Holder: "h", ExpiresAt: t0}); err != nil {
		t.Fatalf("PutLease after migrating: %v", err)
	}
	if _, _, err := d.ListTasks(ctx, "s", "", 1, t0); err != nil {
		t.Fatalf("ListTasks after migrating: %v", err)
	}
}

// TestAskWaiting: the flag as the row's JSON holds it, and ErrNotFound for an ask not stored.
func TestAskWaiting(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	svc := &ask.Service{Store: d, Leases: d, Now: func() time.Time { return t0 }, NewID: ask.NewID}
	a, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "?", Project: "p"},
		ask.Origin{Space: "s", Follow: &ask.Follow{Holder: "h", TTL: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	if w, err := d.AskWaiting(ctx, "s", a.ID); err != nil || !w {
		t.Fatalf("AskWaiting of a followed ask = %v, %v; want true", w, err)
	}
	if _, err := svc.SetWaiting(ctx, "s", a.ID, false); err != nil {
		t.Fatal(err)
	}
	if w, err := d.AskWaiting(ctx, "s", a.ID); err != nil || w {
		t.Fatalf("AskWaiting after clearing = %v, %v; want false", w, err)
	}
	if _, err := d.AskWaiting(ctx, "other", a.ID); !errors.Is(err, ask.ErrNotFound) {
		t.Fatalf("AskWaiting in another space: %v, want ErrNotFound", err)
	}
}

// TestRewriteClosedAskKeepsItsCloseTime: writing a closed ask again (its close time unchanged)
// keeps that time, with other asks of the space closed just after it.
func TestRewriteClosedAskKeepsItsCloseTime(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	svc := &ask.Service{Store: d, Now: func() time.Time { return t0 }, NewID: ask.NewID}
	var closed []*ask.Ask
	for range 3 {
		a, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "?", Project: "p"}, ask.Origin{Space: "s"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err = svc.Reply(ctx, "s", a.ID, ask.Reply{Outcome: ask.OutcomeDismissed}, nil); err != nil {
			t.Fatal(err)
		}
		if a, err = d.FindAsk(ctx, "s", a.ID); err != nil {
			t.Fatal(err)
		}
		closed = append(closed, a)
	}
	a := closed[0]
	at := *a.ClosedAt
	a, _, err := d.ChangeAsk(ctx, "s", a.ID, func(a *ask.Ask) error { a.Waiting = true; return nil }) // any change of a closed ask
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.FindAsk(ctx, "s", a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.ClosedAt.Equal(at) || !got.Waiting || got.Version != a.Version {
		t.Fatalf("rewritten: closedAt %v waiting %v version %d; want %v, true, %d", got.ClosedAt, got.Waiting, got.Version, at, a.Version)
	}
}

// TestReplyIsTheAsksJSON: the JSON a reply hands back (the body ChangeAsk stored) is byte
// for byte json.Marshal of the replied ask, as the response wrote it before.
func TestReplyIsTheAsksJSON(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	svc := &ask.Service{Store: d, Now: func() time.Time { return t0 }, NewID: ask.NewID}
	by := &ask.Actor{ID: "ana", Name: "Ana <ana@example.com>"}
	for _, r := range []ask.Reply{
		{Outcome: ask.OutcomeAnswered, Selected: []string{"Yes"}, Text: "a & b <c>"},
		{Outcome: ask.OutcomeFollowUp, Question: "why?\u2028"},
	} {
		a, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "Go <now>?", Project: "p",
			Options: []ask.Choice{{Label: "Yes"}, {Label: "No"}}}, ask.Origin{Space: "s", RaisedBy: by})
		if err != nil {
			t.Fatal(err)
		}
		w, err := svc.Reply(ctx, "s", a.ID, r, by)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.FindAsk(ctx, "s", a.ID)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if string(w.JSON) != string(want) || w.ID != a.ID || w.Version != got.Version {
			t.Fatalf("Reply = %s (%s v%d)\nwant       %s (%s v%d)", w.JSON, w.ID, w.Version, want, a.ID, got.Version)
		}
	}
}

// TestChangeAsk: fn's error comes back as it is and nothing is written; an ask not stored is
// ErrNotFound; a change is written with its version moved on, and the body returned is the row's.
func TestChangeAsk(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	svc := &ask.Service{Store: d, Now: func() time.Time { return t0 }, NewID: ask.NewID}
	a, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "?", Project: "p"}, ask.Origin{Space: "s"})
	if err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused")
	if _, _, err := d.ChangeAsk(ctx, "s", a.ID, func(a *ask.Ask) error { a.Project = "changed"; return refused }); err != refused {
		t.Fatalf("ChangeAsk with fn refusing: %v, want fn's error as it is", err)
	}
	if got, _ := d.FindAsk(ctx, "s", a.ID); got.Project != "p" || got.Version != 1 {
		t.Fatalf("after a refused change: project %q version %d, want p, 1", got.Project, got.Version)
	}
	if _, _, err := d.ChangeAsk(ctx, "other", a.ID, func(*ask.Ask) error { return nil }); !errors.Is(err, ask.ErrNotFound) {
		t.Fatalf("ChangeAsk in another space: %v, want ErrNotFound", err)
	}
	changed, body, err := d.ChangeAsk(ctx, "s", a.ID, func(a *ask.Ask) error { a.Waiting = true; return nil })
	if err != nil {
		t.Fatal(err)
	}
	var stored string
	if err := d.r.QueryRowContext(ctx, `SELECT body FROM asks WHERE id = ?`, a.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if changed.Version != 2 || !changed.Waiting || string(body) != stored {
		t.Fatalf("changed: version %d waiting %v body %s; want 2, true, the stored %s", changed.Version, changed.Waiting, body, stored)
	}
}

// TestCheckpointsBySize: commits leave the WAL to the background checkpoints, which copy it into
// the database file only once it holds checkpointPages pages, so that the commit that starts the
// WAL again (and fsyncs its header) comes once in that many pages, not after every pause; that
// commit cuts the WAL file back to walLimit.
func TestCheckpointsBySize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "loopback.db")
	d := openPath(t, path)
	size := func(p string) int64 {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	seed(t, d, "s", 300, 0) // about 100 pages
	if d.checkpointIfLarge() {
		t.Fatalf("a WAL of %d bytes (limit %d) was checkpointed", size(path+"-wal"), walLimit)
	}
	before := size(path)
	seed(t, d, "t", 4000, 0) // over 1,000 pages, in the WAL when the transaction commits
	if wal := size(path + "-wal"); wal <= walLimit {
		t.Fatalf("the WAL is %d bytes after 4,000 asks; want more than %d", wal, walLimit)
	}
	testwait.Eventually(t, "a checkpoint to grow the database file from its "+strconv.FormatInt(before, 10)+" bytes", func() bool {
		return size(path) > before
	})
	// The checkpoints' own write starts the WAL again (restartWAL), so no commit of the house's
	// pays that fsync: the file is cut back with no other commit made.
	testwait.Eventually(t, "the checkpoint's own commit to cut the WAL back to "+strconv.Itoa(walLimit)+" bytes", func() bool {
		return size(path+"-wal") == walLimit
	})
}
