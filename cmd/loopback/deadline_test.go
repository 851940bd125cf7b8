package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events/eventstest"
	"github.com/loopback-hq/loopback/shared/mcptools"
)

// toolReplyOf is a blocking tool's structured result, the contract's ToolReply.
func toolReplyOf(t *testing.T, res *mcp.CallToolResult) mcptools.ToolReply {
	t.Helper()
	b, _ := json.Marshal(res.StructuredContent)
	var tr struct {
		AskID    string                   `json:"askId"`
		Reply    json.RawMessage          `json:"reply"`
		Deadline *mcptools.DeadlinePassed `json:"deadline"`
	}
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	var r ask.Reply
	if err := json.Unmarshal(tr.Reply, &r); err != nil {
		t.Fatalf("reply %s: %v", tr.Reply, err)
	}
	return mcptools.ToolReply{AskID: tr.AskID, Reply: r, Deadline: tr.Deadline}
}

// An agent's deadline on `loopback serve`: two blocking calls through mcp-go's client, one with
// a default and one without, return at their deadline (not before), the first with the default
// marked as a default, the second saying in words that nobody answered; the inbox shows the
// deadline, and the notice, in the ask's thread.
func TestDeadlineOnServe(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken})
	c := s.agent(t, s.agentToken(t))
	const within = 10 // seconds: ask.MinDeadline, the soonest a deadline may be
	started := time.Now()
	withDefault := askInBackground(t, c, map[string]any{"question": "Deploy to production now?", "project": "billing",
		"options":  []map[string]any{{"label": "Yes"}, {"label": "No"}},
		"deadline": map[string]any{"inSeconds": within, "default": map[string]any{"outcome": "answered", "selected": []string{"No"}}}})
	without := askInBackground(t, c, map[string]any{"question": "Which region?", "project": "billing",
		"deadline": map[string]any{"inSeconds": within}})
	// A third whose agent stops waiting: nobody waits on it at its deadline, and serve's own
	// clock closes it.
	gone, stopWaiting := context.WithCancel(t.Context())
	var req mcp.CallToolRequest
	req.Params.Name = "ask_question"
	req.Params.Arguments = map[string]any{"question": "Rotate the key?", "project": "billing", "deadline": map[string]any{"inSeconds": within}}
	left := make(chan struct{})
	go func() { defer close(left); c.CallTool(gone, req) }()

	// The inbox shows both asks with their deadlines while they count down.
	var open []*ask.Ask
	eventually(t, "both asks in the snapshot", func() bool {
		r := s.do(t, "GET", "/api/v1/snapshot", ownerToken, "")
		var snap struct{ Open []*ask.Ask }
		json.Unmarshal(r.body, &snap)
		open = snap.Open
		return len(open) == 3
	})
	stopWaiting()
	<-left
	var unwatched string
	for _, a := range open {
		if a.Question.Question == "Rotate the key?" {
			unwatched = a.ID
		}
	}
	for _, a := range open {
		if a.Deadline == nil || a.Deadline.At.Sub(a.CreatedAt) != within*time.Second {
			t.Fatalf("ask %s shows deadline %+v, want %ds after %v", a.ID, a.Deadline, within, a.CreatedAt)
		}
	}

	got := toolReplyOf(t, withDefault.wait(t))
	if waited := time.Since(started); waited < (within-1)*time.Second {
		t.Fatalf("the call returned after %s, before its deadline", waited)
	}
	if got.Deadline == nil || !got.Deadline.TookDefault || got.Reply.Outcome != ask.OutcomeAnswered || got.Reply.Selected[0] != "No" {
		t.Fatalf("with a default: %+v %+v", got.Reply, got.Deadline)
	}
	words := textOf(withDefault.res)
	if !strings.HasPrefix(words, "Nobody answered your ask "+got.AskID+" by its deadline") || !strings.Contains(words, "This is NOT a person's answer: it is the default you set") || !strings.Contains(words, "chose “No”") {
		t.Errorf("the words with a default: %s", words)
	}
	none := toolReplyOf(t, without.wait(t))
	if none.Deadline == nil || none.Deadline.TookDefault || none.Reply.Outcome != ask.OutcomeDismissed {
		t.Fatalf("without a default: %+v %+v", none.Reply, none.Deadline)
	}
	if words := textOf(without.res); !strings.Contains(words, "and you set no default: there is no answer. Nobody approved, declined or chose anything") {
		t.Errorf("the words without a default: %s", words)
	}
	if waited := time.Since(started); waited > (within+8)*time.Second {
		t.Errorf("the calls returned %s after asking, long after their %ds deadline", waited, within)
	}

	// The ask nobody waited on closed too, by serve's clock.
	eventually(t, "the unwatched ask closed at its deadline", func() bool {
		var a ask.Ask
		json.Unmarshal(s.do(t, "GET", "/api/v1/asks/"+unwatched, ownerToken, "").body, &a)
		return a.Status == ask.Closed && len(a.Thread) == 1 && a.Thread[0].Event == ask.NoticeDeadline && !a.Waiting
	})

	// The thread ends with the deadline's notice; a person's answer now is refused.
	r := s.do(t, "GET", "/api/v1/asks/"+got.AskID, ownerToken, "")
	var a ask.Ask
	if err := json.Unmarshal(r.body, &a); err != nil || a.Status != ask.Closed || len(a.Thread) != 1 {
		t.Fatalf("the ask after its deadline: %v %s", err, r.body)
	}
	if e := a.Thread[0]; e.Event != ask.NoticeDeadline || !strings.Contains(e.Text, "The agent took the default it set: chose “No”.") || a.ClosedAt.Before(a.Deadline.At) {
		t.Errorf("the notice: %+v, closed at %v for a deadline at %v", e, a.ClosedAt, a.Deadline.At)
	}
	if r := s.do(t, "POST", "/api/v1/asks/"+got.AskID+"/reply", ownerToken, yes); r.status != 409 || r.problem(t) != ask.EClosed {
		t.Errorf("answering after the deadline: %d %s", r.status, r.body)
	}

	// A bad default is refused at once, with words for the model.
	req.Params.Arguments = map[string]any{"question": "Ship?", "project": "billing", "options": []map[string]any{{"label": "Yes"}, {"label": "No"}},
		"deadline": map[string]any{"inSeconds": 60, "default": map[string]any{"outcome": "answered", "selected": []string{"Maybe"}}}}
	res, err := c.CallTool(t.Context(), req)
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "deadline.default is not a reply the person could give to this question") {
		t.Errorf("a default that is no choice: %v %+v", err, res)
	}
}

// Escalation on `loopback serve`: a person sets it (an agent may not); an ask nobody answers for
// the space's minutes (here a minute lasts a second) gets the escalated notice, once, published
// like any change: the teammate's socket hears it, and the domain names the teammate, not the
// person whose agent asked, as whom it should now reach.
func TestEscalationOnServe(t *testing.T) {
	s := startServe(t, 15*time.Second, map[string]string{"LOOPBACK_TOKEN": ownerToken}, "--escalation-minute", "1s")
	agentToken := s.agentToken(t)
	_, teammate := s.createToken(t, "--person", "--name", "Grace")

	if r := s.do(t, "PUT", "/api/v1/settings/escalation", agentToken, `{"afterMinutes":1,"toPeople":true}`); r.status != 403 {
		t.Fatalf("an agent setting the escalation: %d %s", r.status, r.body)
	}
	if r := s.do(t, "PUT", "/api/v1/settings/escalation", ownerToken, `{"afterMinutes":1}`); r.status != 422 || r.problem(t) != ask.ESettingsInvalid {
		t.Fatalf("an escalation to no one: %d %s", r.status, r.body)
	}
	r := s.do(t, "PUT", "/api/v1/settings/escalation", ownerToken, `{"afterMinutes":2,"toPeople":true,"slackChannel":"#ops"}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"updatedBy":{"id":`) {
		t.Fatalf("setting the escalation: %d %s", r.status, r.body)
	}
	if r := s.do(t, "GET", "/api/v1/settings/escalation", teammate, ""); r.status != 200 || !strings.Contains(string(r.body), `"afterMinutes":2`) {
		t.Fatalf("the teammate reading it: %d %s", r.status, r.body)
	}

	sock := s.socket(t, eventstest.Options{Token: teammate})
	snapshotFirst(t, sock)
	c := s.agent(t, agentToken)
	asked := time.Now()
	askInBackground(t, c, map[string]any{"question": "Rotate the signing key?", "project": "billing"})
	var id string
	var escalated *ask.Ask
	for escalated == nil {
		e := eventstest.MustNext(t, sock)
		if e.Ask == nil {
			continue
		}
		id = e.Ask.ID
		if n := len(e.Ask.Thread); n > 0 && e.Ask.Thread[n-1].Event == ask.NoticeEscalated {
			escalated = e.Ask
		}
	}
	if waited := time.Since(asked); waited < 1500*time.Millisecond {
		t.Errorf("escalated %s after asking, before its two (one-second) minutes", waited)
	}
	if escalated.Status != ask.AwaitingHuman || escalated.EscalatesAt == nil || escalated.Thread[0].Text != "Nobody answered within 2 minutes, so this ask was also sent to the other people of the space." {
		t.Fatalf("the escalated ask: %s %+v", escalated.Status, escalated.Thread)
	}
	if _, ok := ask.EscalationFor(ask.Change{Ask: escalated}); !ok {
		t.Fatal("the change the socket carried is no escalation")
	}
	_, store := s.seed(t)
	creds, err := store.Credentials(t.Context(), LocalSpace)
	if err != nil {
		t.Fatal(err)
	}
	to := ask.Recipients(escalated, ask.People(creds))
	if len(to) != 1 || to[0].Name != "Grace" {
		t.Fatalf("the escalation reaches %+v, want Grace alone", to)
	}
	// Once: the person answers, and the next frame is that answer, with one notice before it.
	if r := s.do(t, "POST", "/api/v1/asks/"+id+"/reply", teammate, `{"outcome":"answered","selected":[],"text":"yes"}`); r.status != 200 {
		t.Fatalf("answering: %d %s", r.status, r.body)
	}
	for {
		e := eventstest.MustNext(t, sock)
		if e.Ask == nil || e.Ask.ID != id || e.Ask.Status != ask.Closed {
			continue
		}
		if n := len(e.Ask.Thread); n != 2 || e.Ask.Thread[1].Via != ask.SurfaceInbox || e.Ask.Thread[1].By == nil || e.Ask.Thread[1].By.Name != "Grace" {
			t.Fatalf("the answered thread: %+v", e.Ask.Thread)
		}
		break
	}
}
