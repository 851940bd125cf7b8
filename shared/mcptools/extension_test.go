package mcptools_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/mcptools"
)

// openAsk is one line of list_open_asks, as an agent reads it.
type openAsk struct {
	AskID, Kind, Title, Project, Status, Move, AskedAt string
	Waiting                                            bool
}

// The Tasks extension on MCP 2026-07-28 (extension.go), spoken on the wire as its spec writes it.

// modernCall is one 2026-07-28 request: the protocol version in the header and in _meta, the
// client's capabilities (with the Tasks extension unless tasks is false), Mcp-Method and Mcp-Name.
type modernCall struct {
	token   string
	method  string
	params  map[string]any
	tasks   bool
	headers map[string]string // set over (or, with "", removed from) the standard ones
}

type modernResponse struct {
	status int
	header http.Header
	body   map[string]json.RawMessage
	raw    []byte
}

func (r modernResponse) result(t *testing.T) map[string]any {
	t.Helper()
	if r.body["error"] != nil {
		t.Fatalf("error %s", r.body["error"])
	}
	var m map[string]any
	if err := json.Unmarshal(r.body["result"], &m); err != nil {
		t.Fatalf("no result: %s", r.raw)
	}
	return m
}

func (r modernResponse) errorCode(t *testing.T) int {
	t.Helper()
	var e struct{ Code int }
	if err := json.Unmarshal(r.body["error"], &e); err != nil || e.Code == 0 {
		t.Fatalf("no error in %s", r.raw)
	}
	return e.Code
}

func (d *deployment) modern(t *testing.T, c modernCall) modernResponse {
	t.Helper()
	if c.token == "" {
		c.token = d.Token
	}
	params := map[string]any{}
	for k, v := range c.params {
		params[k] = v
	}
	caps := map[string]any{}
	if c.tasks {
		caps["extensions"] = map[string]any{mcptools.ExtensionTasks: map[string]any{}}
	}
	params["_meta"] = map[string]any{
		mcp.MetaKeyProtocolVersion:    mcp.ProtocolVersion20260728,
		mcp.MetaKeyClientInfo:         map[string]any{"name": "ext-test", "version": "1.0"},
		mcp.MetaKeyClientCapabilities: caps,
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": c.method, "params": params})
	req, _ := http.NewRequest("POST", d.MCP, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
	req.Header.Set(mcp.HeaderMethod, c.method)
	if name, ok := c.params["name"].(string); ok {
		req.Header.Set(mcp.HeaderName, name)
	}
	if id, ok := c.params["taskId"].(string); ok {
		req.Header.Set(mcp.HeaderName, id)
	}
	for k, v := range c.headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(raw), "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(data, `"id"`) {
				raw = []byte(data)
			}
		}
	}
	out := modernResponse{status: res.StatusCode, header: res.Header, raw: raw}
	if err := json.Unmarshal(raw, &out.body); err != nil {
		t.Fatalf("%s: not JSON-RPC: %d %s", c.method, res.StatusCode, raw)
	}
	return out
}

func TestExtensionDiscover(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	res := d.modern(t, modernCall{method: "server/discover"})
	var r struct {
		Capabilities struct {
			Tasks      json.RawMessage            `json:"tasks"`
			Extensions map[string]json.RawMessage `json:"extensions"`
			Tools      json.RawMessage            `json:"tools"`
		} `json:"capabilities"`
		SupportedVersions []string `json:"supportedVersions"`
	}
	if err := json.Unmarshal(res.body["result"], &r); err != nil {
		t.Fatalf("%s", res.raw)
	}
	if r.Capabilities.Tasks != nil {
		t.Errorf("server/discover still advertises 2025's capabilities.tasks: %s", r.Capabilities.Tasks)
	}
	if string(r.Capabilities.Extensions[mcptools.ExtensionTasks]) != "{}" || r.Capabilities.Tools == nil || len(r.SupportedVersions) == 0 {
		t.Errorf("server/discover: %s", res.raw)
	}
	// A 2025-11-25 initialize keeps its tasks capability.
	var init struct {
		Capabilities struct {
			Tasks json.RawMessage `json:"tasks"`
		} `json:"capabilities"`
	}
	r0 := rpc(t, d.MCP, d.Token, nil, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "legacy", "version": "1"}})
	if json.Unmarshal(r0.Result, &init); init.Capabilities.Tasks == nil {
		t.Errorf("initialize (2025-11-25) lost capabilities.tasks: %s", r0.Result)
	}
}

func TestExtensionTaskLifecycle(t *testing.T) {
	d := newTestDeployment(t, deployOpts{TaskPoll: 2 * time.Second})
	start := time.Now()
	created := d.modern(t, modernCall{method: "tools/call", tasks: true, params: map[string]any{"name": "ask_question", "arguments": question("ext")}})
	task := created.result(t)
	if time.Since(start) > 5*time.Second {
		t.Fatal("a task-creating call must answer at once")
	}
	if task["resultType"] != "task" || task["status"] != "working" || task["taskId"] == "" ||
		task["ttlMs"].(float64) != float64(mcptools.ExtensionTaskTTL.Milliseconds()) || task["pollIntervalMs"].(float64) != 2000 {
		t.Fatalf("CreateTaskResult %s", created.raw)
	}
	id := task["taskId"].(string)
	a := d.waitingAsk(t, 1)
	if a.Project != "ext" || !a.Waiting {
		t.Fatalf("the task's ask %+v", a)
	}

	got := d.modern(t, modernCall{method: "tasks/get", tasks: true, params: map[string]any{"taskId": id}}).result(t)
	if got["resultType"] != "complete" || got["status"] != "working" || got["statusMessage"] != "waiting for the person in the inbox" {
		t.Fatalf("tasks/get while the person thinks: %v", got)
	}
	d.reply(t, a.ID, map[string]any{"outcome": "follow_up", "question": "Which region?"})
	done := d.modern(t, modernCall{method: "tasks/get", tasks: true, params: map[string]any{"taskId": id}}).result(t)
	if done["status"] != "completed" || !strings.Contains(done["statusMessage"].(string), "follow-up") {
		t.Fatalf("tasks/get after the reply: %v", done)
	}
	result := done["result"].(map[string]any)
	sc := result["structuredContent"].(map[string]any)
	if result["resultType"] != "complete" || sc["askId"] != a.ID || sc["reply"].(map[string]any)["question"] != "Which region?" {
		t.Fatalf("the completed task's result is not the ToolReply: %v", result)
	}
	d.waitFor(t, a.ID, false)
	// Finished: a cancel is acknowledged and changes nothing; an update is acknowledged.
	if ack := d.modern(t, modernCall{method: "tasks/cancel", tasks: true, params: map[string]any{"taskId": id}}).result(t); ack["resultType"] != "complete" {
		t.Fatalf("tasks/cancel: %v", ack)
	}
	if ack := d.modern(t, modernCall{method: "tasks/update", tasks: true, params: map[string]any{"taskId": id, "inputResponses": map[string]any{}}}).result(t); ack["resultType"] != "complete" {
		t.Fatalf("tasks/update: %v", ack)
	}
	if again := d.modern(t, modernCall{method: "tasks/get", tasks: true, params: map[string]any{"taskId": id}}).result(t); again["status"] != "completed" {
		t.Fatalf("a cancel after completion changed the task: %v", again)
	}

	// The agent answers the follow-up as a task too, then cancels it: the ask stays for the person.
	ans := d.modern(t, modernCall{method: "tools/call", tasks: true, params: map[string]any{"name": "answer_follow_up", "arguments": map[string]any{"askId": a.ID, "answer": "eu-west-1"}}}).result(t)
	if ans["resultType"] != "task" {
		t.Fatalf("answer_follow_up: %v", ans)
	}
	d.waitFor(t, a.ID, true)
	d.modern(t, modernCall{method: "tasks/cancel", tasks: true, params: map[string]any{"taskId": ans["taskId"]}}).result(t)
	d.waitFor(t, a.ID, false)
	if c := d.modern(t, modernCall{method: "tasks/get", tasks: true, params: map[string]any{"taskId": ans["taskId"]}}).result(t); c["status"] != "cancelled" {
		t.Fatalf("after tasks/cancel: %v", c)
	}
	if got := d.getAsk(t, a.ID); got.Status != string(ask.AwaitingHuman) {
		t.Fatalf("the ask after a cancel: %+v", got)
	}
}

// TestExtensionPollingIsFollowing: a task whose client keeps polling shows the agent waiting;
// once the polls stop, its lease lapses (30 s after the last poll) and the sweeper clears waiting;
// a poll after that follows the ask again.
func TestExtensionPollingIsFollowing(t *testing.T) {
	var offset atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	later := func(d time.Duration) { offset.Add(int64(d)) }
	d := newTestDeployment(t, deployOpts{TaskPoll: time.Second, Now: now})
	ctx := context.Background()
	id := d.modern(t, modernCall{method: "tools/call", tasks: true, params: map[string]any{"name": "ask_question", "arguments": question("polls")}}).result(t)["taskId"].(string)
	a := d.waitingAsk(t, 1)
	poll := func() {
		t.Helper()
		if got := d.modern(t, modernCall{method: "tasks/get", tasks: true, params: map[string]any{"taskId": id}}).result(t); got["status"] != "working" {
			t.Fatalf("tasks/get: %v", got)
		}
	}
	reap := func() int {
		t.Helper()
		n, err := d.Service.ReapLeases(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Polls keep coming, each well within the lease of the one before: always waiting.
	for range 4 {
		later(20 * time.Second)
		poll()
		if n := reap(); n != 0 || !d.getAsk(t, a.ID).Waiting {
			t.Fatalf("polled every 20 s, yet %d leases reaped and waiting %v", n, d.getAsk(t, a.ID).Waiting)
		}
	}
	// The polls stop: soon after, nobody follows the ask.
	later(31 * time.Second)
	if n := reap(); n != 1 {
		t.Fatalf("31 s after the last poll %d leases reaped, want the task's", n)
	}
	if d.getAsk(t, a.ID).Waiting {
		t.Fatal("the polls stopped, yet the ask shows the agent waiting")
	}
	// The client comes back: waiting again.
	poll()
	if !d.getAsk(t, a.ID).Waiting {
		t.Fatal("polled again, yet not waiting")
	}
}

func TestExtensionRefusals(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	id := d.modern(t, modernCall{method: "tools/call", tasks: true, params: map[string]any{"name": "ask_question", "arguments": question("ext")}}).result(t)["taskId"].(string)
	get := map[string]any{"taskId": id}
	for _, tc := range []struct {
		name   string
		call   modernCall
		code   int
		status int
	}{
		{"no Mcp-Name", modernCall{method: "tasks/get", tasks: true, params: get, headers: map[string]string{mcp.HeaderName: ""}}, mcp.HEADER_MISMATCH, 400},
		{"another Mcp-Name", modernCall{method: "tasks/get", tasks: true, params: get, headers: map[string]string{mcp.HeaderName: "other"}}, mcp.HEADER_MISMATCH, 400},
		{"a wrong Mcp-Method", modernCall{method: "tasks/get", tasks: true, params: get, headers: map[string]string{mcp.HeaderMethod: "tasks/cancel"}}, mcp.HEADER_MISMATCH, 400},
		{"no protocol header", modernCall{method: "tasks/get", tasks: true, params: get, headers: map[string]string{mcp.HeaderProtocolVersion: ""}}, mcp.HEADER_MISMATCH, 400},
		{"the extension not declared", modernCall{method: "tasks/get", params: get}, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, 400},
		{"an unknown task", modernCall{method: "tasks/get", tasks: true, params: map[string]any{"taskId": "nope"}}, mcp.INVALID_PARAMS, 400},
		{"another credential's task", modernCall{token: d.issue(t, "local", ask.RoleAgent, ask.Actor{ID: "agent:b"}, ask.Actor{ID: "owner"}), method: "tasks/get", tasks: true, params: get}, mcp.INVALID_PARAMS, 400},
		{"tasks/list", modernCall{method: "tasks/list", tasks: true, params: map[string]any{}}, mcp.METHOD_NOT_FOUND, 404},
		{"tasks/result", modernCall{method: "tasks/result", tasks: true, params: get}, mcp.METHOD_NOT_FOUND, 404},
		{"a taskId that is not a string", modernCall{method: "tasks/get", tasks: true, params: map[string]any{"taskId": 5}}, mcp.INVALID_PARAMS, 400},
		{"no taskId", modernCall{method: "tasks/cancel", tasks: true, params: map[string]any{}}, mcp.INVALID_PARAMS, 400},
		{"tasks/update without inputResponses", modernCall{method: "tasks/update", tasks: true, params: get}, mcp.INVALID_PARAMS, 400},
		{"tasks/update with inputResponses not an object", modernCall{method: "tasks/update", tasks: true, params: map[string]any{"taskId": id, "inputResponses": []any{}}}, mcp.INVALID_PARAMS, 400},
		{"task notifications without the extension", modernCall{method: "subscriptions/listen", params: map[string]any{"notifications": map[string]any{"taskIds": []string{id}}}}, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, 400},
		{"tools/call without Mcp-Name", modernCall{method: "tools/call", tasks: true, params: map[string]any{"name": "ask_question", "arguments": question("x")}, headers: map[string]string{mcp.HeaderName: ""}}, mcp.HEADER_MISMATCH, 400},
	} {
		res := d.modern(t, tc.call)
		if code := res.errorCode(t); code != tc.code || res.status != tc.status {
			t.Errorf("%s: %d %s, want %d with HTTP %d", tc.name, res.status, res.raw, tc.code, tc.status)
		}
	}
	// A refused tools/call created no ask: one ask, the first task's.
	if n := d.askCount(t); n != 1 {
		t.Errorf("%d asks after refused calls, want 1", n)
	}
	// A call that fails validation is a tool error in 2026-07-28's shape, and creates nothing.
	bad := d.modern(t, modernCall{method: "tools/call", tasks: true, params: map[string]any{"name": "ask_question", "arguments": map[string]any{"question": "No project?"}}}).result(t)
	if bad["resultType"] != "complete" || bad["isError"] != true {
		t.Errorf("an invalid call: %v", bad)
	}
	if n := d.askCount(t); n != 1 {
		t.Errorf("%d asks after an invalid call, want 1", n)
	}
}

// TestModernBlockingIgnoresTaskParam: without the extension declared a blocking tool blocks on
// 2026-07-28, whatever 2025's `task` parameter says, and answers with resultType.
func TestModernBlockingIgnoresTaskParam(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	type out struct{ res modernResponse }
	ch := make(chan out, 1)
	go func() {
		ch <- out{d.modern(t, modernCall{method: "tools/call", params: map[string]any{"name": "ask_question", "arguments": question("block"), "task": map[string]any{"ttl": 1000}}})}
	}()
	a := d.waitingAsk(t, 1)
	d.reply(t, a.ID, map[string]any{"outcome": "dismissed"})
	res := (<-ch).res.result(t)
	if res["resultType"] != "complete" || res["isError"] == true {
		t.Fatalf("the blocking call: %v", res)
	}
	if sc := res["structuredContent"].(map[string]any); sc["askId"] != a.ID {
		t.Fatalf("the blocking call's ToolReply: %v", sc)
	}
}

// TestTaskParams: 2025-11-25's task parameter, bounded.
func TestTaskParams(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	session := initSession(t, d.MCP, d.Token, testClientInfo)
	for _, bad := range []any{"x", 3, []any{}, map[string]any{"ttl": "soon"}, map[string]any{"ttl": 1.5}} {
		r := rpc(t, d.MCP, d.Token, session, "tools/call", map[string]any{"name": "ask_question", "arguments": question("p"), "task": bad})
		if r.Error == nil || r.Error.Code != mcp.INVALID_PARAMS {
			t.Errorf("task %v: %+v %s", bad, r.Error, r.Result)
		}
	}
	if n := d.askCount(t); n != 0 {
		t.Fatalf("refused task params created %d asks", n)
	}
	for _, tc := range []struct {
		ttl  any
		want int64
	}{
		{int64(math.MaxInt64), mcptools.MaxTaskTTL.Milliseconds()},
		{1e30, mcptools.MaxTaskTTL.Milliseconds()},
		{-5, mcptools.DefaultTaskTTL.Milliseconds()},
		{60000, 60000},
	} {
		var created struct{ Task mcp.Task }
		mustRPC(t, d.MCP, d.Token, session, "tools/call", map[string]any{"name": "ask_question", "arguments": question("ttl"), "task": map[string]any{"ttl": tc.ttl}}, &created)
		if created.Task.TTL == nil || *created.Task.TTL != tc.want {
			t.Errorf("ttl %v: the task says %v, want %d", tc.ttl, created.Task.TTL, tc.want)
			continue
		}
		if got := getTask(t, d, d.Token, session, created.Task.TaskId); got.TaskId != created.Task.TaskId {
			t.Errorf("ttl %v: the task is not found", tc.ttl)
		}
	}
}

// TestKeepaliveStream: a blocking call with no progress token streams SSE comment lines while it
// waits, then its response as the one event.
func TestKeepaliveStream(t *testing.T) {
	d := newTestDeployment(t, deployOpts{Progress: 100 * time.Millisecond})
	session := initSession(t, d.MCP, d.Token, testClientInfo)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": "ask_question", "arguments": question("quiet")}})
	req, _ := http.NewRequest("POST", d.MCP, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+d.Token)
	for k, v := range session {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("a quiet wait answered %s", ct)
	}
	lines := bufio.NewScanner(res.Body)
	comments := 0
	for comments < 3 && lines.Scan() {
		if strings.HasPrefix(lines.Text(), ":") {
			comments++
		}
	}
	a := d.waitingAsk(t, 1)
	d.reply(t, a.ID, map[string]any{"outcome": "dismissed"})
	var data string
	for lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
			data = rest
			break
		}
		if l := lines.Text(); l != "" && !strings.HasPrefix(l, ":") && !strings.HasPrefix(l, "event:") {
			t.Fatalf("a stray line in the stream: %q", l)
		}
	}
	var msg struct {
		ID     int
		Result mcp.CallToolResult
	}
	if err := json.Unmarshal([]byte(data), &msg); err != nil || msg.ID != 1 || msg.Result.IsError {
		t.Fatalf("the stream's event: %q (%v)", data, err)
	}
	if comments < 3 {
		t.Fatalf("%d keepalive comments before the reply", comments)
	}
}

func TestListOpenAsks(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	me := d.connect(t, clientOpts{})
	other := d.connect(t, clientOpts{Token: d.issue(t, "local", ask.RoleAgent, ask.Actor{ID: "agent:b", Name: "b"}, ask.Actor{ID: "owner"})})
	startTool(t, me, "ask_question", question("alpha"))
	d.waitingAsk(t, 1)
	long := question("beta")
	long["question"] = strings.Repeat("Why ", 60) + "\nsecond line"
	startTool(t, me, "ask_question", long)
	d.waitingAsk(t, 2)
	startTool(t, other, "ask_question", question("alpha"))
	d.waitingAsk(t, 3)

	var list struct{ Asks, Recent []openAsk }
	res := callTool(t, me, "list_open_asks", map[string]any{})
	if err := json.Unmarshal([]byte(resultText(res)), &list); err != nil || len(list.Asks) != 2 {
		t.Fatalf("list_open_asks: %s", resultText(res))
	}
	if list.Asks[0].Project != "beta" || list.Asks[1].Project != "alpha" {
		t.Errorf("not newest first: %+v", list.Asks)
	}
	if l := list.Asks[0]; len([]rune(l.Title)) > 120 || strings.Contains(l.Title, "second") || l.Move != "person" || l.Kind != "question" || !l.Waiting {
		t.Errorf("the long question's entry: %+v", l)
	}
	res = callTool(t, me, "list_open_asks", map[string]any{"project": "alpha"})
	if json.Unmarshal([]byte(resultText(res)), &list); len(list.Asks) != 1 || list.Asks[0].Project != "alpha" {
		t.Errorf("by project: %s", resultText(res))
	}
	// The agent whose call went away resumes with await_reply on what the list gave back.
	id := list.Asks[0].AskID
	d.reply(t, id, map[string]any{"outcome": "dismissed"})
	if tr := toolReply(t, callTool(t, me, "await_reply", map[string]any{"askId": id})); tr.AskID != id {
		t.Errorf("await_reply: %+v", tr)
	}
	res = callTool(t, me, "list_open_asks", map[string]any{"project": "alpha"})
	if json.Unmarshal([]byte(resultText(res)), &list); len(list.Asks) != 0 || len(list.Recent) != 1 || list.Recent[0].AskID != id || list.Recent[0].Move != "none" {
		t.Errorf("a closed ask is still listed as open, or not as recent: %s", resultText(res))
	}
}
