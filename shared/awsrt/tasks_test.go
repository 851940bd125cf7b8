package awsrt_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/loopback-hq/loopback/shared/awsrt"
)

// modernRPC sends one MCP 2026-07-28 request, declaring the Tasks extension, to the mcp function
// through its function URL; each call is a fresh invocation, as on Lambda where any instance
// may answer any poll.
func modernRPC(t *testing.T, d *deployment, token, method string, params map[string]any) map[string]any {
	t.Helper()
	req := modernRequest(token, 1, method, "aws-tasks",
		map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}, params, nil)
	res, err := newFunctionURL(d.rt, inboxHost).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var msg struct {
		Result map[string]any
		Error  map[string]any
	}
	if err := json.Unmarshal(raw, &msg); err != nil || msg.Error != nil || res.StatusCode != 200 {
		t.Fatalf("%s: %d %s", method, res.StatusCode, raw)
	}
	return msg.Result
}

// TestServerlessExtensionTask: a 2026-07-28 task on the AWS path, each request a separate
// invocation of the mcp function: created at once (the function returns, holding nothing while
// the person thinks), polled (the ask shows the agent waiting), completed by the person's reply
// through the api-* function, and its ask left unfollowed.
func TestServerlessExtensionTask(t *testing.T) {
	d := deploy(t)
	ctx := context.Background()
	const space = "sp_tasks"
	d.owner(t, space, "ada")
	agent, _, err := awsrt.AddAgent(ctx, d.rt.Store, space, awsrt.DefaultAgentName)
	if err != nil {
		t.Fatal(err)
	}
	task := modernRPC(t, d, agent, "tools/call", map[string]any{"name": "ask_question", "arguments": map[string]any{"question": "Ship on AWS?", "project": "tasks"}})
	if task["resultType"] != "task" || task["status"] != "working" {
		t.Fatalf("tools/call: %v", task)
	}
	id := task["taskId"].(string)
	got := modernRPC(t, d, agent, "tasks/get", map[string]any{"taskId": id})
	if got["status"] != "working" {
		t.Fatalf("tasks/get: %v", got)
	}
	open, err := d.rt.Store.OpenAsks(ctx, space)
	if err != nil || len(open) != 1 || !open[0].Waiting {
		t.Fatalf("the task's ask: %+v %v", open, err)
	}
	grace, _, err := awsrt.AddPerson(ctx, d.rt.Store, space, "grace") // a teammate answers
	if err != nil {
		t.Fatal(err)
	}
	if res := callAPI(t, d.rt, "POST", "/api/v1/asks/"+open[0].ID+"/reply", grace, []byte(`{"outcome":"answered","selected":[],"text":"ship it"}`),
		"Content-Type", "application/json"); res.Status != http.StatusOK {
		t.Fatalf("reply = %d %s", res.Status, res.Body)
	}
	done := modernRPC(t, d, agent, "tasks/get", map[string]any{"taskId": id})
	result, _ := done["result"].(map[string]any)
	sc, _ := result["structuredContent"].(map[string]any)
	if done["status"] != "completed" || sc["askId"] != open[0].ID || sc["reply"].(map[string]any)["text"] != "ship it" {
		t.Fatalf("tasks/get after the reply: %v", done)
	}
	eventually(t, "the ask is no longer followed", func() bool {
		a, err := d.rt.Store.FindAsk(ctx, space, open[0].ID)
		return err == nil && !a.Waiting
	})
}
