package ask_test

import (
	"context"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
)

// TestHistoryLimit holds History to the contract's 1 ≤ limit ≤ 100. A refused limit never reaches
// the store (the service has none, so any use would panic); an accepted one pages a real SQLite
// store. Paging itself is in the stores' conformance suite (ask/asktest).
func TestHistoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int
	}{
		{"limit_0_refused", 0},
		{"limit_negative_refused", -1},
		{"limit_101_refused", ask.MaxPageLimit + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &ask.Service{Now: newClock(), NewID: ask.NewID}
			page, err := s.History(context.Background(), "s1", nil, tc.limit)
			wantError(t, err, ask.ERequestInvalid, "limit")
			if page != nil {
				t.Fatalf("a refused limit gave a page %+v", page)
			}
		})
	}

	ctx := context.Background()
	db := sqlitetest.Open(t)
	now := func() time.Time { return ask.Truncate(time.Now()) }
	s := &ask.Service{Store: db, Now: now, NewID: ask.NewID}
	for range 3 {
		a, err := s.AskQuestion(ctx, questionInput(), ask.Origin{Space: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Reply(ctx, "s1", a.ID, answered("ok"), alice); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name     string
		limit    int
		items    int
		nextPage bool
	}{
		{"limit_1_ok", 1, 1, true},
		{"limit_2_ok", 2, 2, true},
		{"limit_3_ok_last_page", 3, 3, false},
		{"limit_100_ok", ask.MaxPageLimit, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page, err := s.History(ctx, "s1", nil, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Items) != tc.items || (page.NextBefore != nil) != tc.nextPage {
				t.Fatalf("%d items, nextBefore %v; want %d items, next page %v", len(page.Items), page.NextBefore, tc.items, tc.nextPage)
			}
		})
	}
}

func TestNewIDIsRandomBase32(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := ask.NewID()
		if len(id) != 26 || seen[id] {
			t.Fatalf("id %q (len %d, seen %v)", id, len(id), seen[id])
		}
		for _, c := range id {
			if !('a' <= c && c <= 'z' || '2' <= c && c <= '7') {
				t.Fatalf("id %q has %q", id, c)
			}
		}
		seen[id] = true
	}
}
