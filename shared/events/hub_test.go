package events_test

import (
	"slices"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
)

// A watcher of an ask is called with each of its changes, in the order they were published; a
// space's subscriber gets every change in order; nobody hears another ask's or another space's
// changes.
func TestHubWatchFunc(t *testing.T) {
	h := events.NewHub()
	change := func(space, id string, v int) ask.Change {
		return ask.Change{Ask: &ask.Ask{Space: space, ID: id, Version: v}}
	}
	for _, order := range [][]int{{2, 3}, {3, 2}, {1, 3, 2}} {
		var watched []int
		w := h.WatchFunc("s1", "a", func(c ask.Change) {
			if c.Ask.ID != "a" || c.Ask.Space != "s1" {
				t.Errorf("the watcher of s1/a heard %s/%s", c.Ask.Space, c.Ask.ID)
			}
			watched = append(watched, c.Ask.Version)
		})
		space := h.Subscribe("s1", 10)
		for _, v := range order {
			h.Publish(change("s1", "a", v))
			h.Publish(change("s1", "b", 99)) // another ask
			h.Publish(change("s2", "a", 99)) // another space
		}
		if !slices.Equal(watched, order) {
			t.Errorf("published %v: the watcher heard %v", order, watched)
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
		if !slices.Equal(seen, want) {
			t.Errorf("published %v: the space's subscriber saw %v, want %v", order, seen, want)
		}
		w.Close()
		space.Close()
	}
	if n := h.Len(); n != 0 {
		t.Errorf("%d subscriptions left after closing all", n)
	}
}

// The watchers of an ask hear its change before the space's subscribers: a waiting agent is not
// kept waiting while the change is framed for every socket of the space.
func TestHubWatchersFirst(t *testing.T) {
	h := events.NewHub()
	var heard []string
	for i := range 3 {
		s := h.SubscribeFunc("s1", func(ask.Change) bool { heard = append(heard, "socket"); return true })
		defer s.Close()
		if i == 1 {
			w := h.WatchFunc("s1", "a", func(ask.Change) { heard = append(heard, "watcher") })
			defer w.Close()
		}
	}
	h.Publish(ask.Change{Ask: &ask.Ask{Space: "s1", ID: "a", Version: 1}})
	if want := []string{"watcher", "socket", "socket", "socket"}; !slices.Equal(heard, want) {
		t.Errorf("heard in the order %v, want %v", heard, want)
	}
}

// A person's marks reach that person's subscriptions only (contract revision 7): not another
// person's in the same space, not the same person's id in another space, and not the space's
// ask subscribers.
func TestHubMarksGoToTheirPersonOnly(t *testing.T) {
	h := events.NewHub()
	var ada, ada2, grace, elsewhere []string
	subs := []*events.Subscription{
		h.SubscribeMarks("s1", "ada", func(m ask.Mark) bool { ada = append(ada, m.AskID); return true }),
		h.SubscribeMarks("s1", "ada", func(m ask.Mark) bool { ada2 = append(ada2, m.AskID); return true }),
		h.SubscribeMarks("s1", "grace", func(m ask.Mark) bool { grace = append(grace, m.AskID); return true }),
		h.SubscribeMarks("s2", "ada", func(m ask.Mark) bool { elsewhere = append(elsewhere, m.AskID); return true }),
	}
	asks := h.Subscribe("s1", 10)
	h.PublishMark("s1", "ada", ask.Mark{AskID: "a"})
	h.PublishMark("s1", "grace", ask.Mark{AskID: "b"})
	h.PublishMark("s1", "ada", ask.Mark{AskID: "c"})
	if !slices.Equal(ada, []string{"a", "c"}) || !slices.Equal(ada2, ada) || !slices.Equal(grace, []string{"b"}) || len(elsewhere) != 0 {
		t.Errorf("ada %v, ada's other device %v, grace %v, ada in s2 %v", ada, ada2, grace, elsewhere)
	}
	if len(asks.C()) != 0 {
		t.Errorf("the space's ask subscriber heard %d marks", len(asks.C()))
	}
	// One that cannot keep up is dropped.
	full := h.SubscribeMarks("s1", "ada", func(ask.Mark) bool { return false })
	h.PublishMark("s1", "ada", ask.Mark{AskID: "d"})
	select {
	case <-full.Done():
	default:
		t.Error("a mark subscriber that refused a mark is still subscribed")
	}
	for _, s := range append(subs, asks) {
		s.Close()
	}
	if n := h.Len(); n != 0 {
		t.Errorf("%d subscriptions left after closing all", n)
	}
}
