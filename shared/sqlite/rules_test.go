package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
)

// TestMigrateToRules: a database of schema 9 gets the rules table (migration 010) and keeps its
// asks.
func TestMigrateToRules(t *testing.T) {
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
	if _, err := d.w.ExecContext(ctx, undoSince(10)+` PRAGMA user_version = 9`); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openPath(t, path)
	if _, err := d.FindAsk(ctx, "s", a.ID); err != nil {
		t.Fatalf("after migrating: %v", err)
	}
	r := &ask.Rule{ID: "rule_1", Space: "s", RuleInput: ask.RuleInput{Effect: ask.EffectAllow, RuleScope: ask.RuleScope{Tool: "Read"}}, CreatedBy: ask.Actor{ID: "ada"}}
	if err := d.CreateRule(ctx, r, 10); err != nil {
		t.Fatalf("CreateRule after migrating: %v", err)
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
