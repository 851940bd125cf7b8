package ask_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// A briefing from first reply to close: the person writes on one point and resolves another, the
// agent answers and splits the point it was asked about, and the person resolves what is left.
func ExampleApplyReply() {
	t := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { t = t.Add(time.Second); return t }

	b, err := ask.NewBriefing("b1", ask.BriefingInput{
		Title:   "Audit findings",
		Project: "loopback",
		Sections: []ask.BriefingSection{
			{Title: "Security", Points: []ask.BriefingPoint{{Title: "Tokens stored in plain text"}, {Title: "No rate limit"}}},
			{Title: "Speed", Points: []ask.BriefingPoint{{Title: "Slow snapshot"}}},
		},
	}, ask.Origin{Space: "s1"}, now)
	if err != nil {
		panic(err)
	}
	for _, s := range b.Briefing.Sections {
		for _, p := range s.Points {
			fmt.Printf("%s. %s\n", p.ID, p.Title)
		}
	}

	// A briefing takes no follow_up: the person writes on points instead.
	err = ask.ApplyReply(b, ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "Why?"}, nil, now)
	fmt.Println(ask.ErrorCode(err))

	err = ask.ApplyReply(b, ask.Reply{Outcome: ask.OutcomeResponded, Points: []ask.PointReply{
		{Point: "1", Text: "How bad is it?"},
		{Point: "2", Resolved: true},
	}}, &ask.Actor{ID: "u1"}, now)
	fmt.Println(b.Status, ask.BriefingPoints(b).Pending(), err)

	// The person may not move again until the agent has answered.
	err = ask.ApplyReply(b, ask.Reply{Outcome: ask.OutcomeResponded, Points: []ask.PointReply{{Point: "3", Resolved: true}}}, nil, now)
	fmt.Println(ask.ErrorCode(err))

	err = ask.AnswerBriefing(b, ask.BriefingAnswerInput{AskID: "b1", Answers: []ask.PointAnswer{{
		Point: "1", Answer: "Bad: anyone with the database has every token.",
		Points: []ask.BriefingPoint{{Title: "Hash tokens"}, {Title: "Rotate existing tokens"}},
	}}}, now)
	fmt.Println(b.Status, ask.BriefingPoints(b).Order, err)

	err = ask.ApplyReply(b, ask.Reply{Outcome: ask.OutcomeResponded, Points: []ask.PointReply{
		{Point: "1", Resolved: true}, // and so 1.1 and 1.2
		{Point: "3", Text: "Fine for now.", Resolved: true},
	}}, nil, now)
	fmt.Println(b.Status, b.ClosedAt.Format(time.TimeOnly), err)

	last, _ := json.Marshal(b.Thread[len(b.Thread)-1].Reply)
	fmt.Println(string(last))
	// Output:
	// 1. Tokens stored in plain text
	// 2. No rate limit
	// 3. Slow snapshot
	// reply.invalid
	// awaiting_agent [1] <nil>
	// ask.awaiting_agent
	// awaiting_human [1 2 3 1.1 1.2] <nil>
	// closed 09:00:04 <nil>
	// {"outcome":"responded","points":[{"point":"1","resolved":true},{"point":"3","text":"Fine for now.","resolved":true}]}
}

// A question's reply must pick among the choices offered, and only one unless several are allowed.
func ExampleNewQuestion() {
	now := func() time.Time { return time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC) }
	q, _ := ask.NewQuestion("q1", ask.QuestionInput{
		Question: "Which database?",
		Options:  []ask.Choice{{Label: "SQLite"}, {Label: "Postgres"}},
		Project:  "loopback",
	}, ask.Origin{}, now)

	err := ask.ApplyReply(q, ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"SQLite", "Postgres"}}, nil, now)
	fmt.Println(err)
	err = ask.ApplyReply(q, ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"SQLite"}, Text: "For now."}, nil, now)
	fmt.Println(q.Status, err)
	err = ask.ApplyReply(q, ask.Reply{Outcome: ask.OutcomeDismissed}, nil, now)
	fmt.Println(err)
	// Output:
	// reply.invalid: selected: this question takes one choice (got 2)
	// closed <nil>
	// ask.closed: ask q1 is closed
}
