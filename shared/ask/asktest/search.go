package asktest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testSearch holds both stores to one search (revision 6): words of an ask's title, prompt and
// thread (prefix, case folded, every word required), the filters, newest first, one space only,
// the thread's words found once a change adds them, and the highlights cut from the text.
func testSearch(t *testing.T, s ask.Store) {
	ctx := context.Background()
	space, other, p := newSpace(), newSpace(), newPrefix()
	clk := newClock(base)
	svc := &ask.Service{Store: s, Now: clk.Now, NewID: ids(t, p+"q1", p+"r1", p+"q2", p+"x1")}

	q1, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "Deploy events_v2 to staging?", Options: []ask.Choice{{Label: "Yes"}, {Label: "No"}}, Project: "alpha"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	clk.Set(at(time.Minute))
	r1, err := svc.RequestReview(ctx, ask.ReviewInput{Title: "Fix PR #1043 login", Project: "beta",
		Content: []ask.Block{{Type: ask.BlockMarkdown, Text: "The **login** flow breaks on Safari <script>x</script>"}}}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	clk.Set(at(2 * time.Minute))
	q2, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "Which café for the offsite?", Options: []ask.Choice{{Label: "Blue"}, {Label: "Red"}}, Project: "alpha"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	clk.Set(at(3 * time.Minute))
	if _, err := svc.AskQuestion(ctx, question("Deploy the other space's thing?"), ask.Origin{Space: other}); err != nil {
		t.Fatal(err)
	}
	clk.Set(at(4 * time.Minute))
	if _, err := svc.Reply(ctx, space, q1.ID, ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"Yes"}, Text: "ship it on Friday"}, nil); err != nil {
		t.Fatal(err)
	}

	search := func(in ask.SearchInput) *ask.SearchPage {
		t.Helper()
		page, err := svc.Search(ctx, space, in)
		if err != nil {
			t.Fatalf("Search %+v: %v", in, err)
		}
		return page
	}
	hits := func(page *ask.SearchPage) []string {
		out := []string{}
		for _, h := range page.Items {
			out = append(out, h.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   ask.SearchInput
		want []string
	}{
		{"word", ask.SearchInput{Q: "deploy"}, []string{q1.ID}},
		{"case_folded", ask.SearchInput{Q: "DEPLOY"}, []string{q1.ID}},
		{"prefixes_all_required", ask.SearchInput{Q: "dep stag"}, []string{q1.ID}},
		{"one_word_missing", ask.SearchInput{Q: "deploy safari"}, []string{}},
		{"punctuation_splits", ask.SearchInput{Q: "events_v2"}, []string{q1.ID}},
		{"thread_words", ask.SearchInput{Q: "friday"}, []string{q1.ID}},
		{"title_number", ask.SearchInput{Q: "#1043"}, []string{r1.ID}},
		{"markdown_text", ask.SearchInput{Q: "safari"}, []string{r1.ID}},
		{"markup_is_words", ask.SearchInput{Q: "script"}, []string{r1.ID}},
		{"accents", ask.SearchInput{Q: "café"}, []string{q2.ID}},
		{"choices", ask.SearchInput{Q: "blue"}, []string{q2.ID}},
		{"nothing", ask.SearchInput{Q: "zebra"}, []string{}},
		{"syntax_is_words", ask.SearchInput{Q: `"deploy" OR NEAR(x) *`}, []string{}},
		{"everything", ask.SearchInput{}, []string{q2.ID, r1.ID, q1.ID}},
		{"closed", ask.SearchInput{State: ask.StateClosed}, []string{q1.ID}},
		{"yours", ask.SearchInput{State: ask.StateYours}, []string{q2.ID, r1.ID}},
		{"open", ask.SearchInput{State: ask.StateOpen}, []string{q2.ID, r1.ID}},
		{"agents", ask.SearchInput{State: ask.StateAgents}, []string{}},
		{"kind", ask.SearchInput{Kind: "review"}, []string{r1.ID}},
		{"project", ask.SearchInput{Project: "alpha"}, []string{q2.ID, q1.ID}},
		{"project_and_words", ask.SearchInput{Project: "alpha", Q: "which"}, []string{q2.ID}},
		{"other_space_unseen", ask.SearchInput{Q: "other"}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hits(search(tc.in)); !slices.Equal(got, tc.want) {
				t.Fatalf("Search %+v = %v, want %v", tc.in, got, tc.want)
			}
		})
	}

	t.Run("summary_and_highlight", func(t *testing.T) {
		page := search(ask.SearchInput{Q: "1043"})
		if len(page.Items) != 1 {
			t.Fatalf("hits: %v", hits(page))
		}
		h := page.Items[0]
		if h.Kind != ask.KindReview || h.Status != ask.AwaitingHuman || h.Project != "beta" || h.Title != "Fix PR #1043 login" || h.ClosedAt != nil || !h.CreatedAt.Equal(at(time.Minute)) {
			t.Fatalf("summary: %+v", h)
		}
		if !slices.Contains(h.Highlight, ask.Fragment{Text: "1043", Match: true}) {
			t.Fatalf("highlight %+v marks no 1043", h.Highlight)
		}
		closed := search(ask.SearchInput{Q: "fri"}).Items[0]
		if closed.Status != ask.Closed || closed.ClosedAt == nil {
			t.Fatalf("closed summary: %+v", closed)
		}
		if !slices.Contains(closed.Highlight, ask.Fragment{Text: "Friday", Match: true}) {
			t.Fatalf("highlight %+v marks no Friday", closed.Highlight)
		}
		if len(search(ask.SearchInput{}).Items[0].Highlight) != 0 {
			t.Fatal("a search without words has highlights")
		}
	})
}

// testSearchPages pages through results with a cursor: every match once, in order.
func testSearchPages(t *testing.T, s ask.Store) {
	ctx := context.Background()
	space, p := newSpace(), newPrefix()
	clk := newClock(base)
	svc := &ask.Service{Store: s, Now: clk.Now, NewID: ids(t, p+"a", p+"b", p+"c", p+"d", p+"e", p+"f", p+"g")}
	var want []string
	for i := range 7 {
		if i == 3 || i == 4 {
			clk.Set(at(time.Minute)) // two asks share a creation time: ties go by id, descending
		} else {
			clk.Set(at(time.Duration(i) * time.Hour))
		}
		text := "Page through these results?"
		if i == 5 {
			text = "Something else?"
		}
		a, err := svc.AskQuestion(ctx, question(text), ask.Origin{Space: space})
		if err != nil {
			t.Fatal(err)
		}
		if i != 5 {
			want = append(want, a.ID)
		}
	}
	// Newest first: by creation time, then id descending.
	slices.SortFunc(want, func(x, y string) int {
		ax, ay := find(t, s, space, x), find(t, s, space, y)
		if c := ay.CreatedAt.Compare(ax.CreatedAt); c != 0 {
			return c
		}
		if x > y {
			return -1
		}
		return 1
	})
	var got []string
	cursor := ""
	for range 20 {
		page, err := svc.Search(ctx, space, ask.SearchInput{Q: "page", Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) > 2 {
			t.Fatalf("a page of %d, limit 2", len(page.Items))
		}
		for _, h := range page.Items {
			got = append(got, h.ID)
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged %v, want %v", got, want)
	}
}
