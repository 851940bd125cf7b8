package awsrt_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/mcptools"
)

// Deadlines and escalation on the AWS path, every Lambda in this process on moto. No process
// hears of every change there: the mcp function's waiting call closes its own ask at the deadline,
// so the agent gets its default (marked as one) at once; the sweeper function (every minute, on
// its schedule; called here) closes an ask nobody waits on, and escalates an ask nobody answered
// for the space's minutes (here a minute lasts a second), which the stream's fan-out carries to
// the teammate's socket like any change.
func TestServerlessDeadlines(t *testing.T) {
	d := deployWith(t, func(e *awsrt.Env) { e.QuietMaxWait, e.EscalationUnit = 30*time.Second, time.Second })
	ctx := context.Background()
	const space = "sp_deadline"
	owner := d.owner(t, space, "ada")
	teammate, _, err := awsrt.AddPerson(ctx, d.rt.Store, space, "grace")
	if err != nil {
		t.Fatal(err)
	}
	agentToken, _, err := awsrt.AddAgent(ctx, d.rt.Store, space, "claude")
	if err != nil {
		t.Fatal(err)
	}

	// The person sets the escalation through its route; an agent may not.
	if res := callAPI(t, d.rt, "PUT", "/api/v1/settings/escalation", agentToken, []byte(`{"afterMinutes":2,"toPeople":true}`)); res.Status != http.StatusForbidden {
		t.Fatalf("an agent setting the escalation: %d %s", res.Status, res.Body)
	}
	if res := callAPI(t, d.rt, "PUT", "/api/v1/settings/escalation", owner, []byte(`{"afterMinutes":2,"toPeople":true}`)); res.Status != http.StatusOK {
		t.Fatalf("setting the escalation: %d %s", res.Status, res.Body)
	}
	const inbox = "grace-conn="
	d.connect(t, teammate, inbox)

	// A blocking call with a deadline and a default: the waiting mcp function closes the ask at
	// the deadline and returns the default, marked as a default.
	agent, _, _ := d.agent(t, agentToken)
	var req mcp.CallToolRequest
	req.Params.Name = "ask_question"
	req.Params.Arguments = map[string]any{"question": "Ship it?", "project": "billing", "options": []map[string]any{{"label": "Yes"}, {"label": "No"}},
		"deadline": map[string]any{"inSeconds": 10, "default": map[string]any{"outcome": "answered", "selected": []string{"Yes"}}}}
	req.Params.Meta = &mcp.Meta{ProgressToken: "wait-1"}
	started := time.Now()
	callCtx, cancel := context.WithTimeout(ctx, 40*time.Second)
	defer cancel()
	res, err := agent.CallTool(callCtx, req)
	if err != nil || res.IsError {
		t.Fatalf("ask_question: %v %+v", err, res)
	}
	if waited := time.Since(started); waited < 9*time.Second || waited > 20*time.Second {
		t.Errorf("the call returned %s after asking, for a 10 s deadline", waited)
	}
	var reply mcptools.ToolReply
	if err := json.Unmarshal(mustJSON(t, res.StructuredContent), &reply); err != nil {
		t.Fatal(err)
	}
	if reply.Deadline == nil || !reply.Deadline.TookDefault || reply.Reply.Outcome != ask.OutcomeAnswered || reply.Reply.Selected[0] != "Yes" ||
		!strings.Contains(reply.Deadline.Note, "This is NOT a person's answer") {
		t.Fatalf("the reply at the deadline: %+v %+v", reply.Reply, reply.Deadline)
	}

	// An ask nobody waits on (its call ended: the client went away) is closed by the sweeper once
	// its deadline passed, and escalated meanwhile.
	req.Params.Arguments = map[string]any{"question": "Which region?", "project": "billing", "deadline": map[string]any{"inSeconds": 10}}
	quick, stop := context.WithCancel(ctx)
	left := make(chan struct{})
	go func() { defer close(left); agent.CallTool(quick, req) }()
	var id string
	eventually(t, "the second ask on grace's socket", func() bool {
		view, _ := d.frames(t, inbox)
		for _, a := range view.Asks {
			if a.Question.Question == "Which region?" {
				id = a.ID
			}
		}
		return id != ""
	})
	stop()
	<-left
	// The sweeper runs on its schedule, once a minute: here, until the escalation is due.
	eventually(t, "the escalation, on grace's socket", func() bool {
		if _, err := d.rt.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		view, _ := d.frames(t, inbox)
		a := view.Asks[id]
		return a != nil && len(a.Thread) == 1 && a.Thread[0].Event == ask.NoticeEscalated && a.Status == ask.AwaitingHuman
	})
	eventually(t, "the deadline, on grace's socket", func() bool {
		if _, err := d.rt.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		view, _ := d.frames(t, inbox)
		a := view.Asks[id]
		return a != nil && a.Status == ask.Closed && a.Thread[len(a.Thread)-1].Event == ask.NoticeDeadline
	})
	stored, err := d.rt.Service.Find(ctx, space, id)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := ask.PersonsMove(stored); !ok || r.Deadline == nil || r.Deadline.Default || len(stored.Thread) != 2 {
		t.Fatalf("the swept ask: %+v, thread %+v", r, stored.Thread)
	}
	if _, failures := d.pump.counts(); failures != 0 {
		t.Errorf("%d stream batches reported failures", failures)
	}
}
