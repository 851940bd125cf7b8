package asktest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testMarkStore (revision 6): each person's marks on asks (read, snoozed) round-trip, are theirs
// alone (another person, one whose id begins theirs, another space), and SetMark keeps what a
// change leaves out; unread and snoozed are worked out as the person's inbox reads them.
func testMarkStore(t *testing.T, open func(t *testing.T) Stores) {
	ctx := context.Background()
	s := open(t)
	space := newSpace()
	clk := newClock(base)
	svc := &ask.Service{Store: s, Now: clk.Now, NewID: ask.NewID}
	ann, annex := "person:ann", "person:ann#x" // annex's id begins with ann's
	o := agentOrigin(space, "cred-agent", &ask.Actor{ID: ann})
	q, err := svc.AskQuestion(ctx, question("Marked?"), o)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := s.Mark(ctx, space, ann, q.ID); !errors.Is(err, ask.ErrNotFound) {
		t.Fatalf("Mark with none: %v, want ErrNotFound", err)
	}
	var none *ask.Mark
	if !none.Unread(q, clk.Now()) {
		t.Fatal("an ask never opened is not unread")
	}

	// Opened: read. Then snoozed for an hour, which keeps it read.
	clk.Set(at(time.Minute))
	yes := true
	m, err := svc.SetMark(ctx, space, ann, q.ID, ask.MarkInput{Read: &yes})
	if err != nil {
		t.Fatal(err)
	}
	if m.ReadAt == nil || !m.ReadAt.Equal(at(time.Minute)) || m.Unread(q, clk.Now()) {
		t.Fatalf("after opening: %+v", m)
	}
	until := at(time.Hour + time.Minute)
	m, err = svc.SetMark(ctx, space, ann, q.ID, ask.MarkInput{Snooze: &ask.SnoozeInput{Until: &until}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Mark(ctx, space, ann, q.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "stored mark", m, got)
	if got.ReadAt == nil || got.Snooze == nil || !got.Snooze.Until.Equal(until) || !got.Snooze.At.Equal(at(time.Minute)) {
		t.Fatalf("stored mark %+v", got)
	}
	if !got.Snoozed(q, at(30*time.Minute)) || got.Unread(q, at(30*time.Minute)) {
		t.Fatal("within its hour the ask is not snoozed and read")
	}
	// Due: back, and unread (nobody opened it since the snooze ran out), with no timer run.
	if got.Snoozed(q, until) || !got.Unread(q, until) {
		t.Fatal("at its time the snooze did not wake the ask unread")
	}

	// Theirs alone: another person, one whose id begins ann's, another space.
	for _, c := range []struct{ space, person string }{{space, "person:bob"}, {space, annex}, {newSpace(), ann}} {
		if _, err := s.Mark(ctx, c.space, c.person, q.ID); !errors.Is(err, ask.ErrNotFound) {
			t.Fatalf("%s in %s reads ann's mark: %v", c.person, c.space, err)
		}
		if ms, err := s.Marks(ctx, c.space, c.person); err != nil || len(ms) != 0 {
			t.Fatalf("%s in %s lists %v, %v", c.person, c.space, ms, err)
		}
	}
	if _, err := svc.SetMark(ctx, space, annex, q.ID, ask.MarkInput{Read: &yes}); err != nil {
		t.Fatal(err)
	}
	ms, err := s.Marks(ctx, space, ann)
	if err != nil || len(ms) != 1 || ms[0].AskID != q.ID {
		t.Fatalf("ann's marks: %+v, %v", ms, err)
	}

	// Until the agent moves: snoozed however long, back (unread) at the agent's next turn.
	clk.Set(at(2 * time.Hour))
	if _, err := svc.Reply(ctx, space, q.ID, ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "Which?"}, &ask.Actor{ID: ann}); err != nil {
		t.Fatal(err)
	}
	m, err = svc.SetMark(ctx, space, ann, q.ID, ask.MarkInput{Read: &yes, Snooze: &ask.SnoozeInput{UntilAgentMoves: true}})
	if err != nil {
		t.Fatal(err)
	}
	q = find(t, s, space, q.ID)
	if !m.Snoozed(q, at(100*24*time.Hour)) || m.Unread(q, clk.Now()) {
		t.Fatalf("snoozed until the agent moves: %+v", m)
	}
	clk.Set(at(3 * time.Hour))
	if _, err := svc.AnswerFollowUp(ctx, ask.FollowUpInput{AskID: q.ID, Answer: "The first."}, o); err != nil {
		t.Fatal(err)
	}
	q = find(t, s, space, q.ID)
	if m.Snoozed(q, clk.Now()) || !m.Unread(q, clk.Now()) {
		t.Fatal("the agent's turn did not wake the ask unread")
	}
	// Marked unread, then snooze cleared: each change keeps the rest.
	no := false
	if m, err = svc.SetMark(ctx, space, ann, q.ID, ask.MarkInput{Read: &no}); err != nil || m.ReadAt != nil || m.Snooze == nil {
		t.Fatalf("marked unread: %+v, %v", m, err)
	}
	if m, err = svc.SetMark(ctx, space, ann, q.ID, ask.MarkInput{ClearSnooze: true}); err != nil || m.Snooze != nil {
		t.Fatalf("snooze cleared: %+v, %v", m, err)
	}
	if ms, err := svc.Marks(ctx, space, ann); err != nil || !slices.ContainsFunc(ms, func(m ask.Mark) bool { return m.AskID == q.ID }) {
		t.Fatalf("Service.Marks on an open ask: %+v, %v", ms, err)
	}

	// Refusals: no such ask; a snooze with both ends, none, or one behind; a closed ask snoozed.
	_, err = svc.SetMark(ctx, space, ann, "nosuchask", ask.MarkInput{Read: &yes})
	wantCode(t, err, ask.ENotFound, "a mark on no ask")
	past := at(time.Hour)
	for what, in := range map[string]*ask.SnoozeInput{
		"both":   {Until: &until, UntilAgentMoves: true},
		"none":   {},
		"behind": {Until: &past},
	} {
		_, err = svc.SetMark(ctx, space, ann, q.ID, ask.MarkInput{Snooze: in})
		wantCode(t, err, ask.EMarkInvalid, "a snooze with "+what)
		if e := ask.ErrorMessage(err); !strings.Contains(e, "snooze") {
			t.Errorf("a snooze with %s: %q", what, e)
		}
	}
	if _, err := svc.DismissVia(ctx, space, q.ID, &ask.Actor{ID: ann}, ask.SurfaceInbox); err != nil {
		t.Fatal(err)
	}
	later := at(10 * time.Hour)
	_, err = svc.SetMark(ctx, space, ann, q.ID, ask.MarkInput{Snooze: &ask.SnoozeInput{Until: &later}})
	wantCode(t, err, ask.EClosed, "snoozing a closed ask")
	if ms, err := svc.Marks(ctx, space, ann); err != nil || len(ms) != 0 {
		t.Fatalf("Service.Marks lists marks of closed asks: %+v, %v", ms, err)
	}
}
