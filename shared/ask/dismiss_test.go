package ask_test

import (
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Revision 6: a person may dismiss any open ask, whoever's move it is; the thread records who
// and where, the ask closes, and nobody follows it any more.
func TestDismissAnyOpenAsk(t *testing.T) {
	followUp := ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "Which one?"}
	for _, tc := range []struct {
		name    string
		ask     func(testing.TB) *ask.Ask
		before  *ask.Reply // the person's move that hands it to the agent first
		outcome ask.Outcome
		onAgent bool
	}{
		{"question, person's move", openQuestion, nil, ask.OutcomeDismissed, false},
		{"question, agent's move", openQuestion, &followUp, ask.OutcomeDismissed, true},
		{"review, agent's move", openReview, &followUp, ask.OutcomeDismissed, true},
		{"briefing, agent's move", openBriefing, &ask.Reply{Outcome: ask.OutcomeResponded, Points: []ask.PointReply{{Point: "1", Text: "why?"}}}, ask.OutcomeDismissed, true},
		{"approval", func(t testing.TB) *ask.Ask {
			a, err := ask.NewApproval("a1", ask.ApprovalInput{Tool: "Bash", Input: []byte(`{"command":"ls"}`), Cwd: "/w/p"}, ask.Origin{Space: "s"}, nil, newClock())
			if err != nil {
				t.Fatal(err)
			}
			return a
		}, nil, ask.OutcomeDenied, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.ask(t)
			now := newClock()
			if tc.before != nil {
				if err := ask.ApplyReply(a, *tc.before, alice, now); err != nil {
					t.Fatal(err)
				}
				if a.Status != ask.AwaitingAgent {
					t.Fatalf("status %s, want the agent's move", a.Status)
				}
			}
			a.Waiting = true
			if err := ask.ApplyDismissVia(a, alice, ask.SurfaceInbox, now); err != nil {
				t.Fatal(err)
			}
			if a.Status != ask.Closed || a.ClosedAt == nil || a.Waiting {
				t.Fatalf("status %s closedAt %v waiting %v", a.Status, a.ClosedAt, a.Waiting)
			}
			if err := ask.CheckInvariants(a); err != nil {
				t.Fatal(err)
			}
			last := a.Thread[len(a.Thread)-1]
			if last.Author != ask.AuthorHuman || last.By != alice || last.Via != ask.SurfaceInbox || last.Reply.Outcome != tc.outcome {
				t.Fatalf("last turn %+v", last)
			}
			r, ok := ask.PersonsMove(a)
			if !ok || r.Outcome != tc.outcome || r.OnAgentsMove != tc.onAgent || r.By != alice {
				t.Fatalf("PersonsMove = %+v, %v", r, ok)
			}
			if tc.outcome == ask.OutcomeDenied && r.Message != ask.DismissedApprovalMessage {
				t.Fatalf("approval dismissed with message %q", r.Message)
			}
			// Closed: a second dismissal is refused, and the ask is unchanged.
			turns := len(a.Thread)
			if err := ask.ApplyDismissVia(a, bob, ask.SurfaceInbox, now); ask.ErrorCode(err) != ask.EClosed || len(a.Thread) != turns {
				t.Fatalf("second dismissal: %v, %d turns", err, len(a.Thread))
			}
		})
	}
}

// An agent that answers an ask the person dismissed during its move is told, in words, who
// closed it, where, and that nothing more is wanted.
func TestAnswerAfterDismissalSaysWhy(t *testing.T) {
	a := openQuestion(t)
	now := newClock()
	if err := ask.ApplyReply(a, ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "Which one?"}, alice, now); err != nil {
		t.Fatal(err)
	}
	if err := ask.ApplyDismissVia(a, alice, ask.SurfaceInbox, now); err != nil {
		t.Fatal(err)
	}
	err := ask.AnswerFollowUp(a, ask.FollowUpInput{AskID: a.ID, Answer: "The first."}, now)
	if ask.ErrorCode(err) != ask.EClosed {
		t.Fatalf("answer after dismissal: %v", err)
	}
	for _, want := range []string{"Alice dismissed it in the inbox", "while it was your move", "do not answer it"} {
		if !strings.Contains(ask.ErrorMessage(err), want) {
			t.Errorf("message %q lacks %q", ask.ErrorMessage(err), want)
		}
	}
	// A dismissal in the person's own move is an ordinary close: the plain words.
	b := openQuestion(t)
	if err := ask.ApplyDismissVia(b, alice, ask.SurfaceInbox, now); err != nil {
		t.Fatal(err)
	}
	if r, _ := ask.PersonsMove(b); r.OnAgentsMove {
		t.Error("a dismissal in the person's move is marked as the agent's")
	}
	err = ask.AnswerFollowUp(b, ask.FollowUpInput{AskID: b.ID, Answer: "x"}, now)
	if ask.ErrorMessage(err) != "ask q1 is closed" {
		t.Errorf("message %q", ask.ErrorMessage(err))
	}
}
