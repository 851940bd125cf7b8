package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// searchWords is the vocabulary the search benchmark's asks are written in.
var searchWords = strings.Fields(`deploy staging production migration schema index query cache
latency timeout retry socket token session login signup billing invoice refund webhook queue
worker cron backup restore rollback release version changelog feature flag experiment metric
alert dashboard logging tracing profile memory leak goroutine channel mutex deadlock race test
fixture mock benchmark lint format refactor rename module package import export api route
handler middleware router template component style layout theme dark mode accessibility label`)

// seedSearch stores open and closed asks in a space: questions and reviews of eight projects,
// each with a title and a paragraph drawn from searchWords, and one ask that alone says
// "zanzibar".
func seedSearch(tb testing.TB, d *DB, space string, open, closed int) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	say := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = searchWords[rng.IntN(len(searchWords))]
		}
		return strings.Join(w, " ")
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	asks := make([]*ask.Ask, 0, open+closed)
	for i := range open + closed {
		created := start.Add(time.Duration(i) * time.Minute)
		clock := func() time.Time { return created }
		o := ask.Origin{Space: space, Client: "bench"}
		project := fmt.Sprintf("project-%d", i%8)
		text := say(60)
		if i == (open+closed)/3 {
			text += " zanzibar"
		}
		var a *ask.Ask
		var err error
		if i%3 == 0 {
			a, err = ask.NewReview(ask.NewID(), ask.ReviewInput{Title: "Review: " + say(6), Project: project,
				Content: []ask.Block{{Type: ask.BlockMarkdown, Text: text}, {Type: ask.BlockCode, Code: say(40), Language: "go"}}}, o, clock)
		} else {
			a, err = ask.NewQuestion(ask.NewID(), ask.QuestionInput{Question: "Should we " + say(8) + "?", Context: text, Project: project,
				Options: []ask.Choice{{Label: "Yes"}, {Label: "No"}}}, o, clock)
		}
		if err != nil {
			tb.Fatal(err)
		}
		if i >= open {
			r := ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"Yes"}, Text: say(10)}
			if a.Kind == ask.KindReview {
				r = ask.Reply{Outcome: ask.OutcomeApproved, Note: say(10)}
			}
			if err := ask.ApplyReply(a, r, nil, func() time.Time { return created.Add(time.Minute) }); err != nil {
				tb.Fatal(err)
			}
		}
		asks = append(asks, a)
	}
	if err := d.createAsks(context.Background(), asks...); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkSearch is GET /api/v1/search's work (the service and the store: FTS5, filters,
// highlights) over a space of 500 open and 2,000 closed asks, a page of 20.
func BenchmarkSearch(b *testing.B) {
	d := openTest(b)
	seedSearch(b, d, "bench", 500, 2000)
	svc := ask.NewService(d)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		in   ask.SearchInput
		min  int
	}{
		{"common_word", ask.SearchInput{Q: "deploy"}, 20},
		{"rare_word", ask.SearchInput{Q: "zanzibar"}, 1},
		{"two_prefixes", ask.SearchInput{Q: "dep stag"}, 20},
		{"word_in_project_closed", ask.SearchInput{Q: "cache", Project: "project-3", State: ask.StateClosed}, 20},
		{"no_match", ask.SearchInput{Q: "qqqq"}, 0},
		{"history_project_closed", ask.SearchInput{Project: "project-3", State: ask.StateClosed, Limit: 100}, 100},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				page, err := svc.Search(ctx, "bench", bc.in)
				if err != nil || len(page.Items) < bc.min {
					b.Fatalf("%d items, %v", len(page.Items), err)
				}
			}
		})
	}
}

// TestSearchPlans: the filtered history walks an index in order, with no sort of the space; the
// open asks are read from their own index, whatever the length of the space's history.
func TestSearchPlans(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	for _, q := range []struct{ query, index string }{
		{`SELECT rowid FROM asks a WHERE a.space = 's' AND a.status = 'closed' ORDER BY a.created_at DESC, a.id DESC LIMIT 21`, "asks_closed_created"},
		{`SELECT rowid FROM asks a WHERE a.space = 's' AND a.status <> 'closed' AND a.status = 'awaiting_human' ORDER BY a.created_at DESC, a.id DESC LIMIT 21`, "asks_open"},
		{`SELECT rowid FROM asks a WHERE a.space = 's' AND a.project = 'p' ORDER BY a.created_at DESC, a.id DESC LIMIT 21`, "asks_project"},
		// OpenUsage, on every new ask: the open asks alone, however long the space's history.
		{`SELECT credential_id, body FROM asks INDEXED BY asks_open WHERE space = 's' AND status <> 'closed'`, "asks_open"},
		// OpenAsks and OpenAsksWire (the snapshot).
		{`SELECT version, credential_id, turns, body FROM asks WHERE space = 's' AND status <> 'closed' ORDER BY created_at DESC, id DESC`, "asks_open"},
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
