package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/testwait"
)

// pending counts the asks whose search rows are still to be written.
func pending(t *testing.T, d *DB) int {
	t.Helper()
	var n int
	if err := d.r.QueryRowContext(context.Background(), `SELECT count(*) FROM search_pending`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// indexed reports whether the ask's row of the search index holds text with word in it.
func indexed(t *testing.T, d *DB, space, id, word string) bool {
	t.Helper()
	var n int
	err := d.r.QueryRowContext(context.Background(), `SELECT count(*) FROM ask_search s JOIN asks a ON a.rowid = s.rowid
		WHERE a.space = ? AND a.id = ? AND ask_search MATCH ?`, space, id, word).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// TestIndexFollowsTheAsks: a change of an ask leaves its search row to the indexer, which writes
// it on its own a moment later; a search before then writes it first, so it sees the change.
func TestIndexFollowsTheAsks(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	svc := ask.NewService(d)
	person := &ask.Actor{ID: "person:ann", Name: "Ann"}
	a, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "Ship the gadget?", Project: "p"}, ask.Origin{Space: "s"})
	if err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the indexer writes the new ask's row", func() bool { return pending(t, d) == 0 && indexed(t, d, "s", a.ID, "gadget") })

	// The person's words are in the index once the indexer has run, with no search asking.
	if _, err := svc.Reply(ctx, "s", a.ID, ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{}, Text: "Wait for the thingamajig"}, person); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the indexer writes the reply's words", func() bool { return pending(t, d) == 0 && indexed(t, d, "s", a.ID, "thingamajig") })

	// A search right after a change sees it, whether or not the indexer has run.
	b, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "Rename the whatsit?", Project: "p"}, ask.Origin{Space: "s"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.SearchAsks(ctx, "s", ask.SearchQuery{Terms: []string{"whatsit"}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0].ID != b.ID || res.Rows[0].Title == "" {
		t.Fatalf("search right after the ask = %+v; want the ask, with its title", res.Rows)
	}
}

// TestPendingIndexSurvivesARestart: rows still to be indexed when the process stops (here: a
// row of the index lost, and its ask marked pending, as a crash between the two transactions
// leaves it) are indexed by the next start.
func TestPendingIndexSurvivesARestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "loopback.db")
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := ask.NewService(d).AskQuestion(ctx, ask.QuestionInput{Question: "Keep the doohickey?", Project: "p"}, ask.Origin{Space: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.flushIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.w.ExecContext(ctx, `DELETE FROM ask_search; INSERT INTO search_pending (rowid) SELECT rowid FROM asks`); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openPath(t, path)
	testwait.Eventually(t, "the next start indexes what was pending", func() bool { return pending(t, d) == 0 && indexed(t, d, "s", a.ID, "doohickey") })
}

// TestMigrateToPendingIndex: a database from before migration 023 whose index misses an ask
// (as one written by a build before migration 020 does) gets it indexed.
func TestMigrateToPendingIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "loopback.db")
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := ask.NewService(d).AskQuestion(ctx, ask.QuestionInput{Question: "Old thingummy?", Project: "p"}, ask.Origin{Space: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.flushIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.w.ExecContext(ctx, `DELETE FROM ask_search; `+undoSince(23)+` PRAGMA user_version = 20`); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openPath(t, path)
	res, err := d.SearchAsks(ctx, "s", ask.SearchQuery{Terms: []string{"thingummy"}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0].ID != a.ID {
		t.Fatalf("search after the migration = %+v; want the ask the index missed", res.Rows)
	}
}
