package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// TestMigrateToDeadline: a database of schema 10 gets the due times and the escalations (011),
// keeps its asks (nothing due on them), and then keeps a new ask's due time.
func TestMigrateToDeadline(t *testing.T) {
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
	if _, err := d.w.ExecContext(ctx, undoSince(11)+` PRAGMA user_version = 10`); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openPath(t, path)
	if _, err := d.FindAsk(ctx, "s", a.ID); err != nil {
		t.Fatalf("after migrating: %v", err)
	}
	if due, err := d.DueAsks(ctx, time.Now().Add(24*time.Hour), 10); err != nil || len(due) != 0 {
		t.Fatalf("due after migrating: %v %v, want none", due, err)
	}
	if e, err := d.Escalation(ctx, "s"); err != nil || e.AfterMinutes != 0 {
		t.Fatalf("escalation after migrating: %+v %v", e, err)
	}
	in := ask.QuestionInput{Question: "by when?", Project: "p", Deadline: &ask.DeadlineInput{InSeconds: 60}}
	b, err := ask.NewService(d).AskQuestion(ctx, in, ask.Origin{Space: "s"})
	if err != nil {
		t.Fatal(err)
	}
	due, err := d.DueAsks(ctx, b.Deadline.At, 10)
	if err != nil || len(due) != 1 || due[0].ID != b.ID || !due[0].At.Equal(b.Deadline.At) {
		t.Fatalf("due after a new ask with a deadline: %+v %v", due, err)
	}
	_, nums, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	var version int
	if err := d.r.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil || version != nums[len(nums)-1] {
		t.Fatalf("schema version %d (%v), want %d (every migration)", version, err, nums[len(nums)-1])
	}
}
