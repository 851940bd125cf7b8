package ask_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// States of asks the reply rules are tried against. Each builds a fresh ask through the real rules,
// so that every state is one the lifecycle can reach.

func openQuestion(t testing.TB) *ask.Ask {
	return mustQuestion(t, questionInput("SQLite", "Postgres", "DynamoDB"), newClock())
}

func openMultipleQuestion(t testing.TB) *ask.Ask {
	in := questionInput("SQLite", "Postgres", "DynamoDB")
	in.Multiple = true
	return mustQuestion(t, in, newClock())
}

func openQuestionWithoutOptions(t testing.TB) *ask.Ask {
	return mustQuestion(t, questionInput(), newClock())
}

func questionAwaitingAgent(t testing.TB) *ask.Ask {
	a := openQuestion(t)
	mustReply(t, a, followUp("Which one is cheaper?"), newClock())
	return a
}

func closedQuestion(t testing.TB) *ask.Ask {
	a := openQuestion(t)
	mustReply(t, a, answered("", "SQLite"), newClock())
	return a
}

func openReview(t testing.TB) *ask.Ask { return mustReview(t, reviewInput(), newClock()) }

func reviewAwaitingAgent(t testing.TB) *ask.Ask {
	a := openReview(t)
	mustReply(t, a, followUp("Why twice?"), newClock())
	return a
}

func closedReview(t testing.TB) *ask.Ask {
	a := openReview(t)
	mustReply(t, a, approved(""), newClock())
	return a
}

// openBriefing has points 1, 2 in its first section and 3, 4, 5 in its second.
func openBriefing(t testing.TB) *ask.Ask { return mustBriefing(t, briefingInput(2, 3), newClock()) }

func briefingAwaitingAgent(t testing.TB) *ask.Ask {
	a := openBriefing(t)
	mustReply(t, a, responded(say("1", "Why?"), resolve("2")), newClock())
	return a
}

// briefingWithResolvedPoint has point 1 resolved and the rest open, and it is the person's turn.
func briefingWithResolvedPoint(t testing.TB) *ask.Ask {
	a := openBriefing(t)
	now := newClock()
	mustReply(t, a, responded(resolve("1"), say("2", "Really?")), now)
	mustAnswer(t, a, now, answer("2", "Yes."))
	return a
}

// briefingWithSubPoints has points 1 to 5, with 3.1 and 3.2 beneath 3, and it is the person's turn.
func briefingWithSubPoints(t testing.TB) *ask.Ask {
	a := openBriefing(t)
	now := newClock()
	mustReply(t, a, responded(say("3", "Split this up.")), now)
	mustAnswer(t, a, now, answer("3", "Two parts.", "Part one", "Part two"))
	return a
}

func closedBriefing(t testing.TB) *ask.Ask {
	a := openBriefing(t)
	mustReply(t, a, responded(resolveAll("1", "2", "3", "4", "5")...), newClock())
	return a
}

func TestApplyReplyRules(t *testing.T) {
	type replyCase struct {
		name   string
		ask    func(testing.TB) *ask.Ask
		reply  ask.Reply
		code   string     // the refusal, or "" when the reply is accepted
		says   string     // what the refusal's message mentions
		status ask.Status // the status after an accepted reply
	}
	every := []ask.Reply{
		answered("", "SQLite"), answered("mine"), approved("ok"), changesRequested("no"), followUp("why?"),
		dismissed(), responded(resolve("1")), {Outcome: "nonsense"},
	}
	var cases []replyCase

	// 409: a closed ask takes no reply at all, fitting or not.
	for _, closed := range []struct {
		kind string
		ask  func(testing.TB) *ask.Ask
	}{{"question", closedQuestion}, {"review", closedReview}, {"briefing", closedBriefing}} {
		for _, r := range every {
			cases = append(cases, replyCase{
				name: "closed_" + closed.kind + "_refuses_" + string(r.Outcome) + "_409", ask: closed.ask, reply: r, code: ask.EClosed,
			})
		}
	}
	// 409: during the agent's turn only a briefing's dismissal is taken.
	for _, r := range every {
		cases = append(cases,
			replyCase{name: "agents_turn_question_refuses_" + string(r.Outcome) + "_409", ask: questionAwaitingAgent, reply: r, code: ask.EAgentsTurn},
			replyCase{name: "agents_turn_review_refuses_" + string(r.Outcome) + "_409", ask: reviewAwaitingAgent, reply: r, code: ask.EAgentsTurn},
		)
		if r.Outcome != ask.OutcomeDismissed {
			cases = append(cases, replyCase{name: "agents_turn_briefing_refuses_" + string(r.Outcome) + "_409", ask: briefingAwaitingAgent, reply: r, code: ask.EAgentsTurn})
		}
	}

	cases = append(cases, []replyCase{
		{name: "agents_turn_briefing_may_be_dismissed", ask: briefingAwaitingAgent, reply: dismissed(), status: ask.Closed},

		// question
		{name: "question_answered_with_a_choice", ask: openQuestion, reply: answered("", "Postgres"), status: ask.Closed},
		{name: "question_answered_with_text_only", ask: openQuestion, reply: answered("Neither, use files."), status: ask.Closed},
		{name: "question_answered_with_choice_and_text", ask: openQuestion, reply: answered("for now", "SQLite"), status: ask.Closed},
		{name: "question_answered_needs_choice_or_text", ask: openQuestion, reply: answered(""), code: ask.EReplyInvalid, says: "selected"},
		{name: "question_answered_blank_text_is_no_text", ask: openQuestion, reply: answered(" \n\t "), code: ask.EReplyInvalid, says: "text"},
		{name: "question_answered_nil_selected_and_no_text", ask: openQuestion, reply: ask.Reply{Outcome: ask.OutcomeAnswered}, code: ask.EReplyInvalid, says: "selected"},
		{name: "question_choice_must_be_offered", ask: openQuestion, reply: answered("", "MySQL"), code: ask.EReplyInvalid, says: "selected[0]"},
		{name: "question_choice_matches_label_exactly", ask: openQuestion, reply: answered("", "sqlite"), code: ask.EReplyInvalid, says: "selected[0]"},
		{name: "question_choice_offered_check_every_index", ask: openMultipleQuestion, reply: answered("", "SQLite", "MySQL"), code: ask.EReplyInvalid, says: "selected[1]"},
		{name: "question_one_choice_unless_multiple", ask: openQuestion, reply: answered("", "SQLite", "Postgres"), code: ask.EReplyInvalid, says: "selected"},
		{name: "question_multiple_takes_several", ask: openMultipleQuestion, reply: answered("", "SQLite", "DynamoDB"), status: ask.Closed},
		{name: "question_multiple_takes_every_choice", ask: openMultipleQuestion, reply: answered("", "SQLite", "Postgres", "DynamoDB"), status: ask.Closed},
		{name: "question_no_duplicate_selection", ask: openMultipleQuestion, reply: answered("", "SQLite", "SQLite"), code: ask.EReplyInvalid, says: "selected[1]"},
		{name: "question_without_options_takes_text", ask: openQuestionWithoutOptions, reply: answered("Use SQLite."), status: ask.Closed},
		{name: "question_without_options_takes_no_choice", ask: openQuestionWithoutOptions, reply: answered("", "SQLite"), code: ask.EReplyInvalid, says: "selected[0]"},
		{name: "question_follow_up_hands_move_to_agent", ask: openQuestion, reply: followUp("What about cost?"), status: ask.AwaitingAgent},
		{name: "question_dismissed", ask: openQuestion, reply: dismissed(), status: ask.Closed},
		{name: "question_refuses_approved", ask: openQuestion, reply: approved(""), code: ask.EReplyInvalid, says: "approved"},
		{name: "question_refuses_changes_requested", ask: openQuestion, reply: changesRequested("x"), code: ask.EReplyInvalid, says: "changes_requested"},
		{name: "question_refuses_responded", ask: openQuestion, reply: responded(resolve("1")), code: ask.EReplyInvalid, says: "responded"},
		{name: "question_refuses_unknown_outcome", ask: openQuestion, reply: ask.Reply{Outcome: "maybe"}, code: ask.EReplyInvalid, says: "maybe"},

		// review
		{name: "review_approved_without_note", ask: openReview, reply: approved(""), status: ask.Closed},
		{name: "review_approved_with_note", ask: openReview, reply: approved("Nice."), status: ask.Closed},
		{name: "review_changes_requested", ask: openReview, reply: changesRequested("Retry three times."), status: ask.Closed},
		{name: "review_follow_up_hands_move_to_agent", ask: openReview, reply: followUp("Why twice?"), status: ask.AwaitingAgent},
		{name: "review_dismissed", ask: openReview, reply: dismissed(), status: ask.Closed},
		{name: "review_refuses_answered", ask: openReview, reply: answered("ok"), code: ask.EReplyInvalid, says: "answered"},
		{name: "review_refuses_responded", ask: openReview, reply: responded(resolve("1")), code: ask.EReplyInvalid, says: "responded"},
		{name: "review_refuses_unknown_outcome", ask: openReview, reply: ask.Reply{Outcome: "maybe"}, code: ask.EReplyInvalid, says: "maybe"},

		// briefing
		{name: "briefing_takes_no_follow_up", ask: openBriefing, reply: followUp("?"), code: ask.EReplyInvalid, says: "a briefing takes no follow_up"},
		{name: "briefing_refuses_answered", ask: openBriefing, reply: answered("ok"), code: ask.EReplyInvalid, says: "answered"},
		{name: "briefing_refuses_approved", ask: openBriefing, reply: approved(""), code: ask.EReplyInvalid, says: "approved"},
		{name: "briefing_refuses_changes_requested", ask: openBriefing, reply: changesRequested("x"), code: ask.EReplyInvalid, says: "changes_requested"},
		{name: "briefing_dismissed", ask: openBriefing, reply: dismissed(), status: ask.Closed},
		{name: "responded_unknown_point", ask: openBriefing, reply: responded(say("1", "a"), say("9", "b")), code: ask.EReplyInvalid, says: "points[1]"},
		{name: "responded_unknown_sub_point", ask: openBriefing, reply: responded(say("1.1", "a")), code: ask.EReplyInvalid, says: `"1.1"`},
		{name: "responded_empty_point_id", ask: openBriefing, reply: responded(say("", "a")), code: ask.EReplyInvalid, says: "points[0]"},
		{name: "responded_point_named_twice", ask: openBriefing, reply: responded(say("2", "a"), resolve("2")), code: ask.EReplyInvalid, says: "points[1]"},
		{name: "responded_point_needs_words_or_resolved", ask: openBriefing, reply: responded(say("1", "a"), say("2", "")), code: ask.EReplyInvalid, says: "points[1]"},
		{name: "responded_blank_words_are_no_words", ask: openBriefing, reply: responded(say("3", "  \n")), code: ask.EReplyInvalid, says: "points[0]"},
		{name: "responded_already_resolved_point", ask: briefingWithResolvedPoint, reply: responded(say("1", "One more thing")), code: ask.EReplyInvalid, says: "already resolved"},
		{name: "responded_sub_point_resolved_with_its_parent", ask: briefingWithSubPointsResolved, reply: responded(say("3.2", "more")), code: ask.EReplyInvalid, says: "already resolved"},
		{name: "responded_needs_points", ask: openBriefing, reply: responded(), code: ask.EReplyInvalid, says: "points"},
		{name: "responded_resolving_some_writing_on_none", ask: openBriefing, reply: responded(resolve("1"), resolve("3")), code: ask.EReplyInvalid, says: "points"},
		{name: "responded_resolving_every_point_closes", ask: openBriefing, reply: responded(resolveAll("1", "2", "3", "4", "5")...), status: ask.Closed},
		{name: "responded_resolving_every_point_in_any_order_closes", ask: openBriefing, reply: responded(resolveAll("5", "3", "1", "4", "2")...), status: ask.Closed},
		{name: "responded_resolved_with_words_closes", ask: openBriefing, reply: responded(ask.PointReply{Point: "1", Text: "Thanks", Resolved: true}, resolve("2"), resolve("3"), resolve("4"), resolve("5")), status: ask.Closed},
		{name: "responded_writing_on_one_hands_move_to_agent", ask: openBriefing, reply: responded(say("4", "Why?")), status: ask.AwaitingAgent},
		{name: "responded_writing_and_resolving_hands_move_to_agent", ask: openBriefing, reply: responded(resolve("1"), say("4", "Why?")), status: ask.AwaitingAgent},
		{name: "responded_resolving_the_rest_closes", ask: briefingWithResolvedPoint, reply: responded(resolveAll("2", "3", "4", "5")...), status: ask.Closed},
		{name: "responded_resolving_parent_resolves_sub_points_and_closes", ask: briefingWithSubPoints, reply: responded(resolveAll("1", "2", "3", "4", "5")...), status: ask.Closed},
		{name: "responded_sub_points_must_be_resolved_too", ask: briefingWithSubPoints, reply: responded(resolveAll("1", "2", "3.1", "3.2", "4", "5")...), code: ask.EReplyInvalid, says: "points"},
		{name: "responded_writing_on_a_sub_point", ask: briefingWithSubPoints, reply: responded(say("3.2", "And this?")), status: ask.AwaitingAgent},
	}...)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.ask(t)
			before := deepCopy(a)
			at := a.UpdatedAt.Add(42)
			err := ask.ApplyReply(a, tc.reply, bob, func() time.Time { return at })
			if tc.code != "" {
				if tc.says != "" {
					wantError(t, err, tc.code, tc.says)
				} else {
					wantError(t, err, tc.code, a.ID)
				}
				wantUnchanged(t, before, a)
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			mustHold(t, a)
			if a.Status != tc.status {
				t.Fatalf("status %s, want %s", a.Status, tc.status)
			}
			if len(a.Thread) != len(before.Thread)+1 {
				t.Fatalf("thread has %d entries, want %d", len(a.Thread), len(before.Thread)+1)
			}
			e := a.Thread[len(a.Thread)-1]
			if e.Author != ask.AuthorHuman || e.By != bob || !e.At.Equal(at) || !reflect.DeepEqual(*e.Reply, tc.reply) {
				t.Fatalf("entry %+v does not record the reply %+v by %v at %v", e, tc.reply, bob, at)
			}
			if !a.UpdatedAt.Equal(at) {
				t.Errorf("updatedAt %v, want %v", a.UpdatedAt, at)
			}
			if tc.status == ask.Closed {
				if a.ClosedAt == nil || !a.ClosedAt.Equal(at) {
					t.Errorf("closedAt %v, want %v", a.ClosedAt, at)
				}
			} else if a.ClosedAt != nil {
				t.Errorf("an open ask has closedAt %v", a.ClosedAt)
			}
			if !reflect.DeepEqual(a.Thread[:len(before.Thread)], before.Thread) {
				t.Errorf("earlier turns changed")
			}
		})
	}
}

// briefingWithSubPointsResolved has 3 (and so 3.1 and 3.2) resolved, and it is the person's turn.
func briefingWithSubPointsResolved(t testing.TB) *ask.Ask {
	a := briefingWithSubPoints(t)
	now := func() time.Time { return a.UpdatedAt.Add(time.Second) }
	mustReply(t, a, responded(resolve("3"), say("1", "And 1?")), now)
	mustAnswer(t, a, now, answer("1", "Here."))
	return a
}

func TestResolvingAPointResolvesEverythingBeneathIt(t *testing.T) {
	a := openBriefing(t)
	now := newClock()
	mustReply(t, a, responded(say("3", "Split this up.")), now)
	mustAnswer(t, a, now, answer("3", "Two parts.", "Part one", "Part two"))
	mustReply(t, a, responded(say("3.1", "Deeper?")), now)
	mustAnswer(t, a, now, answer("3.1", "Yes.", "Part one, a", "Part one, b"))

	if got, want := ids(ask.BriefingPoints(a)), []string{"1", "2", "3", "4", "5", "3.1", "3.2", "3.1.1", "3.1.2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("points %v, want %v", got, want)
	}
	mustReply(t, a, responded(resolve("3"), say("1", "And this one?")), now)
	ps := ask.BriefingPoints(a)
	for _, id := range []string{"3", "3.1", "3.2", "3.1.1", "3.1.2"} {
		if !ps.ByID[id].Resolved {
			t.Errorf("point %s is not resolved after 3 was", id)
		}
	}
	for _, id := range []string{"1", "2", "4", "5"} {
		if ps.ByID[id].Resolved {
			t.Errorf("point %s is resolved, but only 3 was", id)
		}
	}
	if a.Status != ask.AwaitingAgent {
		t.Fatalf("status %s, want awaiting_agent", a.Status)
	}
}

func TestBriefingClosesWhenEveryPointIsResolved(t *testing.T) {
	a := openBriefing(t)
	now := newClock()
	mustReply(t, a, responded(resolve("1"), resolve("2"), say("3", "?"), say("5", "?")), now)
	if got := ask.BriefingPoints(a).Pending(); !reflect.DeepEqual(got, []string{"3", "5"}) {
		t.Fatalf("owed %v, want [3 5]", got)
	}
	mustAnswer(t, a, now, answer("3", "Because."), answer("5", "Because."))
	// Resolving some and writing on none is refused while a point stays open.
	before := deepCopy(a)
	if err := ask.ApplyReply(a, responded(resolve("3"), resolve("4")), alice, now); ask.ErrorCode(err) != ask.EReplyInvalid {
		t.Fatalf("resolving 3 and 4 with 5 open and nothing written on: %v", err)
	}
	wantUnchanged(t, before, a)
	mustReply(t, a, responded(resolve("3"), resolve("4"), say("5", "Still unsure.")), now)
	if a.Status != ask.AwaitingAgent || a.ClosedAt != nil {
		t.Fatalf("status %s closedAt %v, want awaiting_agent and open", a.Status, a.ClosedAt)
	}
	mustAnswer(t, a, now, answer("5", "Let me explain."))
	mustReply(t, a, responded(resolve("5")), now)
	if a.Status != ask.Closed || a.ClosedAt == nil || !a.ClosedAt.Equal(a.UpdatedAt) {
		t.Fatalf("status %s closedAt %v updatedAt %v", a.Status, a.ClosedAt, a.UpdatedAt)
	}
	if !ask.BriefingPoints(a).AllResolved() {
		t.Fatal("closed with points open")
	}
}

// A reply that closes an ask also ends its being followed, in the same change: the waiting call
// returns with that reply, and no later write (with an event of its own) is needed to say so. A
// reply that hands the move back to the agent leaves waiting as it was.
func TestClosingReplyEndsWaiting(t *testing.T) {
	for _, tc := range []struct {
		name        string
		ask         func(testing.TB) *ask.Ask
		reply       ask.Reply
		wantWaiting bool
	}{
		{"answered", openQuestion, ask.Reply{Outcome: ask.OutcomeAnswered, Text: "yes"}, false},
		{"dismissed", openReview, ask.Reply{Outcome: ask.OutcomeDismissed}, false},
		{"approved", openReview, ask.Reply{Outcome: ask.OutcomeApproved}, false},
		{"follow_up", openQuestion, ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "Which one?"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.ask(t)
			a.Waiting = true
			if err := ask.ApplyReply(a, tc.reply, &ask.Actor{ID: "owner"}, newClock()); err != nil {
				t.Fatal(err)
			}
			if a.Waiting != tc.wantWaiting {
				t.Errorf("after %s (status %s): waiting %v, want %v", tc.name, a.Status, a.Waiting, tc.wantWaiting)
			}
		})
	}
}
