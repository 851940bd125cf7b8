package ask_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

func TestAnswerFollowUpRules(t *testing.T) {
	md := []ask.Block{{Type: ask.BlockMarkdown, Text: "See the table."}}
	for _, tc := range []struct {
		name string
		ask  func(testing.TB) *ask.Ask
		in   ask.FollowUpInput // AskID is filled in from the ask when empty and fill is set
		fill bool
		code string
		says string
	}{
		{name: "question_after_follow_up", ask: questionAwaitingAgent, in: ask.FollowUpInput{Answer: "SQLite is free.", Content: md}, fill: true},
		{name: "review_after_follow_up", ask: reviewAwaitingAgent, in: ask.FollowUpInput{Answer: "Two is what AWS advises."}, fill: true},
		{name: "persons_turn_refused", ask: openQuestion, in: ask.FollowUpInput{Answer: "x"}, fill: true, code: ask.EHumansTurn, says: "await_reply"},
		{name: "persons_turn_review_refused", ask: openReview, in: ask.FollowUpInput{Answer: "x"}, fill: true, code: ask.EHumansTurn},
		{name: "closed_question_refused", ask: closedQuestion, in: ask.FollowUpInput{Answer: "x"}, fill: true, code: ask.EClosed},
		{name: "closed_review_refused", ask: closedReview, in: ask.FollowUpInput{Answer: "x"}, fill: true, code: ask.EClosed},
		{name: "briefing_refused_agents_turn", ask: briefingAwaitingAgent, in: ask.FollowUpInput{Answer: "x"}, fill: true, code: ask.EAnswerInvalid, says: "answer_briefing"},
		{name: "briefing_refused_persons_turn", ask: openBriefing, in: ask.FollowUpInput{Answer: "x"}, fill: true, code: ask.EAnswerInvalid, says: "briefing"},
		{name: "answer_required", ask: questionAwaitingAgent, in: ask.FollowUpInput{}, fill: true, code: ask.EAnswerInvalid, says: "answer"},
		{name: "askId_required", ask: questionAwaitingAgent, in: ask.FollowUpInput{Answer: "x"}, code: ask.EAnswerInvalid, says: "askId"},
		{name: "content_checked", ask: questionAwaitingAgent, in: ask.FollowUpInput{Answer: "x", Content: []ask.Block{{Type: ask.BlockDiff}}}, fill: true, code: ask.EAnswerInvalid, says: "content[0].diff"},
		{name: "size_256KiB_plus_1_refused", ask: questionAwaitingAgent, in: ask.FollowUpInput{Answer: strings.Repeat("a", ask.MaxInputBytes)}, fill: true, code: ask.EAnswerInvalid, says: "256 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.ask(t)
			if tc.fill {
				tc.in.AskID = a.ID
			}
			before := deepCopy(a)
			at := a.UpdatedAt.Add(time.Minute)
			err := ask.AnswerFollowUp(a, tc.in, func() time.Time { return at })
			if tc.code != "" {
				wantError(t, err, tc.code, tc.says)
				wantUnchanged(t, before, a)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mustHold(t, a)
			if a.Status != ask.AwaitingHuman || !a.UpdatedAt.Equal(at) {
				t.Fatalf("status %s updatedAt %v", a.Status, a.UpdatedAt)
			}
			want := ask.Entry{Author: ask.AuthorAgent, Answer: tc.in.Answer, Content: tc.in.Content, At: at}
			if got := a.Thread[len(a.Thread)-1]; !reflect.DeepEqual(got, want) || len(a.Thread) != len(before.Thread)+1 {
				t.Fatalf("last entry %+v, want %+v", got, want)
			}
		})
	}
}

func TestAnswerBriefingRules(t *testing.T) {
	type answerCase struct {
		name    string
		ask     func(testing.TB) *ask.Ask
		answers []ask.PointAnswer
		code    string
		says    string
		points  []string // every point id after the answer
	}
	base := []string{"1", "2", "3", "4", "5"}
	// briefingOwing has the person's words on 1 and 4 (2 resolved), and it is the agent's turn.
	briefingOwing := func(t testing.TB) *ask.Ask {
		a := openBriefing(t)
		mustReply(t, a, responded(say("1", "Why?"), resolve("2"), say("4", "How?")), newClock())
		return a
	}
	// owingOnSubPoint: 3 has 3.1 and 3.2; the person wrote on 3.1.
	owingOnSubPoint := func(t testing.TB) *ask.Ask {
		a := briefingWithSubPoints(t)
		mustReply(t, a, responded(say("3.1", "Split again?")), func() time.Time { return a.UpdatedAt.Add(time.Second) })
		return a
	}
	// owingOnDepth3: 3.1 has 3.1.1; the person wrote on 3.1.1.
	owingOnDepth3 := func(t testing.TB) *ask.Ask {
		a := owingOnSubPoint(t)
		now := func() time.Time { return a.UpdatedAt.Add(time.Second) }
		mustAnswer(t, a, now, answer("3.1", "Yes.", "Part one, a"))
		mustReply(t, a, responded(say("3.1.1", "And this?")), now)
		return a
	}
	// owingAgainOn3: 3 has 3.1 and 3.2; the person wrote on 3 again.
	owingAgainOn3 := func(t testing.TB) *ask.Ask {
		a := briefingWithSubPoints(t)
		mustReply(t, a, responded(say("3", "One more part?")), func() time.Time { return a.UpdatedAt.Add(time.Second) })
		return a
	}
	withSub := slices.Concat(base, []string{"3.1", "3.2"})

	for _, tc := range []answerCase{
		{name: "every_pending_point_answered", ask: briefingAwaitingAgent, answers: []ask.PointAnswer{answer("1", "Because.")}, points: base},
		{name: "pending_points_in_any_order", ask: briefingOwing, answers: []ask.PointAnswer{answer("4", "Like so."), answer("1", "Because.")}, points: base},
		{name: "an_open_point_not_written_on_may_be_answered_too", ask: briefingAwaitingAgent, answers: []ask.PointAnswer{answer("1", "Because."), answer("5", "Also.")}, points: base},
		{name: "every_pending_point_must_be_answered", ask: briefingOwing, answers: []ask.PointAnswer{answer("1", "Because.")}, code: ask.EAnswerInvalid, says: "point 4"},
		{name: "answering_only_other_points_is_refused", ask: briefingAwaitingAgent, answers: []ask.PointAnswer{answer("3", "x")}, code: ask.EAnswerInvalid, says: "point 1"},
		{name: "unknown_point", ask: briefingAwaitingAgent, answers: []ask.PointAnswer{answer("1", "x"), answer("6", "x")}, code: ask.EAnswerInvalid, says: "answers[1].point"},
		{name: "unknown_sub_point", ask: briefingAwaitingAgent, answers: []ask.PointAnswer{answer("1", "x"), answer("1.1", "x")}, code: ask.EAnswerInvalid, says: `"1.1"`},
		{name: "resolved_point", ask: briefingAwaitingAgent, answers: []ask.PointAnswer{answer("1", "x"), answer("2", "x")}, code: ask.EAnswerInvalid, says: "answers[1].point"},
		{name: "point_answered_twice", ask: briefingAwaitingAgent, answers: []ask.PointAnswer{answer("1", "x"), answer("1", "y")}, code: ask.EAnswerInvalid, says: "answers[1].point"},
		{name: "persons_turn_refused", ask: openBriefing, answers: []ask.PointAnswer{answer("1", "x")}, code: ask.EHumansTurn},
		{name: "persons_turn_after_answer_refused", ask: briefingWithSubPoints, answers: []ask.PointAnswer{answer("1", "x")}, code: ask.EHumansTurn},
		{name: "closed_refused", ask: closedBriefing, answers: []ask.PointAnswer{answer("1", "x")}, code: ask.EClosed},
		{name: "question_refused", ask: questionAwaitingAgent, answers: []ask.PointAnswer{answer("1", "x")}, code: ask.EAnswerInvalid, says: "answer_follow_up"},
		{name: "review_refused", ask: reviewAwaitingAgent, answers: []ask.PointAnswer{answer("1", "x")}, code: ask.EAnswerInvalid, says: "not a briefing"},
		{name: "answers_required", ask: briefingAwaitingAgent, code: ask.EAnswerInvalid, says: "answers"},
		{name: "answer_text_required", ask: briefingAwaitingAgent, answers: []ask.PointAnswer{answer("1", "")}, code: ask.EAnswerInvalid, says: "answers[0].answer"},
		{name: "answer_point_required", ask: briefingAwaitingAgent, answers: []ask.PointAnswer{answer("", "x")}, code: ask.EAnswerInvalid, says: "answers[0].point"},
		{name: "answer_content_checked", ask: briefingAwaitingAgent, answers: []ask.PointAnswer{{Point: "1", Answer: "x", Content: []ask.Block{{Type: "gif"}}}}, code: ask.EAnswerInvalid, says: "answers[0].content[0].type"},
		{name: "sub_point_title_required", ask: briefingAwaitingAgent, answers: []ask.PointAnswer{answer("1", "x", "ok", "")}, code: ask.EAnswerInvalid, says: "answers[0].points[1].title"},
		{name: "sub_point_title_201_runes_refused", ask: briefingAwaitingAgent, answers: []ask.PointAnswer{answer("1", "x", strings.Repeat("ß", 201))}, code: ask.EAnswerInvalid, says: "answers[0].points[0].title"},
		{name: "sub_point_title_200_runes_ok", ask: briefingAwaitingAgent, answers: []ask.PointAnswer{answer("1", "x", strings.Repeat("ß", 200))}, points: slices.Concat(base, []string{"1.1"})},
		{name: "sub_points_numbered_beneath_their_point", ask: briefingAwaitingAgent, answers: []ask.PointAnswer{answer("1", "Two parts.", "a", "b")}, points: slices.Concat(base, []string{"1.1", "1.2"})},
		{name: "sub_points_continue_after_existing_ones", ask: owingAgainOn3, answers: []ask.PointAnswer{answer("3", "A third.", "c")}, points: slices.Concat(withSub, []string{"3.3"})},
		{name: "sub_points_of_several_points", ask: briefingOwing, answers: []ask.PointAnswer{answer("1", "x", "a"), answer("4", "y", "b", "c")}, points: slices.Concat(base, []string{"1.1", "4.1", "4.2"})},
		{name: "depth_2_point_gets_sub_points", ask: owingOnSubPoint, answers: []ask.PointAnswer{answer("3.1", "Yes.", "a", "b")}, points: slices.Concat(withSub, []string{"3.1.1", "3.1.2"})},
		{name: "depth_3_point_gets_no_sub_points", ask: owingOnDepth3, answers: []ask.PointAnswer{answer("3.1.1", "Deeper.", "too deep")}, code: ask.EAnswerInvalid, says: "answers[0].points"},
		{name: "depth_3_point_may_be_answered", ask: owingOnDepth3, answers: []ask.PointAnswer{answer("3.1.1", "Like this.")}, points: slices.Concat(withSub, []string{"3.1.1"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.ask(t)
			before := deepCopy(a)
			at := a.UpdatedAt.Add(time.Minute)
			err := ask.AnswerBriefing(a, ask.BriefingAnswerInput{AskID: a.ID, Answers: tc.answers}, func() time.Time { return at })
			if tc.code != "" {
				wantError(t, err, tc.code, tc.says)
				wantUnchanged(t, before, a)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mustHold(t, a)
			if a.Status != ask.AwaitingHuman || !a.UpdatedAt.Equal(at) {
				t.Fatalf("status %s updatedAt %v, want awaiting_human at %v", a.Status, a.UpdatedAt, at)
			}
			ps := ask.BriefingPoints(a)
			if got := ids(ps); !reflect.DeepEqual(got, tc.points) {
				t.Fatalf("points %v, want %v", got, tc.points)
			}
			if owed := ps.Pending(); len(owed) != 0 {
				t.Fatalf("still owed %v", owed)
			}
			// One agent entry per answer, in order, each naming its point and carrying its sub-points.
			entries := a.Thread[len(before.Thread):]
			if len(entries) != len(tc.answers) {
				t.Fatalf("%d new entries for %d answers", len(entries), len(tc.answers))
			}
			for i, e := range entries {
				ans := tc.answers[i]
				if e.Author != ask.AuthorAgent || e.Point != ans.Point || e.Answer != ans.Answer || !e.At.Equal(at) || e.Reply != nil {
					t.Errorf("entry %d is %+v for answer %+v", i, e, ans)
				}
				if len(e.Points) != len(ans.Points) {
					t.Fatalf("entry %d has %d sub-points, want %d", i, len(e.Points), len(ans.Points))
				}
				for j, p := range e.Points {
					if !strings.HasPrefix(p.ID, ans.Point+".") || p.Title != ans.Points[j].Title {
						t.Errorf("sub-point %+v of point %s", p, ans.Point)
					}
				}
			}
		})
	}
}

// The thread keeps every turn in order: a person's with the reply and who gave it, an agent's with
// its answer, the point it answers and the sub-points it made.
func TestThreadRecordsEveryTurnInOrder(t *testing.T) {
	t.Run("review", func(t *testing.T) {
		now := newClock()
		a := mustReview(t, reviewInput(), now)
		if err := ask.ApplyReply(a, followUp("Why twice?"), alice, now); err != nil {
			t.Fatal(err)
		}
		if err := ask.AnswerFollowUp(a, ask.FollowUpInput{AskID: a.ID, Answer: "AWS advises it."}, now); err != nil {
			t.Fatal(err)
		}
		if err := ask.ApplyReply(a, followUp("And jitter?"), nil, now); err != nil {
			t.Fatal(err)
		}
		if err := ask.AnswerFollowUp(a, ask.FollowUpInput{AskID: a.ID, Answer: "Full jitter."}, now); err != nil {
			t.Fatal(err)
		}
		if err := ask.ApplyReply(a, changesRequested("Three retries."), bob, now); err != nil {
			t.Fatal(err)
		}
		fu1, fu2, cr := followUp("Why twice?"), followUp("And jitter?"), changesRequested("Three retries.")
		want := []ask.Entry{
			{Author: ask.AuthorHuman, Reply: &fu1, By: alice, Via: ask.SurfaceInbox, At: t0.Add(1 * time.Second)},
			{Author: ask.AuthorAgent, Answer: "AWS advises it.", At: t0.Add(2 * time.Second)},
			{Author: ask.AuthorHuman, Reply: &fu2, Via: ask.SurfaceInbox, At: t0.Add(3 * time.Second)},
			{Author: ask.AuthorAgent, Answer: "Full jitter.", At: t0.Add(4 * time.Second)},
			{Author: ask.AuthorHuman, Reply: &cr, By: bob, Via: ask.SurfaceInbox, At: t0.Add(5 * time.Second)},
		}
		if !reflect.DeepEqual(a.Thread, want) {
			t.Fatalf("thread\n%+v\nwant\n%+v", a.Thread, want)
		}
		if a.Status != ask.Closed || !a.ClosedAt.Equal(t0.Add(5*time.Second)) || !a.CreatedAt.Equal(t0) {
			t.Fatalf("status %s closedAt %v createdAt %v", a.Status, a.ClosedAt, a.CreatedAt)
		}
		mustHold(t, a)
	})
	t.Run("briefing", func(t *testing.T) {
		now := newClock()
		a := mustBriefing(t, briefingInput(1, 1), now)
		r1 := responded(say("2", "Split it."), resolve("1"))
		if err := ask.ApplyReply(a, r1, alice, now); err != nil {
			t.Fatal(err)
		}
		in := ask.BriefingAnswerInput{AskID: a.ID, Answers: []ask.PointAnswer{{
			Point: "2", Answer: "Two parts.", Content: []ask.Block{{Type: ask.BlockCode, Code: "x := 1"}},
			Points: []ask.BriefingPoint{{Title: "First", Detail: "More."}, {Title: "Second"}},
		}}}
		if err := ask.AnswerBriefing(a, in, now); err != nil {
			t.Fatal(err)
		}
		r2 := responded(resolve("2"))
		if err := ask.ApplyReply(a, r2, bob, now); err != nil {
			t.Fatal(err)
		}
		want := []ask.Entry{
			{Author: ask.AuthorHuman, Reply: &r1, By: alice, Via: ask.SurfaceInbox, At: t0.Add(1 * time.Second)},
			{Author: ask.AuthorAgent, Answer: "Two parts.", Content: in.Answers[0].Content, Point: "2",
				Points: []ask.Point{{ID: "2.1", Title: "First", Detail: "More."}, {ID: "2.2", Title: "Second"}}, At: t0.Add(2 * time.Second)},
			{Author: ask.AuthorHuman, Reply: &r2, By: bob, Via: ask.SurfaceInbox, At: t0.Add(3 * time.Second)},
		}
		if !reflect.DeepEqual(a.Thread, want) {
			t.Fatalf("thread\n%+v\nwant\n%+v", a.Thread, want)
		}
		if a.Status != ask.Closed {
			t.Fatalf("status %s", a.Status)
		}
		mustHold(t, a)
	})
}

func TestDeriveStatus(t *testing.T) {
	ans, fu, dis := answered("x"), followUp("?"), dismissed()
	part, all := responded(say("1", "?")), responded(resolve("1"), resolve("2"))
	human := func(r *ask.Reply) ask.Entry { return ask.Entry{Author: ask.AuthorHuman, Reply: r} }
	agent := ask.Entry{Author: ask.AuthorAgent, Answer: "a"}
	agentOn1 := ask.Entry{Author: ask.AuthorAgent, Answer: "a", Point: "1"}
	q := func(es ...ask.Entry) *ask.Ask {
		a := openQuestion(t)
		a.Thread = es
		return a
	}
	b := func(es ...ask.Entry) *ask.Ask {
		a := mustBriefing(t, briefingInput(2), newClock())
		a.Thread = es
		return a
	}
	for _, tc := range []struct {
		name string
		ask  *ask.Ask
		want ask.Status
	}{
		{"no_turns_awaits_the_person", q(), ask.AwaitingHuman},
		{"nil_thread_awaits_the_person", q(nil...), ask.AwaitingHuman},
		{"follow_up_awaits_the_agent", q(human(&fu)), ask.AwaitingAgent},
		{"agents_answer_awaits_the_person", q(human(&fu), agent), ask.AwaitingHuman},
		{"answered_closes", q(human(&fu), agent, human(&ans)), ask.Closed},
		{"dismissed_closes", q(human(&dis)), ask.Closed},
		{"responded_leaving_points_awaits_the_agent", b(human(&part)), ask.AwaitingAgent},
		{"responded_resolving_every_point_closes", b(human(&part), agentOn1, human(&all)), ask.Closed},
		{"briefing_dismissed_on_agents_turn_closes", b(human(&part), human(&dis)), ask.Closed},
		{"entry_after_closing_reply_has_no_status", q(human(&ans), agent), ""},
		{"reply_after_closing_reply_has_no_status", q(human(&dis), human(&ans)), ""},
		{"entry_after_closing_responded_has_no_status", b(human(&all), agentOn1), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ask.DeriveStatus(tc.ask); got != tc.want {
				t.Fatalf("DeriveStatus = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCheckInvariants(t *testing.T) {
	at := t0.Add(time.Hour)
	for _, tc := range []struct {
		name  string
		ask   func(testing.TB) *ask.Ask
		spoil func(*ask.Ask)
		says  string // "" when the ask holds
	}{
		{name: "open_question_holds", ask: openQuestion},
		{name: "closed_question_holds", ask: closedQuestion},
		{name: "review_on_agents_turn_holds", ask: reviewAwaitingAgent},
		{name: "briefing_with_sub_points_holds", ask: briefingWithSubPoints},
		{name: "closed_briefing_holds", ask: closedBriefing},
		{name: "status_must_match_thread", ask: questionAwaitingAgent, spoil: func(a *ask.Ask) { a.Status = ask.AwaitingHuman }, says: "thread says awaiting_agent"},
		{name: "open_status_on_closed_thread", ask: closedReview, spoil: func(a *ask.Ask) { a.Status, a.ClosedAt = ask.AwaitingHuman, nil }, says: "status"},
		{name: "closed_needs_closedAt", ask: closedQuestion, spoil: func(a *ask.Ask) { a.ClosedAt = nil }, says: "closedAt"},
		{name: "open_has_no_closedAt", ask: openQuestion, spoil: func(a *ask.Ask) { a.ClosedAt = &at }, says: "closedAt"},
		{name: "entry_after_closing_reply", ask: closedQuestion, spoil: func(a *ask.Ask) {
			a.Thread = append(a.Thread, ask.Entry{Author: ask.AuthorAgent, Answer: "late", At: at})
		}, says: "after the turn that closed"},
		{name: "reply_after_closing_reply", ask: closedReview, spoil: func(a *ask.Ask) {
			r := approved("again")
			a.Thread = append(a.Thread, ask.Entry{Author: ask.AuthorHuman, Reply: &r, At: at})
		}, says: "after the turn that closed"},
		{name: "entry_after_closing_responded", ask: closedBriefing, spoil: func(a *ask.Ask) {
			r := responded(say("1", "reopen?"))
			a.Thread = append(a.Thread, ask.Entry{Author: ask.AuthorHuman, Reply: &r, At: at})
		}, says: "after the turn that closed"},
		{name: "point_id_used_twice", ask: briefingWithSubPoints, spoil: func(a *ask.Ask) {
			a.Thread[len(a.Thread)-1].Points[1].ID = "3.1"
		}, says: "3.1 is used twice"},
		{name: "sub_point_reusing_a_top_level_id", ask: briefingWithSubPoints, spoil: func(a *ask.Ask) {
			a.Thread[len(a.Thread)-1].Points[0].ID = "4"
		}, says: "4 is used twice"},
		{name: "point_deeper_than_3_levels", ask: briefingWithSubPoints, spoil: func(a *ask.Ask) {
			a.Thread[len(a.Thread)-1].Points[0].ID = "3.1.1.1"
		}, says: "deeper than 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.ask(t)
			if tc.spoil != nil {
				tc.spoil(a)
			}
			err := ask.CheckInvariants(a)
			if tc.says == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("CheckInvariants = %v, want an error saying %q", err, tc.says)
			}
		})
	}
}

// Every surface answers through the one rule: the first valid answer wins, the thread says where
// it was given, and a second answer from another surface is refused as closed.
func TestReplyViaSurfaceFirstAnswerWins(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC) }
	a := &ask.Ask{ID: "q1", Kind: ask.KindQuestion, Status: ask.AwaitingHuman,
		Question: &ask.QuestionPrompt{Question: "Ship it?", Options: []ask.Choice{{Label: "Yes"}, {Label: "No"}}}}
	ada := &ask.Actor{ID: "p-ada", Name: "Ada"}
	if err := ask.ApplyReplyVia(a, ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"Yes"}}, ada, ask.SurfaceSlack, now); err != nil {
		t.Fatal(err)
	}
	if got := a.Thread[len(a.Thread)-1]; got.Via != ask.SurfaceSlack || got.By != ada {
		t.Fatalf("last entry = %+v, want Ada via slack", got)
	}
	err := ask.ApplyReplyVia(a, ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"No"}}, ada, ask.SurfaceEmail, now)
	if ask.ErrorCode(err) != ask.EClosed {
		t.Fatalf("second answer from email: err = %v, want %s", err, ask.EClosed)
	}
	b, err := json.Marshal(a.Thread[0])
	if err != nil || !strings.Contains(string(b), `"via":"slack"`) {
		t.Fatalf("entry JSON = %s (%v), want via slack", b, err)
	}
	var back ask.Entry
	if err := json.Unmarshal([]byte(`{"author":"human","reply":{"outcome":"answered","selected":["Yes"]},"via":"fax","at":"2026-03-01T09:00:00Z"}`), &back); err == nil {
		t.Fatal("an entry via an unknown surface decoded")
	}
}
