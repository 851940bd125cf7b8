package events_test

import (
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
)

// A watcher keeps one pending change, the newest by version, whatever order commits were
// published in; a space's subscriber gets every change in order; nobody hears another ask's or
// another space's changes.
func TestHubWatchKeepsTheNewest(t *testing.T) {
	h := events.NewHub()
	change := func(space, id string, v int) ask.Change {
		return ask.Change{Ask: &ask.Ask{Space: space, ID: id, Version: v}}
	}
	for _, order := range [][]int{{2, 3}, {3, 2}, {1, 3, 2}} {
		w := h.Watch("s1", "a")
		space := h.Subscribe("s1", 10)
		for _, v := range order {
			h.Publish(change("s1", "a", v))
			h.Publish(change("s1", "b", 99)) // another ask
			h.Publish(change("s2", "a", 99)) // another space
		}
		got := <-w.C()
		if got.Ask.ID != "a" || got.Ask.Version != 3 {
			t.Errorf("published %v: the watcher holds %s v%d, want a v3", order, got.Ask.ID, got.Ask.Version)
		}
		select {
		case extra := <-w.C():
			t.Errorf("published %v: a second pending change, v%d", order, extra.Ask.Version)
		default:
		}
		var seen []int
		for range 2 * len(order) {
			c := <-space.C()
			seen = append(seen, c.Ask.Version)
		}
		want := []int{}
		for _, v := range order {
			want = append(want, v, 99)
		}
		if len(seen) != len(want) {
			t.Fatalf("space subscriber saw %v", seen)
		}
		for i := range want {
			if seen[i] != want[i] {
				t.Errorf("published %v: the space's subscriber saw %v, want %v", order, seen, want)
				break
			}
		}
		w.Close()
		space.Close()
	}
	if n := h.Len(); n != 0 {
		t.Errorf("%d subscriptions left after closing all", n)
	}
}
