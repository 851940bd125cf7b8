package ask_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// closedStore is the least of a Store that History needs: closed asks of one space, held in memory.
// The adapters' own behaviour is tested by the conformance suite; here only the service's paging and
// limits are.
type closedStore struct {
	ask.Store // every other method panics: History must not call it
	asks      []*ask.Ask
	limits    []int
}

func (s *closedStore) ClosedAsks(_ context.Context, space string, before time.Time, limit int) ([]*ask.Ask, error) {
	s.limits = append(s.limits, limit)
	var out []*ask.Ask
	for _, a := range s.asks {
		if a.Space == space && a.ClosedAt.Before(before) {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ClosedAt.After(*out[j].ClosedAt) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func TestHistoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int
		ok    bool
	}{
		{"limit_0_refused", 0, false},
		{"limit_negative_refused", -1, false},
		{"limit_1_ok", 1, true},
		{"limit_100_ok", ask.MaxPageLimit, true},
		{"limit_101_refused", ask.MaxPageLimit + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &closedStore{}
			s := &ask.Service{Store: store, Now: newClock(), NewID: ask.NewID}
			page, err := s.History(context.Background(), "s1", nil, tc.limit)
			if !tc.ok {
				wantError(t, err, ask.ERequestInvalid, "limit")
				if page != nil || len(store.limits) != 0 {
					t.Fatalf("a refused limit still read the store: %v %v", page, store.limits)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if page.Items == nil || page.NextBefore != nil {
				t.Fatalf("empty history page %+v", page)
			}
		})
	}
}

func TestHistoryPages(t *testing.T) {
	store := &closedStore{}
	for i := range 5 {
		at := t0.Add(time.Duration(i) * time.Minute)
		store.asks = append(store.asks, &ask.Ask{ID: string(rune('a' + i)), Space: "s1", Status: ask.Closed, ClosedAt: &at})
	}
	other := t0.Add(time.Hour)
	store.asks = append(store.asks, &ask.Ask{ID: "x", Space: "s2", Status: ask.Closed, ClosedAt: &other})
	s := &ask.Service{Store: store, Now: newClock(), NewID: ask.NewID}

	var got []string
	var before *time.Time
	for range 10 {
		page, err := s.History(context.Background(), "s1", before, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range page.Items {
			got = append(got, a.ID)
		}
		if page.NextBefore == nil {
			break
		}
		if !page.NextBefore.Equal(*page.Items[len(page.Items)-1].ClosedAt) {
			t.Fatalf("nextBefore %v is not the last item's close time", page.NextBefore)
		}
		before = page.NextBefore
	}
	if want := "edcba"; strings.Join(got, "") != want {
		t.Fatalf("pages gave %v, want %s", got, want)
	}
	for _, l := range store.limits {
		if l != 3 {
			t.Fatalf("asked the store for %d, want limit+1 = 3 to know whether a page follows", l)
		}
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
