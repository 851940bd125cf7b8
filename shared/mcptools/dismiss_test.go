package mcptools_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
)

// TestDismissOnAgentsMoveInWords (revision 6): a question in the agent's move with no agent
// waiting is dismissed by a person; the agent, when it next looks (await_reply, or answering),
// is told in words who closed it, where, and that nothing more is wanted. Only a person's
// credential dismisses; the refusals are the contract's Problems.
func TestDismissOnAgentsMoveInWords(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	agentToken, _ := d.agent(t, "a")
	c := d.connect(t, clientOpts{Token: agentToken})
	p := startTool(t, c, "ask_question", question("dead end"))
	id := d.waitingAsk(t, 1).ID
	d.reply(t, id, map[string]any{"outcome": "follow_up", "question": "Which table?"})
	toolReply(t, p.result(t)) // the agent hears the question back, and goes away
	d.waitFor(t, id, false)

	problem := func(status int, body []byte, wantStatus int, code string) {
		t.Helper()
		var pr struct{ Code, Message string }
		if status != wantStatus || json.Unmarshal(body, &pr) != nil || pr.Code != code || pr.Message == "" {
			t.Fatalf("got %d %s, want %d with code %s", status, body, wantStatus, code)
		}
	}
	// An agent's credential never dismisses.
	status, body := d.api(t, agentToken, "POST", "/api/v1/asks/"+id+"/dismiss", nil)
	problem(status, body, http.StatusForbidden, ask.EForbidden)
	status, body = d.api(t, d.Token, "POST", "/api/v1/asks/nosuchask/dismiss", nil)
	problem(status, body, http.StatusNotFound, ask.ENotFound)

	status, body = d.api(t, d.Token, "POST", "/api/v1/asks/"+id+"/dismiss", nil)
	if status != http.StatusOK {
		t.Fatalf("dismissing in the agent's move: %d %s", status, body)
	}
	var got askView
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	last := got.Thread[len(got.Thread)-1]
	reply, _ := last["reply"].(map[string]any)
	by, _ := last["by"].(map[string]any)
	if got.Status != string(ask.Closed) || reply["outcome"] != "dismissed" || by["id"] != owner.ID || last["via"] != "inbox" {
		t.Fatalf("the dismissed ask: status %s, last turn %v", got.Status, last)
	}
	status, body = d.api(t, d.Token, "POST", "/api/v1/asks/"+id+"/dismiss", nil)
	problem(status, body, http.StatusConflict, ask.EClosed)

	// The agent looks again: await_reply returns the dismissal, in words for a model.
	res := callTool(t, c, "await_reply", map[string]any{"askId": id})
	if tr := toolReply(t, res); tr.Reply.Outcome != ask.OutcomeDismissed {
		t.Fatalf("await_reply after the dismissal: %+v", tr)
	}
	words := replyWords(t, res)
	for _, s := range []string{"Olga Owner dismissed the ask while it was your move", "Do not answer it", "do not wait on it", id} {
		if !strings.Contains(words, s) {
			t.Errorf("await_reply's words do not say %q:\n%s", s, words)
		}
	}
	// Or it answers the question back it owed: refused, saying why.
	msg := toolErr(t, callTool(t, c, "answer_follow_up", map[string]any{"askId": id, "answer": "The users table."}))
	for _, s := range []string{ask.EClosed, "Olga Owner dismissed it in the inbox", "while it was your move", "do not answer it"} {
		if !strings.Contains(msg, s) {
			t.Errorf("answer_follow_up's error does not say %q:\n%s", s, msg)
		}
	}
}

// TestDismissWhileWaiting: an ask an agent waits on, dismissed through the new route, ends the
// wait with the plain dismissal words (it was the person's move).
func TestDismissWhileWaiting(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	c := d.connect(t, clientOpts{})
	p := startTool(t, c, "request_review", review("waiting", ""))
	id := d.waitingAsk(t, 1).ID
	if status, body := d.api(t, d.Token, "POST", "/api/v1/asks/"+id+"/dismiss", nil); status != http.StatusOK {
		t.Fatalf("dismiss: %d %s", status, body)
	}
	words := replyWords(t, p.result(t))
	if !strings.Contains(words, "Olga Owner dismissed the ask without answering it") || strings.Contains(words, "your move") {
		t.Errorf("the waiting call's words:\n%s", words)
	}
}
