package ask_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
)

// heard records the changes a Publisher hears, in order.
type heard struct {
	mu      sync.Mutex
	changes []ask.Change
}

func (h *heard) Publish(c ask.Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.changes = append(h.changes, c)
}

func (h *heard) statuses() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, c := range h.changes {
		out = append(out, c.Ask.ID+" "+string(c.Ask.Status))
	}
	return out
}

// TestHoldChanges: under HoldChanges a change is committed at once (a read sees it) and heard
// only at release, in the order committed; once released, a change is heard at once. Without a
// hold, nothing changes: heard at once.
func TestHoldChanges(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	h := &heard{}
	now := func() time.Time { return ask.Truncate(time.Now()) }
	s := &ask.Service{Store: db, Now: now, NewID: ask.NewID, Changes: h}
	a, err := s.AskQuestion(ctx, questionInput(), ask.Origin{Space: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.AskQuestion(ctx, questionInput(), ask.Origin{Space: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.statuses(); len(got) != 2 {
		t.Fatalf("without a hold, two new asks heard at once: %v", got)
	}

	held, release := ask.HoldChanges(ctx)
	if _, err := s.Reply(held, "s1", a.ID, answered("first"), alice); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reply(held, "s1", b.ID, answered("second"), alice); err != nil {
		t.Fatal(err)
	}
	if stored, err := s.Find(ctx, "s1", a.ID); err != nil || stored.Status != ask.Closed {
		t.Fatalf("a held change is committed at once: %v %v", stored, err)
	}
	if got := h.statuses(); len(got) != 2 {
		t.Fatalf("held changes heard before release: %v", got)
	}
	release()
	want := []string{a.ID + " awaiting_human", b.ID + " awaiting_human", a.ID + " closed", b.ID + " closed"}
	if got := h.statuses(); !slices.Equal(got, want) {
		t.Fatalf("after release heard %v, want %v", got, want)
	}
	release() // again: nothing more
	c, err := s.AskQuestion(held, questionInput(), ask.Origin{Space: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.statuses(); len(got) != 5 || got[4] != c.ID+" awaiting_human" {
		t.Fatalf("a change after release is heard at once: %v", got)
	}
}
