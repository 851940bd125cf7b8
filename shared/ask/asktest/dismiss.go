package asktest

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testDismissAgentsMove (revision 6): a person dismisses an ask during the agent's move; the
// store keeps the dismissal (who, where) and the ask leaves the open asks for the closed ones. A
// dismissal racing the agent's answer: exactly one wins, and the loser is refused in words.
func testDismissAgentsMove(t *testing.T, s ask.Store) {
	ctx := context.Background()
	space := newSpace()
	svc := ask.NewService(s)
	ann := &ask.Actor{ID: "person:ann", Name: "Ann"}
	o := agentOrigin(space, "cred-agent", ann)
	followUp := ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "Which one?"}
	agentsMove := func(text string) *ask.Ask {
		t.Helper()
		q, err := svc.AskQuestion(ctx, question(text), o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Reply(ctx, space, q.ID, followUp, ann); err != nil {
			t.Fatal(err)
		}
		return q
	}

	q := agentsMove("Dismissed in the agent's move?")
	if _, err := svc.DismissVia(ctx, space, q.ID, ann, ask.SurfaceInbox); err != nil {
		t.Fatal(err)
	}
	got := find(t, s, space, q.ID)
	if got.Status != ask.Closed || got.ClosedAt == nil || got.Version != 3 {
		t.Fatalf("dismissed ask is %s, closedAt %v, version %d; want closed at version 3", got.Status, got.ClosedAt, got.Version)
	}
	last := got.Thread[len(got.Thread)-1]
	if last.Reply == nil || last.Reply.Outcome != ask.OutcomeDismissed || last.By == nil || last.By.ID != ann.ID || last.Via != ask.SurfaceInbox {
		t.Fatalf("stored dismissal %+v", last)
	}
	if r, ok := ask.PersonsMove(got); !ok || !r.OnAgentsMove {
		t.Fatalf("PersonsMove of the stored ask = %+v, %v; want a dismissal on the agent's move", r, ok)
	}
	open, err := s.OpenAsks(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(open, func(a *ask.Ask) bool { return a.ID == q.ID }) {
		t.Fatal("the dismissed ask is still among the open asks")
	}
	_, err = svc.DismissVia(ctx, space, q.ID, ann, ask.SurfaceInbox)
	wantCode(t, err, ask.EClosed, "dismissing a closed ask")
	_, err = svc.DismissVia(ctx, newSpace(), q.ID, ann, ask.SurfaceInbox)
	wantCode(t, err, ask.ENotFound, "dismissing another space's ask")

	for round := range 3 {
		q := agentsMove(fmt.Sprintf("Race %d", round))
		var dismissErr, answerErr error
		var winners atomic.Int32
		race(2, func(i int) {
			if i == 0 {
				_, dismissErr = svc.DismissVia(ctx, space, q.ID, ann, ask.SurfaceInbox)
				if dismissErr == nil {
					winners.Add(1)
				}
				return
			}
			_, answerErr = svc.AnswerFollowUp(ctx, ask.FollowUpInput{AskID: q.ID, Answer: "The first."}, o)
			if answerErr == nil {
				winners.Add(1)
			}
		})
		got := find(t, s, space, q.ID)
		if err := ask.CheckInvariants(got); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		switch {
		case dismissErr == nil && answerErr == nil:
			// Both may win one after the other: the answer first hands the move back, and the
			// dismissal then closes it in the person's move.
			if got.Status != ask.Closed || len(got.Thread) != 3 {
				t.Fatalf("round %d: both won but the ask is %s with %d turns", round, got.Status, len(got.Thread))
			}
		case dismissErr == nil:
			wantCode(t, answerErr, ask.EClosed, fmt.Sprintf("round %d: the answer after the dismissal", round))
			if got.Status != ask.Closed {
				t.Fatalf("round %d: ask is %s", round, got.Status)
			}
		default:
			t.Fatalf("round %d: the dismissal failed: %v (answer: %v)", round, dismissErr, answerErr)
		}
	}
}
