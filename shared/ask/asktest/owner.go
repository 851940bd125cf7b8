package asktest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// agentOrigin is an agent credential's origin: asks it raises are raised by person.
func agentOrigin(space, cred string, person *ask.Actor) ask.Origin {
	return ask.Origin{Space: space, RaisedBy: person, CredentialID: cred, Role: ask.RoleAgent}
}

// testClosedAsksBy: a credential's closed asks come back by credential and close time, however
// many asks of other credentials of the space closed after them (list_open_asks relies on it).
func testClosedAsksBy(t *testing.T, s ask.Store) {
	ctx := context.Background()
	space, other := newSpace(), newSpace()
	clk := newClock(base)
	svc := &ask.Service{Store: s, Now: clk.Now, NewID: ask.NewID}
	person := &ask.Actor{ID: "person:ann", Name: "Ann"}
	mine, theirs := agentOrigin(space, "cred-mine", person), agentOrigin(space, "cred-theirs", person)
	closeAfter := func(o ask.Origin, d time.Duration) *ask.Ask {
		t.Helper()
		clk.Set(base)
		a, err := svc.AskQuestion(ctx, question("?"), o)
		if err != nil {
			t.Fatal(err)
		}
		clk.Set(at(d))
		if _, err = svc.Reply(ctx, o.Space, a.ID, answeredYes, person); err != nil {
			t.Fatal(err)
		}
		return find(t, s, o.Space, a.ID)
	}
	m1 := closeAfter(mine, 10*time.Second)
	m2 := closeAfter(mine, 20*time.Second)
	m3 := closeAfter(mine, 30*time.Second)
	// Many more asks of another credential close after them: the space's latest closed asks are
	// all theirs.
	const others = 60
	for i := range others {
		closeAfter(theirs, time.Minute+time.Duration(i)*time.Second)
	}
	closeAfter(agentOrigin(other, "cred-mine", person), 40*time.Second) // same credential id, another space
	clk.Set(base)
	if _, err := svc.AskQuestion(ctx, question("still open"), mine); err != nil { // open: never listed
		t.Fatal(err)
	}
	latest, err := closedAsks(t, ctx, s, space, at(time.Hour), 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range latest {
		if a.CredentialID == "cred-mine" {
			t.Fatalf("the space's 50 latest closed asks include %s of cred-mine: the test proves nothing", a.ID)
		}
	}

	cases := []struct {
		since time.Time
		limit int
		want  []*ask.Ask
	}{
		{base, 100, []*ask.Ask{m3, m2, m1}},
		{base, 2, []*ask.Ask{m3, m2}},
		{at(20 * time.Second), 100, []*ask.Ask{m3, m2}}, // at or after
		{at(20*time.Second + time.Microsecond), 100, []*ask.Ask{m3}},
		{at(time.Minute), 100, nil},
	}
	for _, c := range cases {
		got, err := s.ClosedAsksBy(ctx, space, "cred-mine", c.since, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("ClosedAsksBy(since %s, limit %d)", ask.FormatTime(c.since), c.limit)
		same(t, what+" ids", askIDs(c.want), askIDs(got))
		for _, a := range got {
			same(t, what+" item "+a.ID, find(t, s, space, a.ID), a)
		}
	}
	got, err := s.ClosedAsksBy(ctx, space, "cred-theirs", base, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != others {
		t.Fatalf("ClosedAsksBy(cred-theirs) gave %d asks, want all %d", len(got), others)
	}
	if got, err = s.ClosedAsksBy(ctx, space, "cred-nobody", base, 10); err != nil || len(got) != 0 {
		t.Fatalf("ClosedAsksBy of a credential with no asks: %v, %v", askIDs(got), err)
	}
}

// testOwnAsks: only the agent that raised an ask acts on it (ask.Origin.Owns), on every path the
// Service offers, and its turns record the credential they came with; a person's credential acts
// on the asks raised in that person's name.
func testOwnAsks(t *testing.T, s ask.Store) {
	ctx := context.Background()
	space := newSpace()
	clk := newClock(base)
	svc := &ask.Service{Store: s, Now: clk.Now, NewID: ask.NewID}
	ann := &ask.Actor{ID: "person:ann", Name: "Ann"}
	bob := &ask.Actor{ID: "person:bob", Name: "Bob"}
	a, b := agentOrigin(space, "cred-a", ann), agentOrigin(space, "cred-b", ann)
	annMCP := ask.Origin{Space: space, RaisedBy: ann, CredentialID: "cred-ann", Role: ask.RolePerson}
	bobMCP := ask.Origin{Space: space, RaisedBy: bob, CredentialID: "cred-bob", Role: ask.RolePerson}

	q, err := svc.AskQuestion(ctx, question("Which?"), a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Reply(ctx, space, q.ID, ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "why?"}, ann); err != nil {
		t.Fatal(err)
	}
	notFound := ask.AskNotFound(q.ID)
	for _, o := range []ask.Origin{b, bobMCP, agentOrigin(newSpace(), "cred-a", ann)} {
		_, err := svc.FindOwn(ctx, o, q.ID)
		wantRefusal(t, err, notFound, "FindOwn by "+o.CredentialID)
		_, err = svc.AnswerFollowUp(ctx, ask.FollowUpInput{AskID: q.ID, Answer: "not mine to give"}, o)
		wantRefusal(t, err, notFound, "AnswerFollowUp by "+o.CredentialID)
	}
	if got := find(t, s, space, q.ID); got.Status != ask.AwaitingAgent || len(got.Thread) != 1 {
		t.Fatalf("after refused answers the ask is %s with %d turns, want awaiting_agent with 1", got.Status, len(got.Thread))
	}
	for _, o := range []ask.Origin{a, annMCP} {
		if _, err := svc.FindOwn(ctx, o, q.ID); err != nil {
			t.Fatalf("FindOwn by %s: %v", o.CredentialID, err)
		}
	}
	if _, err := svc.AnswerFollowUp(ctx, ask.FollowUpInput{AskID: q.ID, Answer: "because"}, a); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Reply(ctx, space, q.ID, ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "and?"}, ann); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AnswerFollowUp(ctx, ask.FollowUpInput{AskID: q.ID, Answer: "and so"}, annMCP); err != nil {
		t.Fatal(err)
	}
	got := find(t, s, space, q.ID)
	creds := []string{}
	for _, e := range got.Thread {
		creds = append(creds, e.CredentialID)
	}
	same(t, "the turns' credentials", []string{"", "cred-a", "", "cred-ann"}, creds)
	open, err := s.OpenAsks(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "OpenAsks item", got, open[0])

	// A briefing: answer_briefing is the ask's agent's too.
	br, err := svc.SendBriefing(ctx, ask.BriefingInput{Title: "Plan", Project: "p", Sections: []ask.BriefingSection{{Points: []ask.BriefingPoint{{Title: "One"}}}}}, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Reply(ctx, space, br.ID, ask.Reply{Outcome: ask.OutcomeResponded, Points: []ask.PointReply{{Point: "1", Text: "why?"}}}, ann); err != nil {
		t.Fatal(err)
	}
	answer := ask.BriefingAnswerInput{AskID: br.ID, Answers: []ask.PointAnswer{{Point: "1", Answer: "because"}}}
	_, err = svc.AnswerBriefing(ctx, answer, b)
	wantRefusal(t, err, ask.AskNotFound(br.ID), "AnswerBriefing by another agent")
	if _, err := svc.AnswerBriefing(ctx, answer, a); err != nil {
		t.Fatal(err)
	}
	if got := find(t, s, space, br.ID); got.Thread[len(got.Thread)-1].CredentialID != "cred-a" {
		t.Fatalf("the briefing answer's credential is %q, want cred-a", got.Thread[len(got.Thread)-1].CredentialID)
	}

	// A review revises only a review of its own agent.
	r, err := svc.RequestReview(ctx, ask.ReviewInput{Title: "v1", Project: "p", Content: allBlocks()[:1]}, a)
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.RequestReview(ctx, ask.ReviewInput{Title: "v2", Project: "p", Content: allBlocks()[:1], Revises: r.ID}, b)
	wantRefusal(t, err, ask.Errorf(ask.EInputInvalid, "revises: there is no review %q to revise", r.ID), "revises by another agent")
	if _, err := svc.RequestReview(ctx, ask.ReviewInput{Title: "v2", Project: "p", Content: allBlocks()[:1], Revises: r.ID}, a); err != nil {
		t.Fatal(err)
	}
}
