package ask_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

func fixed(t time.Time) ask.Clock { return func() time.Time { return t } }

func secs(n int64) *ask.DeadlineInput { return &ask.DeadlineInput{InSeconds: n} }

// A deadline is checked when the ask is made: its time, and its default as a reply the person
// could have given to that very ask, which must close it.
func TestDeadlineInputRules(t *testing.T) {
	at := func(d time.Duration) *time.Time { x := t0.Add(d); return &x }
	yes := &ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"Yes"}}
	for _, tc := range []struct {
		name  string
		in    *ask.DeadlineInput
		kind  ask.Kind
		want  string // "" accepted; else words the refusal holds
		dueAt time.Time
	}{
		{"in seconds", secs(600), ask.KindQuestion, "", t0.Add(10 * time.Minute)},
		{"at a time", &ask.DeadlineInput{At: at(time.Hour)}, ask.KindQuestion, "", t0.Add(time.Hour)},
		{"neither", &ask.DeadlineInput{}, ask.KindQuestion, "needs at (a date-time) or inSeconds", time.Time{}},
		{"both", &ask.DeadlineInput{At: at(time.Hour), InSeconds: 60}, ask.KindQuestion, "not both", time.Time{}},
		{"too soon", secs(5), ask.KindQuestion, "between 10 and 604800", time.Time{}},
		{"too late", secs(8 * 24 * 3600), ask.KindQuestion, "between 10 and 604800", time.Time{}},
		{"in the past", &ask.DeadlineInput{At: at(-time.Hour)}, ask.KindQuestion, "it is 2026-03-01T09:00:00.000000Z now", time.Time{}},
		{"default a choice", &ask.DeadlineInput{InSeconds: 60, Default: yes}, ask.KindQuestion, "", t0.Add(time.Minute)},
		{"default not offered", &ask.DeadlineInput{InSeconds: 60, Default: &ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"Maybe"}}}, ask.KindQuestion, "not one of the choices offered", time.Time{}},
		{"default a follow-up", &ask.DeadlineInput{InSeconds: 60, Default: &ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "Why?"}}, ask.KindQuestion, "must close the question", time.Time{}},
		{"default dismissed", &ask.DeadlineInput{InSeconds: 60, Default: &ask.Reply{Outcome: ask.OutcomeDismissed}}, ask.KindQuestion, "leave default out", time.Time{}},
		{"default for a review", &ask.DeadlineInput{InSeconds: 60, Default: &ask.Reply{Outcome: ask.OutcomeApproved}}, ask.KindReview, "", t0.Add(time.Minute)},
		{"review default answered", &ask.DeadlineInput{InSeconds: 60, Default: yes}, ask.KindReview, "not a reply the person could give to this review", time.Time{}},
		{"briefing default dismissed", &ask.DeadlineInput{InSeconds: 60, Default: &ask.Reply{Outcome: ask.OutcomeDismissed}}, ask.KindBriefing, "", t0.Add(time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ask.Origin{Space: "s1"}
			var a *ask.Ask
			var err error
			switch tc.kind {
			case ask.KindQuestion:
				in := questionInput("Yes", "No")
				in.Deadline = tc.in
				a, err = ask.NewQuestion("q1", in, o, fixed(t0))
			case ask.KindReview:
				in := reviewInput()
				in.Deadline = tc.in
				a, err = ask.NewReview("r1", in, o, fixed(t0))
			case ask.KindBriefing:
				in := briefingInput(2)
				in.Deadline = tc.in
				a, err = ask.NewBriefing("b1", in, o, fixed(t0))
			}
			if tc.want != "" {
				if ask.ErrorCode(err) != ask.EInputInvalid || !strings.Contains(ask.ErrorMessage(err), tc.want) {
					t.Fatalf("err = %v, want %s holding %q", err, ask.EInputInvalid, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Deadline == nil || !a.Deadline.At.Equal(tc.dueAt) || !a.DueAt().Equal(tc.dueAt) {
				t.Fatalf("deadline = %+v, due %v; want %v", a.Deadline, a.DueAt(), tc.dueAt)
			}
			if (a.Deadline.Default != nil) != (tc.in.Default != nil) {
				t.Fatalf("default = %+v, want %+v", a.Deadline.Default, tc.in.Default)
			}
			b, _ := json.Marshal(a)
			var back ask.Ask
			if err := json.Unmarshal(b, &back); err != nil || !back.Deadline.At.Equal(tc.dueAt) {
				t.Fatalf("round trip: %v, %+v", err, back.Deadline)
			}
		})
	}
}

// At the deadline the ask closes with a notice that says in words nobody answered and what the
// default was; the waiting agent's move is the default, marked as one, or a dismissal marked as
// nobody's. Before the deadline, or once a person answered, nothing is due.
func TestApplyDue(t *testing.T) {
	newQ := func(def *ask.Reply) *ask.Ask {
		in := questionInput("Yes", "No")
		in.Deadline = &ask.DeadlineInput{InSeconds: 60, Default: def}
		a, err := ask.NewQuestion("q1", in, ask.Origin{Space: "s1"}, fixed(t0))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	yes := &ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"Yes"}}

	t.Run("before the deadline nothing is due", func(t *testing.T) {
		a := newQ(yes)
		if ask.ApplyDue(a, fixed(t0.Add(59*time.Second)), time.Minute) || len(a.Thread) != 0 {
			t.Fatalf("changed: %+v", a.Thread)
		}
	})
	t.Run("with a default", func(t *testing.T) {
		a := newQ(yes)
		if !ask.ApplyDue(a, fixed(t0.Add(time.Minute)), time.Minute) {
			t.Fatal("nothing done at the deadline")
		}
		if a.Status != ask.Closed || a.ClosedAt == nil || a.DueAt() != nil {
			t.Fatalf("status %s closedAt %v due %v", a.Status, a.ClosedAt, a.DueAt())
		}
		e := a.Thread[0]
		if e.Author != ask.AuthorLoopback || e.Event != ask.NoticeDeadline ||
			e.Text != "Nobody answered by the deadline, 2026-03-01 09:01:00 UTC. The agent took the default it set: chose “Yes”." {
			t.Fatalf("notice = %+v", e)
		}
		if err := ask.CheckInvariants(a); err != nil {
			t.Fatal(err)
		}
		r, ok := ask.PersonsMove(a)
		if !ok || r.Outcome != ask.OutcomeAnswered || r.Selected[0] != "Yes" || r.By != nil || r.Deadline == nil || !r.Deadline.Default {
			t.Fatalf("move = %+v %v", r, ok)
		}
		if ask.ApplyDue(a, fixed(t0.Add(time.Hour)), time.Minute) {
			t.Fatal("a closed ask was due again")
		}
	})
	t.Run("without a default", func(t *testing.T) {
		a := newQ(nil)
		ask.ApplyDue(a, fixed(t0.Add(2*time.Minute)), time.Minute)
		if !strings.Contains(a.Thread[0].Text, "set no default, so it was told that nobody answered") {
			t.Fatalf("notice = %q", a.Thread[0].Text)
		}
		r, ok := ask.PersonsMove(a)
		if !ok || r.Outcome != ask.OutcomeDismissed || r.Deadline == nil || r.Deadline.Default {
			t.Fatalf("move = %+v %v", r, ok)
		}
	})
	t.Run("a person answered first", func(t *testing.T) {
		a := newQ(yes)
		no := ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"No"}}
		if err := ask.ApplyReplyVia(a, no, alice, ask.SurfaceSlack, fixed(t0.Add(30*time.Second))); err != nil {
			t.Fatal(err)
		}
		if ask.ApplyDue(a, fixed(t0.Add(time.Minute)), time.Minute) {
			t.Fatal("the deadline changed an answered ask")
		}
		r, _ := ask.PersonsMove(a)
		if r.Selected[0] != "No" || r.Deadline != nil {
			t.Fatalf("move = %+v", r)
		}
	})
	t.Run("the deadline first, then a person", func(t *testing.T) {
		a := newQ(yes)
		ask.ApplyDue(a, fixed(t0.Add(time.Minute)), time.Minute)
		err := ask.ApplyReplyVia(a, ask.Reply{Outcome: ask.OutcomeDismissed}, alice, ask.SurfaceInbox, fixed(t0.Add(61*time.Second)))
		if ask.ErrorCode(err) != ask.EClosed {
			t.Fatalf("late reply: %v", err)
		}
	})
	t.Run("during the agent's turn", func(t *testing.T) {
		a := newQ(nil)
		if err := ask.ApplyReply(a, ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "Why?"}, alice, fixed(t0.Add(time.Second))); err != nil {
			t.Fatal(err)
		}
		ask.ApplyDue(a, fixed(t0.Add(time.Minute)), time.Minute)
		if a.Status != ask.Closed || ask.CheckInvariants(a) != nil {
			t.Fatalf("status %s: %v", a.Status, ask.CheckInvariants(a))
		}
		r, _ := ask.PersonsMove(a)
		if r.Deadline == nil || r.Outcome != ask.OutcomeDismissed {
			t.Fatalf("move = %+v (the follow-up is not the answer)", r)
		}
	})
}

// Escalation is due once, while the ask waits for the person, and leaves it open; the deadline
// still closes it after.
func TestEscalation(t *testing.T) {
	in := questionInput("Yes", "No")
	in.Deadline = secs(3600)
	a, err := ask.NewQuestion("q1", in, ask.Origin{Space: "s1", RaisedBy: alice}, fixed(t0))
	if err != nil {
		t.Fatal(err)
	}
	esc := t0.Add(5 * time.Minute)
	a.EscalatesAt = &esc
	if !a.DueAt().Equal(esc) {
		t.Fatalf("due %v, want the escalation %v", a.DueAt(), esc)
	}
	if !ask.ApplyDue(a, fixed(esc), time.Minute) {
		t.Fatal("not escalated")
	}
	e := a.Thread[0]
	if e.Event != ask.NoticeEscalated || a.Status != ask.AwaitingHuman || e.Text != "Nobody answered within 5 minutes, so this ask was also sent to the other people of the space." {
		t.Fatalf("status %s, notice %+v", a.Status, e)
	}
	if err := ask.CheckInvariants(a); err != nil {
		t.Fatal(err)
	}
	if got, ok := ask.EscalationFor(ask.Change{Ask: a}); !ok || got.Event != ask.NoticeEscalated {
		t.Fatal("the escalating change is not an escalation")
	}
	if !a.DueAt().Equal(t0.Add(time.Hour)) || ask.ApplyDue(a, fixed(esc.Add(time.Minute)), time.Minute) {
		t.Fatalf("due %v after escalating, want the deadline; escalated twice?", a.DueAt())
	}
	if err := ask.ApplyReply(a, ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"Yes"}}, bob, fixed(esc.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if _, ok := ask.EscalationFor(ask.Change{Ask: a}); ok {
		t.Fatal("the answer is an escalation too")
	}
	if a.DueAt() != nil {
		t.Fatalf("an answered ask is due at %v", a.DueAt())
	}
}

// The people of a space are whom its live person credentials belong to, once each; an
// escalation reaches all of them but the one whose agent asked.
func TestPeopleAndRecipients(t *testing.T) {
	revoked := t0
	creds := []*ask.Credential{
		{ID: "c1", Role: ask.RoleOwner, Actor: *alice, Person: *alice},
		{ID: "c2", Role: ask.RoleAgent, Actor: ask.Actor{ID: "agent-1"}, Person: *alice},
		{ID: "c3", Role: ask.RolePerson, Actor: ask.Actor{ID: "u-bob", Name: "Bob"}, Person: ask.Actor{ID: "u-bob", Name: "Bob"}},
		{ID: "c4", Role: ask.RolePerson, Actor: *alice, Person: *alice},
		{ID: "c5", Role: ask.RolePerson, Actor: ask.Actor{ID: "u-cy"}, Person: ask.Actor{ID: "u-cy"}, RevokedAt: &revoked},
	}
	people := ask.People(creds)
	if len(people) != 2 || people[0].ID != "u-alice" || people[1].ID != "u-bob" {
		t.Fatalf("people = %+v", people)
	}
	to := ask.Recipients(&ask.Ask{RaisedBy: alice}, people)
	if len(to) != 1 || to[0].ID != "u-bob" {
		t.Fatalf("recipients = %+v", to)
	}
}

func TestEscalationSettingsRules(t *testing.T) {
	for _, tc := range []struct {
		e    ask.Escalation
		want string
	}{
		{ask.Escalation{}, ""},
		{ask.Escalation{AfterMinutes: 30, ToPeople: true}, ""},
		{ask.Escalation{AfterMinutes: 30, SlackChannel: "#ops"}, ""},
		{ask.Escalation{AfterMinutes: 30}, "needs someone to tell"},
		{ask.Escalation{AfterMinutes: -1, ToPeople: true}, "between 0 (never) and 10080"},
		{ask.Escalation{AfterMinutes: 10081, ToPeople: true}, "between 0 (never) and 10080"},
		{ask.Escalation{AfterMinutes: 5, SlackChannel: "#ops\nx"}, "one line"},
	} {
		err := tc.e.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: err = %v, want %q", tc.e, err, tc.want)
		}
	}
	var e ask.Escalation
	if err := json.Unmarshal([]byte(`{"afterMinutes":5,"toPeople":true,"bcc":"x"}`), &e); err == nil {
		t.Error("an unknown field was taken")
	}
}
