package asktest

import (
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// allBlocks is one block of each type, with every optional field set.
func allBlocks() []ask.Block {
	return []ask.Block{
		{Type: ask.BlockMarkdown, Text: "## Plan\n\n- keep **SQLite** local\n- unicode: é ✓ 日本"},
		{Type: ask.BlockCode, Code: "func main() {\n\tprintln(\"hi\")\n}\n", Language: "go", Filename: "cmd/main.go"},
		{Type: ask.BlockDiff, Diff: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n", Filename: "x"},
		{Type: ask.BlockImage, UploadID: "up_123", Caption: "the inbox, before"},
	}
}

var (
	ada   = &ask.Actor{ID: "person_ada", Name: "Ada Lovelace"}
	grace = &ask.Actor{ID: "person_grace"}
)

// fixtures returns asks of every kind that together use every field an ask can carry: thread
// entries of both authors, blocks of all four types, raisedBy, client, revises and closedAt. Each
// is in a state the rules can reach (ask.CheckInvariants holds).
func fixtures(space, prefix string) []*ask.Ask {
	closedQ := at(4 * time.Second)
	closedR := at(5 * time.Second)
	question := &ask.Ask{
		ID: prefix + "question", Kind: ask.KindQuestion, Status: ask.Closed, Waiting: true,
		Project: "loopback", Client: "claude-code 1.0", RaisedBy: ada,
		Question: &ask.QuestionPrompt{
			Question: "Which **database** for local mode?",
			Options:  []ask.Choice{{Label: "SQLite", Description: "pure Go, one file"}, {Label: "Postgres"}, {Label: "Both"}},
			Multiple: true,
			Context:  "We ship one binary.",
		},
		Thread: []ask.Entry{
			{Author: ask.AuthorHuman, Reply: &ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "Why not both?"}, By: ada, At: at(time.Second)},
			{Author: ask.AuthorAgent, Answer: "Because one is enough.", Content: allBlocks(), At: at(2 * time.Second)},
			{Author: ask.AuthorHuman, Reply: &ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"SQLite", "Both"}, Text: "SQLite first"}, By: grace, At: closedQ},
		},
		CreatedAt: base, UpdatedAt: closedQ, ClosedAt: &closedQ, Space: space,
	}
	review := &ask.Ask{
		ID: prefix + "review", Kind: ask.KindReview, Status: ask.Closed,
		Project: "loopback", Client: "cursor", RaisedBy: grace,
		Review:  &ask.ReviewPrompt{Title: "Store adapter", Content: allBlocks(), Summary: "Adds the sqlite store."},
		Revises: prefix + "earlier-review",
		Thread: []ask.Entry{
			{Author: ask.AuthorHuman, Reply: &ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "Tests?"}, At: at(3 * time.Second)},
			{Author: ask.AuthorAgent, Answer: "Yes, a conformance suite.", At: at(4 * time.Second)},
			{Author: ask.AuthorHuman, Reply: &ask.Reply{Outcome: ask.OutcomeApproved, Note: "ship it", Comments: []ask.LineComment{
				{Path: "x", Line: 1, Side: ask.SideNew, Text: "new: é ✓"}, {Path: "x", Line: 1, Side: ask.SideOld, Text: "old\nline"},
			}}, By: ada, At: closedR},
		},
		CreatedAt: at(time.Second), UpdatedAt: closedR, ClosedAt: &closedR, Space: space,
	}
	briefing := &ask.Ask{
		ID: prefix + "briefing", Kind: ask.KindBriefing, Status: ask.AwaitingAgent,
		Project: "audit",
		Briefing: &ask.BriefingPrompt{
			Title: "Findings", Summary: "Three things.",
			Sections: []ask.BriefingPromptSection{
				{Title: "Security", Points: []ask.Point{
					{ID: "1", Title: "Tokens", Detail: "stored hashed", Content: allBlocks()},
					{ID: "2", Title: "Tickets"},
				}},
				{Points: []ask.Point{{ID: "3", Title: "Logs", Detail: "too chatty"}}},
			},
		},
		Thread: []ask.Entry{
			{Author: ask.AuthorHuman, Reply: &ask.Reply{Outcome: ask.OutcomeResponded, Points: []ask.PointReply{
				{Point: "1", Text: "Which hash?"}, {Point: "2", Resolved: true},
			}}, By: ada, At: at(10 * time.Second)},
			{Author: ask.AuthorAgent, Answer: "SHA-256; details below.", Point: "1", Content: allBlocks()[:2],
				Points: []ask.Point{
					{ID: "1.1", Title: "Why fast", Detail: "long random tokens", Content: allBlocks()[3:]},
					{ID: "1.2", Title: "Rotation"},
				}, At: at(11 * time.Second)},
			{Author: ask.AuthorHuman, Reply: &ask.Reply{Outcome: ask.OutcomeResponded, Points: []ask.PointReply{
				{Point: "1.1", Resolved: true}, {Point: "1.2", Text: "How often?", Resolved: false}, {Point: "3", Text: "ok", Resolved: true},
			}}, At: at(12 * time.Second)},
		},
		CreatedAt: at(9 * time.Second), UpdatedAt: at(12 * time.Second), Space: space, CredentialID: "cred_briefing",
	}
	dismissed := &ask.Ask{
		ID: prefix + "dismissed", Kind: ask.KindReview, Status: ask.AwaitingHuman,
		Project:   "loopback",
		Review:    &ask.ReviewPrompt{Title: "Nothing yet", Content: allBlocks()[:1]},
		Thread:    []ask.Entry{},
		CreatedAt: at(20 * time.Second), UpdatedAt: at(20 * time.Second), Space: space,
	}
	fresh, err := ask.NewQuestion(prefix+"fresh", ask.QuestionInput{Question: "Proceed?", Project: "p"},
		ask.Origin{Space: space, CredentialID: "cred_fresh"}, func() time.Time { return at(30 * time.Second) })
	if err != nil {
		panic(err)
	}
	return []*ask.Ask{question, review, briefing, dismissed, fresh}
}

// clone deep-copies an ask, so that a test keeps what it wrote apart from what a store may change.
func clone(a *ask.Ask) *ask.Ask {
	c := *a
	if a.RaisedBy != nil {
		r := *a.RaisedBy
		c.RaisedBy = &r
	}
	if a.ClosedAt != nil {
		t := *a.ClosedAt
		c.ClosedAt = &t
	}
	if a.Thread != nil {
		c.Thread = append([]ask.Entry{}, a.Thread...)
	}
	return &c
}

// question builds an open question for the service.
func question(text string) ask.QuestionInput {
	return ask.QuestionInput{
		Question: text,
		Options:  []ask.Choice{{Label: "Yes"}, {Label: "No"}},
		Project:  "loopback",
	}
}

var answeredYes = ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"Yes"}}
