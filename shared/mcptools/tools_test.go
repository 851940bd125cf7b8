package mcptools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/contract"
)

// asAgent is the origin of asks the tests create directly through the service.
var asAgent = ask.Origin{Space: testSpace, Client: "setup 1", RaisedBy: &owner}

// newQuestion creates an open question directly, for tests about what comes after.
func (d *deployment) newQuestion(t *testing.T, o ask.Origin) string {
	t.Helper()
	a, err := d.Service.AskQuestion(context.Background(), ask.QuestionInput{
		Question: "Go on?", Options: []ask.Choice{{Label: "Yes"}, {Label: "No"}}, Project: "setup",
	}, o)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// newBriefing creates an open briefing of n points directly.
func (d *deployment) newBriefing(t *testing.T, n int) string {
	t.Helper()
	points := make([]ask.BriefingPoint, n)
	for i := range points {
		points[i] = ask.BriefingPoint{Title: "Point"}
	}
	a, err := d.Service.SendBriefing(context.Background(), ask.BriefingInput{
		Title: "Setup", Sections: []ask.BriefingSection{{Points: points}}, Project: "setup",
	}, asAgent)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// TestBlockingTools: each blocking tool waits for the person's move and returns it as a ToolReply,
// as structuredContent and as the same JSON in text; the ask shows an agent waiting meanwhile.
func TestBlockingTools(t *testing.T) {
	tests := []struct {
		tool string
		// setup prepares an ask when the tool works on one, and returns the arguments and its id
		// ("" when the call creates the ask).
		setup func(t *testing.T, d *deployment) (args map[string]any, askID string)
		reply map[string]any // what the person replies
	}{
		{"ask_question",
			func(t *testing.T, d *deployment) (map[string]any, string) { return question("loopback"), "" },
			map[string]any{"outcome": "answered", "selected": []string{"SQLite"}, "text": "it is one file"}},
		{"request_review",
			func(t *testing.T, d *deployment) (map[string]any, string) { return review("loopback", ""), "" },
			map[string]any{"outcome": "approved", "note": "ship it"}},
		{"send_briefing",
			func(t *testing.T, d *deployment) (map[string]any, string) { return briefing("loopback", 2), "" },
			map[string]any{"outcome": "responded", "points": []map[string]any{{"point": "1", "text": "why?"}, {"point": "2", "resolved": true}}}},
		{"answer_follow_up",
			func(t *testing.T, d *deployment) (map[string]any, string) {
				id := d.newQuestion(t, asAgent)
				d.reply(t, id, map[string]any{"outcome": "follow_up", "question": "What happens to the data?"})
				return map[string]any{"askId": id, "answer": "It is migrated.", "content": []map[string]any{{"type": "code", "code": "migrate()", "language": "go"}}}, id
			},
			map[string]any{"outcome": "answered", "selected": []string{"Yes"}}},
		{"answer_briefing",
			func(t *testing.T, d *deployment) (map[string]any, string) {
				id := d.newBriefing(t, 2)
				d.reply(t, id, map[string]any{"outcome": "responded", "points": []map[string]any{{"point": "1", "text": "why?"}}})
				return map[string]any{"askId": id, "answers": []map[string]any{{"point": "1", "answer": "Because."}}}, id
			},
			map[string]any{"outcome": "responded", "points": []map[string]any{{"point": "1", "resolved": true}, {"point": "2", "resolved": true}}}},
		{"await_reply",
			func(t *testing.T, d *deployment) (map[string]any, string) {
				id := d.newQuestion(t, asAgent)
				return map[string]any{"askId": id}, id
			},
			map[string]any{"outcome": "dismissed"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			d := newTestDeployment(t, deployOpts{})
			c := d.connect(t, clientOpts{})
			args, id := tt.setup(t, d)

			p := startTool(t, c, tt.tool, args)
			if id == "" {
				id = d.waitingAsk(t, 1).ID
			} else {
				d.waitFor(t, id, true)
			}
			if a := d.getAsk(t, id); a.Status != string(ask.AwaitingHuman) {
				t.Fatalf("while the call waits the ask is %s, want awaiting_human", a.Status)
			}
			if p.returned() {
				t.Fatalf("the call returned before the person replied: %v %v", p.err, p.res)
			}

			d.reply(t, id, tt.reply)
			tr := toolReply(t, p.result(t))
			if tr.AskID != id {
				t.Errorf("askId %q, want %q", tr.AskID, id)
			}
			got, _ := json.Marshal(tr.Reply)
			want, _ := json.Marshal(tt.reply)
			if !jsonEqual(t, got, want) {
				t.Errorf("reply %s, want what the person sent: %s", got, want)
			}
			d.waitFor(t, id, false)
		})
	}
}

// TestQuestionAnsweredWithSeveralChoices: the whole of a multiple-choice answer comes back.
func TestQuestionAnsweredWithSeveralChoices(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	c := d.connect(t, clientOpts{})
	q := question("loopback")
	q["multiple"] = true
	q["context"] = "We have **both** running."
	p := startTool(t, c, "ask_question", q)
	a := d.waitingAsk(t, 1)
	if a.Kind != "question" || a.Project != "loopback" {
		t.Fatalf("the ask is %+v", a)
	}
	d.reply(t, a.ID, map[string]any{"outcome": "answered", "selected": []string{"Redis", "SQLite"}, "text": "both, for now"})
	tr := toolReply(t, p.result(t))
	if tr.Reply.Outcome != ask.OutcomeAnswered || strings.Join(tr.Reply.Selected, ",") != "Redis,SQLite" || tr.Reply.Text != "both, for now" {
		t.Fatalf("reply %+v", tr.Reply)
	}
	if got := d.getAsk(t, a.ID); got.Status != string(ask.Closed) {
		t.Fatalf("after the answer the ask is %s, want closed", got.Status)
	}
	d.waitFor(t, a.ID, false)
}

// TestReviewFollowUpThenApproved: review → the person asks back → answer_follow_up records the
// answer and waits again → approved.
func TestReviewFollowUpThenApproved(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	c := d.connect(t, clientOpts{})

	p := startTool(t, c, "request_review", review("loopback", ""))
	id := d.waitingAsk(t, 1).ID
	d.reply(t, id, map[string]any{"outcome": "follow_up", "question": "Why not Redis?"})
	tr := toolReply(t, p.result(t))
	if tr.Reply.Outcome != ask.OutcomeFollowUp || tr.Reply.Question != "Why not Redis?" {
		t.Fatalf("reply %+v, want the follow_up", tr.Reply)
	}
	a := d.getAsk(t, id)
	if a.Status != string(ask.AwaitingAgent) {
		t.Fatalf("after a follow_up the review is %s, want awaiting_agent", a.Status)
	}
	d.waitFor(t, id, false)

	p = startTool(t, c, "answer_follow_up", map[string]any{
		"askId": id, "answer": "One process fewer to run.",
		"content": []map[string]any{{"type": "markdown", "text": "See the *ops* notes."}},
	})
	d.waitFor(t, id, true)
	a = d.getAsk(t, id)
	if a.Status != string(ask.AwaitingHuman) || len(a.Thread) != 2 || a.Thread[1]["author"] != "agent" || a.Thread[1]["answer"] != "One process fewer to run." {
		t.Fatalf("the answer was not recorded: %s %v", a.Status, a.Thread)
	}
	if p.returned() {
		t.Fatal("answer_follow_up returned before the person's next move")
	}
	d.reply(t, id, map[string]any{"outcome": "approved"})
	tr = toolReply(t, p.result(t))
	if tr.AskID != id || tr.Reply.Outcome != ask.OutcomeApproved {
		t.Fatalf("ToolReply %+v, want approved on %s", tr, id)
	}
	if a := d.getAsk(t, id); a.Status != string(ask.Closed) || len(a.Thread) != 3 {
		t.Fatalf("the review ends %s with %d turns, want closed with 3", a.Status, len(a.Thread))
	}
	d.waitFor(t, id, false)
}

// TestReviewRevisesReview: changes requested, then a revised review naming the first.
func TestReviewRevisesReview(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	c := d.connect(t, clientOpts{})

	p := startTool(t, c, "request_review", review("loopback", ""))
	first := d.waitingAsk(t, 1).ID
	d.reply(t, first, map[string]any{"outcome": "changes_requested", "feedback": "Keep Redis as a fallback."})
	tr := toolReply(t, p.result(t))
	if tr.Reply.Outcome != ask.OutcomeChangesRequested || tr.Reply.Feedback != "Keep Redis as a fallback." {
		t.Fatalf("reply %+v", tr.Reply)
	}
	if a := d.getAsk(t, first); a.Status != string(ask.Closed) {
		t.Fatalf("changes_requested leaves the review %s, want closed", a.Status)
	}

	p = startTool(t, c, "request_review", review("loopback", first))
	second := d.waitingAsk(t, 1)
	if second.ID == first || second.Revises != first {
		t.Fatalf("the revision is %s revising %q, want a new review revising %s", second.ID, second.Revises, first)
	}
	d.reply(t, second.ID, map[string]any{"outcome": "approved", "note": "Better."})
	tr = toolReply(t, p.result(t))
	if tr.AskID != second.ID || tr.Reply.Outcome != ask.OutcomeApproved || tr.Reply.Note != "Better." {
		t.Fatalf("ToolReply %+v", tr)
	}
}

// TestBriefingFlow: briefing → responded (words on 1, 2 resolved) → answer_briefing splitting 1
// into 1.1 and 1.2 → responded resolving everything → closed.
func TestBriefingFlow(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	c := d.connect(t, clientOpts{})

	p := startTool(t, c, "send_briefing", briefing("loopback", 2))
	id := d.waitingAsk(t, 1).ID
	d.reply(t, id, map[string]any{"outcome": "responded", "points": []map[string]any{
		{"point": "1", "text": "What would that take?"}, {"point": "2", "resolved": true},
	}})
	tr := toolReply(t, p.result(t))
	if tr.Reply.Outcome != ask.OutcomeResponded || len(tr.Reply.Points) != 2 || tr.Reply.Points[0].Text != "What would that take?" || !tr.Reply.Points[1].Resolved {
		t.Fatalf("reply %+v", tr.Reply)
	}
	if a := d.getAsk(t, id); a.Status != string(ask.AwaitingAgent) {
		t.Fatalf("the briefing is %s, want awaiting_agent", a.Status)
	}

	p = startTool(t, c, "answer_briefing", map[string]any{"askId": id, "answers": []map[string]any{{
		"point": "1", "answer": "Two steps:",
		"points": []map[string]any{{"title": "Move the data"}, {"title": "Switch the reads", "detail": "behind a flag"}},
	}}})
	// The answer's turn is one change (the ask awaiting the person, and followed): wait for it,
	// not for waiting alone, which send_briefing's call may still hold while it lets go.
	eventually(t, "the answer to be recorded", func() bool { return d.getAsk(t, id).Status == string(ask.AwaitingHuman) })
	a := d.getAsk(t, id)
	if !a.Waiting {
		t.Fatal("after the answer nobody follows the briefing")
	}
	last := a.Thread[len(a.Thread)-1]
	subs, _ := last["points"].([]any)
	if last["author"] != "agent" || last["point"] != "1" || len(subs) != 2 ||
		subs[0].(map[string]any)["id"] != "1.1" || subs[1].(map[string]any)["id"] != "1.2" {
		t.Fatalf("the answer's sub-points are not 1.1 and 1.2: %v", last)
	}
	if p.returned() {
		t.Fatal("answer_briefing returned before the person's next move")
	}

	done := map[string]any{"outcome": "responded", "points": []map[string]any{
		{"point": "1", "resolved": true}, {"point": "1.1", "resolved": true}, {"point": "1.2", "text": "fine", "resolved": true},
	}}
	d.reply(t, id, done)
	tr = toolReply(t, p.result(t))
	got, _ := json.Marshal(tr.Reply)
	want, _ := json.Marshal(done)
	if tr.AskID != id || !jsonEqual(t, got, want) {
		t.Fatalf("ToolReply %s on %s, want %s on %s", got, tr.AskID, want, id)
	}
	if a := d.getAsk(t, id); a.Status != string(ask.Closed) {
		t.Fatalf("with every point resolved the briefing is %s, want closed", a.Status)
	}
	d.waitFor(t, id, false)
}

// TestGetInboxLink: the inbox, or one ask in it, at the deployment's public URL.
func TestGetInboxLink(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	c := d.connect(t, clientOpts{})
	id := d.newQuestion(t, asAgent)
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, d.URL + "/"},
		{map[string]any{"askId": id}, d.URL + "/asks/" + id},
	} {
		res := callTool(t, c, "get_inbox_link", tt.args)
		if res.IsError {
			t.Fatalf("get_inbox_link %v: %s", tt.args, resultText(res))
		}
		structured, _ := json.Marshal(res.StructuredContent)
		if err := contract.ValidateModel("InboxLink", structured); err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(t, structured, []byte(resultText(res))) {
			t.Fatalf("text %s is not structuredContent %s", resultText(res), structured)
		}
		var link struct{ URL string }
		json.Unmarshal(structured, &link)
		if link.URL != tt.want {
			t.Fatalf("url %q, want %q", link.URL, tt.want)
		}
	}
}

// answerAndCheck is used by tests that end with a question answered on a client.
func answerAndCheck(t *testing.T, d *deployment, c *client.Client) {
	t.Helper()
	before := len(mustOpen(t, d))
	p := startTool(t, c, "ask_question", question("still-usable"))
	a := d.waitingAsk(t, before+1)
	d.reply(t, a.ID, map[string]any{"outcome": "answered", "selected": []string{"Redis"}})
	if tr := toolReply(t, p.result(t)); tr.AskID != a.ID || tr.Reply.Selected[0] != "Redis" {
		t.Fatalf("ToolReply %+v", tr)
	}
}

func mustOpen(t *testing.T, d *deployment) []askView {
	open, _ := d.snapshot(t)
	return open
}
