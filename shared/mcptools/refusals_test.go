package mcptools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
)

// TestRefusals: arguments that break the contract's rules, answers out of turn, and asks that are
// not this space's are tool errors (isError) that name the field and the rule; nothing is created
// or changed; and the same session goes on working.
func TestRefusals(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	c := d.connect(t, clientOpts{})
	elsewhere := ask.Origin{Space: "elsewhere", Client: "other 1", RaisedBy: &ask.Actor{ID: "mallory"}}

	with := func(base map[string]any, key string, value any) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		if value == nil {
			delete(out, key)
		} else {
			out[key] = value
		}
		return out
	}
	fixed := func(tool string, args map[string]any) func(*testing.T) (string, map[string]any, string) {
		return func(*testing.T) (string, map[string]any, string) { return tool, args, "" }
	}

	tests := []struct {
		name string
		// setup returns the call, and the id of an ask the call must leave as it was ("" if none).
		setup     func(t *testing.T) (tool string, args map[string]any, askID string)
		wantCode  string
		wantWords []string // what the message must say: the field, and the rule
	}{
		{"one option", fixed("ask_question", with(question("p"), "options", []map[string]any{{"label": "Only"}})),
			ask.EInputInvalid, []string{"options", "between 2 and 6", "got 1"}},
		{"seven options", fixed("ask_question", with(question("p"), "options", []map[string]any{{"label": "1"}, {"label": "2"}, {"label": "3"}, {"label": "4"}, {"label": "5"}, {"label": "6"}, {"label": "7"}})),
			ask.EInputInvalid, []string{"options", "between 2 and 6", "got 7"}},
		{"81-character label", fixed("ask_question", with(question("p"), "options", []map[string]any{{"label": strings.Repeat("é", 81)}, {"label": "b"}})),
			ask.EInputInvalid, []string{"options[0].label", "81 characters", "at most 80"}},
		{"the same label twice", fixed("ask_question", with(question("p"), "options", []map[string]any{{"label": "a"}, {"label": "a"}})),
			ask.EInputInvalid, []string{"options[1].label", "twice"}},
		{"missing project", fixed("ask_question", with(question("p"), "project", nil)),
			ask.EInputInvalid, []string{"project", "required"}},
		{"empty question", fixed("ask_question", with(question("p"), "question", "")),
			ask.EInputInvalid, []string{"question", "required"}},
		{"unknown field", fixed("ask_question", with(question("p"), "colour", "red")),
			ask.EInputInvalid, []string{`unknown field "colour"`}},
		{"unknown field in a choice", fixed("ask_question", with(question("p"), "options", []map[string]any{{"label": "a", "value": 1}, {"label": "b"}})),
			ask.EInputInvalid, []string{`unknown field "value"`}},
		{"wrong type", fixed("ask_question", with(question("p"), "options", "SQLite or Redis")),
			ask.EInputInvalid, []string{"options"}},
		{"201-character review title", fixed("request_review", with(review("p", ""), "title", strings.Repeat("t", 201))),
			ask.EInputInvalid, []string{"title", "at most 200"}},
		{"review without content", fixed("request_review", with(review("p", ""), "content", []map[string]any{})),
			ask.EInputInvalid, []string{"content", "at least one block"}},
		{"block of an unknown type", fixed("request_review", with(review("p", ""), "content", []map[string]any{{"type": "video", "text": "x"}})),
			ask.EInputInvalid, []string{"type", "markdown, code, diff, image"}},
		{"review revising a question", func(t *testing.T) (string, map[string]any, string) {
			id := d.newQuestion(t, asAgent)
			return "request_review", review("p", id), id
		}, ask.EInputInvalid, []string{"revises", "not a review"}},
		{"review revising another space's review", func(t *testing.T) (string, map[string]any, string) {
			a, err := d.Service.RequestReview(context.Background(), ask.ReviewInput{Title: "x", Content: []ask.Block{{Type: "markdown", Text: "x"}}, Project: "p"}, elsewhere)
			if err != nil {
				t.Fatal(err)
			}
			return "request_review", review("p", a.ID), ""
		}, ask.EInputInvalid, []string{"revises", "no review"}},
		{"briefing with 51 points", fixed("send_briefing", briefing("p", 51)),
			ask.EInputInvalid, []string{"sections", "at most 50", "got 51"}},
		{"briefing point without a title", fixed("send_briefing", with(briefing("p", 1), "sections", []map[string]any{{"points": []map[string]any{{"detail": "x"}}}})),
			ask.EInputInvalid, []string{"sections[0].points[0].title", "required"}},
		{"answer_follow_up during the person's turn", func(t *testing.T) (string, map[string]any, string) {
			id := d.newQuestion(t, asAgent)
			return "answer_follow_up", map[string]any{"askId": id, "answer": "Early."}, id
		}, ask.EHumansTurn, []string{"waiting for the person", "await_reply"}},
		{"answer_follow_up on a closed ask", func(t *testing.T) (string, map[string]any, string) {
			id := d.newQuestion(t, asAgent)
			d.reply(t, id, map[string]any{"outcome": "dismissed"})
			return "answer_follow_up", map[string]any{"askId": id, "answer": "Late."}, id
		}, ask.EClosed, []string{"closed"}},
		{"answer_follow_up on a briefing", func(t *testing.T) (string, map[string]any, string) {
			id := d.newBriefing(t, 1)
			d.reply(t, id, map[string]any{"outcome": "responded", "points": []map[string]any{{"point": "1", "text": "?"}}})
			return "answer_follow_up", map[string]any{"askId": id, "answer": "x"}, id
		}, ask.EAnswerInvalid, []string{"answer_briefing"}},
		{"answer_follow_up without an answer", func(t *testing.T) (string, map[string]any, string) {
			id := d.newQuestion(t, asAgent)
			d.reply(t, id, map[string]any{"outcome": "follow_up", "question": "?"})
			return "answer_follow_up", map[string]any{"askId": id, "answer": ""}, id
		}, ask.EAnswerInvalid, []string{"answer", "required"}},
		{"answer_briefing leaving a written-on point unanswered", func(t *testing.T) (string, map[string]any, string) {
			id := d.newBriefing(t, 3)
			d.reply(t, id, map[string]any{"outcome": "responded", "points": []map[string]any{{"point": "1", "text": "Why?"}, {"point": "2", "text": "And this?"}}})
			return "answer_briefing", map[string]any{"askId": id, "answers": []map[string]any{{"point": "1", "answer": "Because."}}}, id
		}, ask.EAnswerInvalid, []string{"point 2", "answer every point"}},
		{"answer_briefing on a point that does not exist", func(t *testing.T) (string, map[string]any, string) {
			id := d.newBriefing(t, 1)
			d.reply(t, id, map[string]any{"outcome": "responded", "points": []map[string]any{{"point": "1", "text": "Why?"}}})
			return "answer_briefing", map[string]any{"askId": id, "answers": []map[string]any{{"point": "1", "answer": "a"}, {"point": "9", "answer": "b"}}}, id
		}, ask.EAnswerInvalid, []string{"answers[1].point", `no point "9"`}},
		{"answer_briefing during the person's turn", func(t *testing.T) (string, map[string]any, string) {
			id := d.newBriefing(t, 1)
			return "answer_briefing", map[string]any{"askId": id, "answers": []map[string]any{{"point": "1", "answer": "a"}}}, id
		}, ask.EHumansTurn, []string{"waiting for the person"}},
		{"await_reply on an unknown ask", fixed("await_reply", map[string]any{"askId": "no-such-ask"}),
			ask.ENotFound, []string{"no-such-ask"}},
		{"await_reply on another space's ask", func(t *testing.T) (string, map[string]any, string) {
			return "await_reply", map[string]any{"askId": d.newQuestion(t, elsewhere)}, ""
		}, ask.ENotFound, []string{"there is no ask"}},
		{"await_reply without askId", fixed("await_reply", map[string]any{}),
			ask.ERequestInvalid, []string{"askId", "required"}},
		{"answer_follow_up on another space's ask", func(t *testing.T) (string, map[string]any, string) {
			id := d.newQuestion(t, elsewhere)
			if _, err := d.Service.Reply(context.Background(), "elsewhere", id, ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "?"}, nil); err != nil {
				t.Fatal(err)
			}
			return "answer_follow_up", map[string]any{"askId": id, "answer": "Not yours."}, ""
		}, ask.ENotFound, []string{"there is no ask"}},
		{"get_inbox_link of another space's ask", func(t *testing.T) (string, map[string]any, string) {
			return "get_inbox_link", map[string]any{"askId": d.newQuestion(t, elsewhere)}, ""
		}, ask.ENotFound, []string{"there is no ask"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, args, id := tt.setup(t)
			before := d.askCount(t)
			var was askView
			if id != "" {
				was = d.getAsk(t, id)
			}

			msg := toolErr(t, callTool(t, c, tool, args))
			if !strings.HasPrefix(msg, tt.wantCode+": ") {
				t.Errorf("message %q does not start with the code %s", msg, tt.wantCode)
			}
			for _, w := range tt.wantWords {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not say %q", msg, w)
				}
			}

			if n := d.askCount(t); n != before {
				t.Errorf("the refused call left %d asks, there were %d", n, before)
			}
			if id != "" {
				now := d.getAsk(t, id)
				a, _ := json.Marshal(was)
				b, _ := json.Marshal(now)
				if string(a) != string(b) {
					t.Errorf("the refused call changed the ask:\nbefore %s\nafter  %s", a, b)
				}
			}
			// The session goes on working.
			if res := callTool(t, c, "get_inbox_link", map[string]any{}); res.IsError {
				t.Fatalf("after a refusal get_inbox_link failed: %s", resultText(res))
			}
		})
	}
	// And a whole question still goes through on the same client.
	answerAndCheck(t, d, c)
}
