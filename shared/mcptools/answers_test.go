package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// tom is a teammate: a person credential of the same space, who answers in the inbox.
var tom = ask.Actor{ID: "person:tom", Name: "Tom Teammate"}

// replyAs replies on an ask with a person's token, as the inbox does.
func (d *deployment) replyAs(t *testing.T, token, id string, reply any) {
	t.Helper()
	if status, body := d.api(t, token, "POST", "/api/v1/asks/"+id+"/reply", reply); status != http.StatusOK {
		t.Fatalf("replying on %s: %d %s", id, status, body)
	}
}

// agent issues an agent credential of the owner's and returns its token and credential id.
func (d *deployment) agent(t *testing.T, name string) (token, credID string) {
	t.Helper()
	tok, c, err := gate.Issue(context.Background(), d.DB, ask.Credential{Space: testSpace, Role: ask.RoleAgent,
		Actor: ask.Actor{ID: "agent:" + name, Name: name}, Person: owner})
	if err != nil {
		t.Fatal(err)
	}
	return tok, c.ID
}

// TestReplyInWords: every result that carries a person's reply says in words who answered (the
// replying person's name), what they decided and what to do next, with the askId; the JSON stays
// the contract's ToolReply (toolReply checks both blocks).
func TestReplyInWords(t *testing.T) {
	cases := []struct {
		name  string
		tool  string
		args  map[string]any
		reply map[string]any
		by    string // token; "" the owner's
		says  []string
	}{
		{"answered", "ask_question", question("words"), map[string]any{"outcome": "answered", "selected": []string{"SQLite"}, "text": "ship it"},
			"tom", []string{"Tom Teammate answered", "“SQLite”", "“ship it”", "own reply"}},
		{"approved", "request_review", review("words", ""), map[string]any{"outcome": "approved", "note": "nice"},
			"", []string{"Olga Owner approved the review", "“nice”", "go ahead"}},
		{"changes_requested", "request_review", review("words", ""), map[string]any{"outcome": "changes_requested", "feedback": "rename x"},
			"", []string{"Olga Owner requested changes", "“rename x”", "request_review", `"revises": "%s"`}},
		{"follow_up", "ask_question", question("words"), map[string]any{"outcome": "follow_up", "question": "why?"},
			"tom", []string{"Tom Teammate asked back", "“why?”", `answer_follow_up {"askId": "%s"`}},
		{"dismissed", "ask_question", question("words"), map[string]any{"outcome": "dismissed"},
			"", []string{"Olga Owner dismissed", "do not wait on it"}},
		{"responded", "send_briefing", briefing("words", 2), map[string]any{"outcome": "responded", "points": []map[string]any{{"point": "1", "text": "how?"}, {"point": "2", "resolved": true}}},
			"", []string{"Olga Owner replied on the briefing", "on point 1: “how?”", "resolved point 2", `answer_briefing {"askId": "%s"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := newTestDeployment(t, deployOpts{})
			tomToken := d.issue(t, testSpace, ask.RolePerson, tom, tom)
			c := d.connect(t, clientOpts{})
			p := startTool(t, c, tc.tool, tc.args)
			id := d.waitingAsk(t, 1).ID
			token := d.Token
			if tc.by == "tom" {
				token = tomToken
			}
			d.replyAs(t, token, id, tc.reply)
			words := replyWords(t, p.result(t))
			for _, s := range tc.says {
				if strings.Contains(s, "%s") {
					s = fmt.Sprintf(s, id)
				}
				if !strings.Contains(words, s) {
					t.Errorf("the words do not say %q:\n%s", s, words)
				}
			}
			if !strings.Contains(words, id) {
				t.Errorf("the words do not name the ask %s:\n%s", id, words)
			}
		})
	}
}

// TestReplyWordsSayWhere: a reply given on another surface than the inbox (Slack, email, a
// notification) reaches the waiting agent the same way, and its words say where it was given.
func TestReplyWordsSayWhere(t *testing.T) {
	for _, tc := range []struct {
		via  ask.Surface
		says string
	}{
		{ask.SurfaceInbox, "given in Loopback's inbox"},
		{ask.SurfaceSlack, "given in Slack"},
		{ask.SurfaceEmail, "given from Loopback's email"},
		{ask.SurfacePush, "given from a Loopback notification"},
	} {
		t.Run(string(tc.via), func(t *testing.T) {
			d := newTestDeployment(t, deployOpts{})
			c := d.connect(t, clientOpts{})
			p := startTool(t, c, "ask_question", question("where"))
			id := d.waitingAsk(t, 1).ID
			r := ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"SQLite"}}
			if _, err := d.Service.ReplyVia(context.Background(), testSpace, id, r, &tom, tc.via); err != nil {
				t.Fatal(err)
			}
			if words := replyWords(t, p.result(t)); !strings.Contains(words, tc.says) || !strings.Contains(words, "Tom Teammate answered") {
				t.Errorf("the words do not say %q by Tom:\n%s", tc.says, words)
			}
		})
	}
}

// TestTaskCompletionLeadsToAwaitReply: a completed task's result says who answered and that
// await_reply with its askId returns the reply at once; and await_reply, called by a client that
// declares tasks, answers at once with the reply as its own result (no task to poll).
func TestTaskCompletionLeadsToAwaitReply(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	created := d.modern(t, modernCall{method: "tools/call", tasks: true, params: map[string]any{"name": "request_review", "arguments": review("tasks", "")}}).result(t)
	if created["resultType"] != "task" {
		t.Fatalf("request_review as a task: %v", created)
	}
	a := d.waitingAsk(t, 1)
	d.reply(t, a.ID, map[string]any{"outcome": "approved"})
	done := d.modern(t, modernCall{method: "tasks/get", tasks: true, params: map[string]any{"taskId": created["taskId"]}}).result(t)
	words := firstText(t, done["result"])
	for _, s := range []string{"Olga Owner approved the review", "own reply to your ask " + a.ID, `call await_reply with {"askId": "` + a.ID + `"}`, "at once"} {
		if !strings.Contains(words, s) {
			t.Errorf("the completed task's words do not say %q:\n%s", s, words)
		}
	}

	got := d.modern(t, modernCall{method: "tools/call", tasks: true, params: map[string]any{"name": "await_reply", "arguments": map[string]any{"askId": a.ID}}}).result(t)
	if got["resultType"] != "complete" || got["isError"] == true {
		t.Fatalf("await_reply on an answered ask, with tasks declared, did not answer at once: %v", got)
	}
	sc, _ := json.Marshal(got["structuredContent"])
	if !jsonEqual(t, sc, []byte(`{"askId":"`+a.ID+`","reply":{"outcome":"approved"}}`)) {
		t.Fatalf("await_reply's structuredContent %s", sc)
	}
	if w := firstText(t, got); !strings.Contains(w, "Olga Owner approved the review") || strings.Contains(w, "background task") {
		t.Fatalf("await_reply's words: %s", w)
	}
}

// firstText is the first text block of a result as the wire gives it.
func firstText(t *testing.T, result any) string {
	t.Helper()
	m, _ := result.(map[string]any)
	content, _ := m["content"].([]any)
	if len(content) != 3 {
		t.Fatalf("want the words and the JSON as two text blocks, and the words as a resource: %v", result)
	}
	first, _ := content[0].(map[string]any)
	s, _ := first["text"].(string)
	return s
}

// TestOnlyItsAgentActs: another agent of the same space gets the words of a missing ask from
// await_reply and answer_follow_up, and cannot revise another's review; the agent that raised
// the ask gets its reply, and its turn records its credential.
func TestOnlyItsAgentActs(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	aToken, aCred := d.agent(t, "a")
	bToken, _ := d.agent(t, "b")
	a := d.connect(t, clientOpts{Token: aToken})
	b := d.connect(t, clientOpts{Token: bToken})

	p := startTool(t, a, "ask_question", question("secret"))
	id := d.waitingAsk(t, 1).ID
	d.reply(t, id, map[string]any{"outcome": "follow_up", "question": "it is hunter2 — for agent A only?"})
	toolReply(t, p.result(t))

	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"await_reply", map[string]any{"askId": id}},
		{"answer_follow_up", map[string]any{"askId": id, "answer": "I am not A"}},
	} {
		msg := toolErr(t, callTool(t, b, call.tool, call.args))
		if !strings.Contains(msg, "ask.not_found: there is no ask "+id) || strings.Contains(msg, "hunter2") {
			t.Errorf("%s by another agent: %s", call.tool, msg)
		}
	}
	if got := d.getAsk(t, id); got.Status != string(ask.AwaitingAgent) {
		t.Fatalf("another agent's answer changed the ask: %+v", got)
	}
	if tr := toolReply(t, callTool(t, a, "await_reply", map[string]any{"askId": id})); !strings.Contains(tr.Reply.Question, "hunter2") {
		t.Fatalf("the ask's own agent: %+v", tr)
	}
	p = startTool(t, a, "answer_follow_up", map[string]any{"askId": id, "answer": "yes"})
	// Wait for the agent's turn itself: the ask may still show the earlier await_reply's wait.
	var stored *ask.Ask
	eventually(t, "the agent's answer is stored", func() bool {
		var err error
		stored, err = d.Service.Find(context.Background(), testSpace, id)
		return err == nil && stored.Thread[len(stored.Thread)-1].Author == ask.AuthorAgent
	})
	d.waitFor(t, id, true)
	if last := stored.Thread[len(stored.Thread)-1]; last.Author != ask.AuthorAgent || last.CredentialID != aCred {
		t.Fatalf("the agent's turn records credential %q, want %q", last.CredentialID, aCred)
	}
	d.reply(t, id, map[string]any{"outcome": "dismissed"})
	toolReply(t, p.result(t))

	rp := startTool(t, a, "request_review", review("rev", ""))
	rid := d.waitingAsk(t, 1).ID
	d.reply(t, rid, map[string]any{"outcome": "changes_requested", "feedback": "again"})
	toolReply(t, rp.result(t))
	if msg := toolErr(t, callTool(t, b, "request_review", review("rev", rid))); !strings.Contains(msg, "there is no review") {
		t.Errorf("revises by another agent: %s", msg)
	}
}

// TestListOpenAsksFindsEveryRecentReply: an agent finds its closed ask in list_open_asks however
// many asks of other agents closed after it (the space's latest closed asks are all theirs).
func TestListOpenAsksFindsEveryRecentReply(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	ctx := context.Background()
	aToken, aCred := d.agent(t, "a")
	_, bCred := d.agent(t, "b")
	mine, err := d.Service.AskQuestion(ctx, ask.QuestionInput{Question: "mine?", Project: "p"}, ask.Origin{Space: testSpace, RaisedBy: &owner, CredentialID: aCred, Role: ask.RoleAgent})
	if err != nil {
		t.Fatal(err)
	}
	d.reply(t, mine.ID, map[string]any{"outcome": "answered", "selected": []string{}, "text": "yours"})
	for range 60 {
		q, err := d.Service.AskQuestion(ctx, ask.QuestionInput{Question: "theirs?", Project: "p"}, ask.Origin{Space: testSpace, RaisedBy: &owner, CredentialID: bCred, Role: ask.RoleAgent})
		if err != nil {
			t.Fatal(err)
		}
		d.reply(t, q.ID, map[string]any{"outcome": "dismissed"})
	}
	a := d.connect(t, clientOpts{Token: aToken})
	var list struct{ Asks, Recent []openAsk }
	res := callTool(t, a, "list_open_asks", map[string]any{})
	if err := json.Unmarshal([]byte(resultText(res)), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Recent) != 1 || list.Recent[0].AskID != mine.ID {
		t.Fatalf("list_open_asks after 60 other replies: recent %+v, want only %s", list.Recent, mine.ID)
	}
	if tr := toolReply(t, callTool(t, a, "await_reply", map[string]any{"askId": mine.ID})); tr.Reply.Text != "yours" {
		t.Fatalf("await_reply: %+v", tr)
	}
}
