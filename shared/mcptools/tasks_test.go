package mcptools_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/mcptools"
)

// Tasks are driven with raw JSON-RPC: mcp-go's client has no call that returns a CreateTaskResult
// for tools/call. Its tasks/* calls are used too, to show it reads what Loopback answers.

// taskCall starts a task-augmented tools/call and returns the task it answers with.
func taskCall(t *testing.T, d *deployment, token string, session map[string]string, tool string, args any, ttl int64) mcp.Task {
	t.Helper()
	params := map[string]any{"name": tool, "arguments": args, "task": map[string]any{}}
	if ttl > 0 {
		params["task"] = map[string]any{"ttl": ttl}
	}
	var res struct {
		Task *mcp.Task `json:"task"`
	}
	r := rpc(t, d.MCP, token, session, "tools/call", params)
	if r.Error != nil {
		t.Fatalf("task-augmented %s: %d %s", tool, r.Error.Code, r.Error.Message)
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || res.Task == nil {
		t.Fatalf("task-augmented %s answered %s, not a task (%v)", tool, r.Result, err)
	}
	return *res.Task
}

func getTask(t *testing.T, d *deployment, token string, session map[string]string, id string) mcp.Task {
	t.Helper()
	var task mcp.Task
	mustRPC(t, d.MCP, token, session, "tasks/get", map[string]any{"taskId": id}, &task)
	if task.TaskId != id {
		t.Fatalf("tasks/get %s answered task %q", id, task.TaskId)
	}
	return task
}

// taskResult calls tasks/result and checks it is the tool's ToolReply, tied to the task.
func taskResult(t *testing.T, d *deployment, token string, session map[string]string, id string) mcptools.ToolReply {
	t.Helper()
	r := rpc(t, d.MCP, token, session, "tasks/result", map[string]any{"taskId": id})
	if r.Error != nil {
		t.Fatalf("tasks/result: %d %s", r.Error.Code, r.Error.Message)
	}
	return checkTaskResult(t, r.Result, id)
}

func checkTaskResult(t *testing.T, raw json.RawMessage, taskID string) mcptools.ToolReply {
	t.Helper()
	res, err := mcp.ParseCallToolResult(&raw)
	if err != nil {
		t.Fatalf("tasks/result is not a CallToolResult: %v\n%s", err, raw)
	}
	var meta struct {
		Meta map[string]struct {
			TaskID string `json:"taskId"`
		} `json:"_meta"`
	}
	json.Unmarshal(raw, &meta)
	if got := meta.Meta[mcp.RelatedTaskMetaKey].TaskID; got != taskID {
		t.Errorf("_meta[%q] names task %q, want %q: %s", mcp.RelatedTaskMetaKey, got, taskID, raw)
	}
	return toolReply(t, res)
}

// TestTaskLifecycle: a task-augmented call answers at once with a working task; the ask shows an
// agent waiting; once the person replies the task is completed, its result is the ToolReply, and
// tasks/list has it. mcp-go's client reads every answer.
func TestTaskLifecycle(t *testing.T) {
	d := newTestDeployment(t, deployOpts{TaskPoll: 2 * time.Second})
	session := initSession(t, d.MCP, d.Token, testClientInfo)
	c := d.connect(t, clientOpts{Legacy: true})
	ctx := context.Background()

	start := time.Now()
	task := taskCall(t, d, d.Token, session, "ask_question", question("tasks"), 60000)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the task-augmented call took %v: it must answer at once", took)
	}
	if task.TaskId == "" || task.Status != mcp.TaskStatusWorking {
		t.Fatalf("task %+v, want a working task", task)
	}
	if task.TTL == nil || *task.TTL != 60000 {
		t.Errorf("ttl %v, want the 60000 asked for", task.TTL)
	}
	if task.PollInterval == nil || *task.PollInterval != 2000 {
		t.Errorf("pollInterval %v, want 2000", task.PollInterval)
	}
	if _, err := time.Parse(time.RFC3339Nano, task.CreatedAt); err != nil {
		t.Errorf("createdAt %q: %v", task.CreatedAt, err)
	}

	a := d.waitingAsk(t, 1)
	if a.Client != "loopback-test 9.9" || a.Project != "tasks" {
		t.Errorf("the task's ask is %+v", a)
	}
	if got := getTask(t, d, d.Token, session, task.TaskId); got.Status != mcp.TaskStatusWorking {
		t.Fatalf("tasks/get: %s, want working", got.Status)
	}
	if !d.getAsk(t, a.ID).Waiting {
		t.Fatal("a task being polled does not show as waiting")
	}
	got, err := c.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: task.TaskId}})
	if err != nil || got.Status != mcp.TaskStatusWorking {
		t.Fatalf("mcp-go's GetTask: %+v, %v", got, err)
	}

	reply := map[string]any{"outcome": "answered", "selected": []string{"Redis"}, "text": "for now"}
	d.reply(t, a.ID, reply)
	if got := getTask(t, d, d.Token, session, task.TaskId); got.Status != mcp.TaskStatusCompleted {
		t.Fatalf("after the reply tasks/get says %s, want completed", got.Status)
	}
	d.waitFor(t, a.ID, false)

	for range 2 { // the result is kept: asking twice gives the same
		tr := taskResult(t, d, d.Token, session, task.TaskId)
		gotReply, _ := json.Marshal(tr.Reply)
		want, _ := json.Marshal(reply)
		if tr.AskID != a.ID || !jsonEqual(t, gotReply, want) {
			t.Fatalf("tasks/result %s on %s, want %s on %s", gotReply, tr.AskID, want, a.ID)
		}
	}
	res, err := c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: task.TaskId}})
	if err != nil || res.IsError || res.StructuredContent == nil {
		t.Fatalf("mcp-go's TaskResult: %+v, %v", res, err)
	}

	var list mcp.ListTasksResult
	mustRPC(t, d.MCP, d.Token, session, "tasks/list", map[string]any{}, &list)
	i := slices.IndexFunc(list.Tasks, func(x mcp.Task) bool { return x.TaskId == task.TaskId })
	if i < 0 || list.Tasks[i].Status != mcp.TaskStatusCompleted {
		t.Fatalf("tasks/list %+v does not have task %s completed", list.Tasks, task.TaskId)
	}
	listed, err := c.ListTasks(ctx, mcp.ListTasksRequest{})
	if err != nil || len(listed.Tasks) != 1 || listed.Tasks[0].TaskId != task.TaskId {
		t.Fatalf("mcp-go's ListTasks: %+v, %v", listed, err)
	}
}

// TestTaskResultWaits: tasks/result on a working task waits for the person, then answers.
func TestTaskResultWaits(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	session := initSession(t, d.MCP, d.Token, testClientInfo)
	task := taskCall(t, d, d.Token, session, "request_review", review("tasks", ""), 0)
	if task.TTL == nil || *task.TTL != (24*time.Hour).Milliseconds() {
		t.Errorf("without a ttl the task keeps %v ms, want a day", task.TTL)
	}
	id := d.waitingAsk(t, 1).ID

	type outcome struct {
		r   rpcResponse
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := doRPC(d.MCP, d.Token, session, "tasks/result", map[string]any{"taskId": task.TaskId})
		done <- outcome{r, err}
	}()
	// The wait has begun once it follows the ask beside the task (its lease is its last step):
	// from then on only the person's move, or its bound, ends it.
	eventually(t, "tasks/result to follow the ask beside its task", func() bool { return d.leases(t, id) == 2 })
	select {
	case o := <-done:
		t.Fatalf("tasks/result answered before the person replied: %s %v", o.r.Result, o.err)
	default:
	}
	d.reply(t, id, map[string]any{"outcome": "approved"})
	var o outcome
	select {
	case o = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("tasks/result did not answer after the reply")
	}
	if o.err != nil || o.r.Error != nil {
		t.Fatalf("tasks/result: %v %+v", o.err, o.r.Error)
	}
	if tr := checkTaskResult(t, o.r.Result, task.TaskId); tr.AskID != id || tr.Reply.Outcome != ask.OutcomeApproved {
		t.Fatalf("ToolReply %+v", tr)
	}
	if got := getTask(t, d, d.Token, session, task.TaskId); got.Status != mcp.TaskStatusCompleted {
		t.Fatalf("tasks/get: %s, want completed", got.Status)
	}
	d.waitFor(t, id, false)
}

// TestTaskEachBlockingTool: every blocking tool runs as a task.
func TestTaskEachBlockingTool(t *testing.T) {
	tests := []struct {
		tool  string
		setup func(t *testing.T, d *deployment) (args map[string]any, askID string)
		reply map[string]any
	}{
		{"send_briefing", func(t *testing.T, d *deployment) (map[string]any, string) { return briefing("tasks", 1), "" },
			map[string]any{"outcome": "dismissed"}},
		{"answer_follow_up", func(t *testing.T, d *deployment) (map[string]any, string) {
			id := d.newQuestion(t, asAgent)
			d.reply(t, id, map[string]any{"outcome": "follow_up", "question": "Sure?"})
			return map[string]any{"askId": id, "answer": "Yes."}, id
		}, map[string]any{"outcome": "answered", "selected": []string{"Yes"}}},
		{"answer_briefing", func(t *testing.T, d *deployment) (map[string]any, string) {
			id := d.newBriefing(t, 1)
			d.reply(t, id, map[string]any{"outcome": "responded", "points": []map[string]any{{"point": "1", "text": "?"}}})
			return map[string]any{"askId": id, "answers": []map[string]any{{"point": "1", "answer": "!"}}}, id
		}, map[string]any{"outcome": "responded", "points": []map[string]any{{"point": "1", "resolved": true}}}},
		{"await_reply", func(t *testing.T, d *deployment) (map[string]any, string) {
			id := d.newQuestion(t, asAgent)
			return map[string]any{"askId": id}, id
		}, map[string]any{"outcome": "answered", "selected": []string{"No"}}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			d := newTestDeployment(t, deployOpts{})
			session := initSession(t, d.MCP, d.Token, testClientInfo)
			args, id := tt.setup(t, d)
			task := taskCall(t, d, d.Token, session, tt.tool, args, 60000)
			if task.Status != mcp.TaskStatusWorking {
				t.Fatalf("task %+v", task)
			}
			if id == "" {
				id = d.waitingAsk(t, 1).ID
			} else {
				d.waitFor(t, id, true)
			}
			if a := d.getAsk(t, id); a.Status != string(ask.AwaitingHuman) {
				t.Fatalf("the ask is %s, want awaiting_human", a.Status)
			}
			d.reply(t, id, tt.reply)
			tr := taskResult(t, d, d.Token, session, task.TaskId)
			got, _ := json.Marshal(tr.Reply)
			want, _ := json.Marshal(tt.reply)
			if tr.AskID != id || !jsonEqual(t, got, want) {
				t.Fatalf("tasks/result %s on %s, want %s on %s", got, tr.AskID, want, id)
			}
		})
	}
}

// TestTaskOnAnAnsweredAsk: await_reply as a task on an ask already answered is completed at once.
func TestTaskOnAnAnsweredAsk(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	session := initSession(t, d.MCP, d.Token, testClientInfo)
	id := d.newQuestion(t, asAgent)
	d.reply(t, id, map[string]any{"outcome": "dismissed"})
	task := taskCall(t, d, d.Token, session, "await_reply", map[string]any{"askId": id}, 60000)
	if task.Status != mcp.TaskStatusCompleted {
		t.Fatalf("task %+v, want completed at once", task)
	}
	if tr := taskResult(t, d, d.Token, session, task.TaskId); tr.Reply.Outcome != ask.OutcomeDismissed {
		t.Fatalf("ToolReply %+v", tr)
	}
	if d.getAsk(t, id).Waiting {
		t.Fatal("a task completed at once left the ask waiting")
	}
}

// TestTaskRefusedAtStart: invalid arguments refuse a task-augmented call as they would a plain
// one: a tool error, no task, no ask.
func TestTaskRefusedAtStart(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	session := initSession(t, d.MCP, d.Token, testClientInfo)
	q := question("tasks")
	q["options"] = []map[string]any{{"label": "Only"}}
	r := rpc(t, d.MCP, d.Token, session, "tools/call", map[string]any{"name": "ask_question", "arguments": q, "task": map[string]any{"ttl": 60000}})
	if r.Error != nil {
		t.Fatalf("JSON-RPC error %+v, want a tool error", r.Error)
	}
	res, err := mcp.ParseCallToolResult(&r.Result)
	if err != nil {
		t.Fatal(err)
	}
	if msg := toolErr(t, res); !strings.Contains(msg, "options") {
		t.Fatalf("message %q does not name options", msg)
	}
	if strings.Contains(string(r.Result), `"task"`) {
		t.Fatalf("a refused call made a task: %s", r.Result)
	}
	var list mcp.ListTasksResult
	mustRPC(t, d.MCP, d.Token, session, "tasks/list", map[string]any{}, &list)
	if len(list.Tasks) != 0 || d.askCount(t) != 0 {
		t.Fatalf("a refused call left %d tasks and %d asks", len(list.Tasks), d.askCount(t))
	}
}

// TestTaskCancel: tasks/cancel stops the agent following the ask, not the ask: the person can
// still reply, and await_reply picks it up.
func TestTaskCancel(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	session := initSession(t, d.MCP, d.Token, testClientInfo)
	task := taskCall(t, d, d.Token, session, "ask_question", question("tasks"), 60000)
	id := d.waitingAsk(t, 1).ID

	var cancelled mcp.Task
	mustRPC(t, d.MCP, d.Token, session, "tasks/cancel", map[string]any{"taskId": task.TaskId}, &cancelled)
	if cancelled.TaskId != task.TaskId || cancelled.Status != mcp.TaskStatusCancelled {
		t.Fatalf("tasks/cancel answered %+v", cancelled)
	}
	if got := getTask(t, d, d.Token, session, task.TaskId); got.Status != mcp.TaskStatusCancelled {
		t.Fatalf("tasks/get after cancel: %s", got.Status)
	}
	d.waitFor(t, id, false)
	if a := d.getAsk(t, id); a.Status != string(ask.AwaitingHuman) || len(a.Thread) != 0 {
		t.Fatalf("cancelling the task changed the ask: %s, %d turns", a.Status, len(a.Thread))
	}
	if r := rpc(t, d.MCP, d.Token, session, "tasks/cancel", map[string]any{"taskId": task.TaskId}); r.Error == nil {
		t.Fatalf("cancelling a cancelled task answered %s", r.Result)
	}

	d.reply(t, id, map[string]any{"outcome": "answered", "selected": []string{"SQLite"}})
	if got := getTask(t, d, d.Token, session, task.TaskId); got.Status != mcp.TaskStatusCancelled {
		t.Fatalf("a cancelled task became %s", got.Status)
	}
	r := rpc(t, d.MCP, d.Token, session, "tasks/result", map[string]any{"taskId": task.TaskId})
	if r.Error == nil {
		res, err := mcp.ParseCallToolResult(&r.Result)
		if err != nil || !res.IsError {
			t.Fatalf("tasks/result of a cancelled task answered %s", r.Result)
		}
	}
	c := d.connect(t, clientOpts{Legacy: true})
	if tr := toolReply(t, callTool(t, c, "await_reply", map[string]any{"askId": id})); tr.Reply.Selected[0] != "SQLite" {
		t.Fatalf("await_reply after the cancelled task: %+v", tr)
	}
}

// TestTaskOtherSpace: a task is its space's alone.
func TestTaskOtherSpace(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	session := initSession(t, d.MCP, d.Token, testClientInfo)
	task := taskCall(t, d, d.Token, session, "ask_question", question("tasks"), 60000)
	id := d.waitingAsk(t, 1).ID

	other := d.otherSpace(t)
	otherSession := initSession(t, d.MCP, other, testClientInfo)
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		r := rpc(t, d.MCP, other, otherSession, method, map[string]any{"taskId": task.TaskId})
		if r.Error == nil {
			t.Errorf("%s of another space's task answered %s", method, r.Result)
		} else if r.Error.Code != mcp.INVALID_PARAMS {
			t.Errorf("%s of another space's task: code %d, want %d", method, r.Error.Code, mcp.INVALID_PARAMS)
		}
	}
	var list mcp.ListTasksResult
	mustRPC(t, d.MCP, other, otherSession, "tasks/list", map[string]any{}, &list)
	if len(list.Tasks) != 0 {
		t.Fatalf("another space lists %+v", list.Tasks)
	}
	if got := getTask(t, d, d.Token, session, task.TaskId); got.Status != mcp.TaskStatusWorking {
		t.Fatalf("after another space's attempts the task is %s", got.Status)
	}
	if r := rpc(t, d.MCP, d.Token, session, "tasks/get", map[string]any{"taskId": "no-such-task"}); r.Error == nil {
		t.Fatalf("tasks/get of an unknown task answered %s", r.Result)
	}
	if r := rpc(t, d.MCP, d.Token, session, "tasks/get", map[string]any{}); r.Error == nil || r.Error.Code != mcp.INVALID_PARAMS {
		t.Fatalf("tasks/get without a taskId: %+v %s", r.Error, r.Result)
	}
	d.reply(t, id, map[string]any{"outcome": "dismissed"})
}

// TestTaskSurvivesRestart: a task made before a restart is answered after it, by a brand-new
// server (new hub, new service, new handler) on the same database file.
func TestTaskSurvivesRestart(t *testing.T) {
	before := newTestDeployment(t, deployOpts{})
	session := initSession(t, before.MCP, before.Token, testClientInfo)
	task := taskCall(t, before, before.Token, session, "ask_question", question("restart"), 60000)
	id := before.waitingAsk(t, 1).ID
	before.stop()

	after := newTestDeployment(t, deployOpts{DBPath: before.DBPath})
	if got := getTask(t, after, after.Token, session, task.TaskId); got.Status != mcp.TaskStatusWorking {
		t.Fatalf("after the restart the task is %s, want working", got.Status)
	}
	reply := map[string]any{"outcome": "answered", "selected": []string{"SQLite"}, "text": "answered after the restart"}
	after.reply(t, id, reply)
	tr := taskResult(t, after, after.Token, session, task.TaskId)
	got, _ := json.Marshal(tr.Reply)
	want, _ := json.Marshal(reply)
	if tr.AskID != id || !jsonEqual(t, got, want) {
		t.Fatalf("tasks/result %s on %s, want %s on %s", got, tr.AskID, want, id)
	}
	var list mcp.ListTasksResult
	mustRPC(t, after.MCP, after.Token, session, "tasks/list", map[string]any{}, &list)
	if len(list.Tasks) != 1 || list.Tasks[0].TaskId != task.TaskId || list.Tasks[0].Status != mcp.TaskStatusCompleted {
		t.Fatalf("tasks/list after the restart: %+v", list.Tasks)
	}
}

// TestTaskResultCountsAsAWait: a 2025 tasks/result that waits holds a place among its
// credential's waits, as a blocking call does (issue 23: 550 were held with the bound at 200).
func TestTaskResultCountsAsAWait(t *testing.T) {
	d := newTestDeployment(t, deployOpts{MaxWaits: 1})
	session := initSession(t, d.MCP, d.Token, testClientInfo)
	task := taskCall(t, d, d.Token, session, "request_review", review("tasks", ""), 0)
	taskAsk := d.waitingAsk(t, 1).ID

	// A blocking call holds the credential's one place.
	c := d.connect(t, clientOpts{})
	p := startTool(t, c, "ask_question", question("held"))
	d.waitingAsk(t, 2)

	r, err := doRPC(d.MCP, d.Token, session, "tasks/result", map[string]any{"taskId": task.TaskId})
	if err == nil || r.Status != http.StatusTooManyRequests {
		t.Fatalf("tasks/result with the credential's one place held: %d %s %v, want 429", r.Status, r.Result, err)
	}

	// And a tasks/result that waits holds it against a blocking call.
	var blocked string
	open, _ := d.snapshot(t)
	for _, a := range open {
		if a.ID != taskAsk {
			blocked = a.ID
		}
	}
	d.reply(t, blocked, map[string]any{"outcome": "answered", "selected": []string{}, "text": "ok"})
	p.result(t)
	done := make(chan rpcResponse, 1)
	go func() {
		// The probes below hold the place for a moment each: a tasks/result that meets one is
		// refused too, and tries again until it holds the place.
		for {
			r, _ := doRPC(d.MCP, d.Token, session, "tasks/result", map[string]any{"taskId": task.TaskId})
			if r.Status != http.StatusTooManyRequests {
				done <- r
				return
			}
		}
	}()
	// await_reply on the answered ask returns at once when it gets the place.
	eventually(t, "a blocking call is refused while tasks/result waits", func() bool {
		r, err := doRPC(d.MCP, d.Token, session, "tools/call", map[string]any{"name": "await_reply", "arguments": map[string]any{"askId": blocked}})
		return err != nil && r.Status == http.StatusTooManyRequests
	})
	d.reply(t, taskAsk, map[string]any{"outcome": "approved"})
	if r := <-done; r.Error != nil {
		t.Fatalf("tasks/result: %+v", r.Error)
	}
}
