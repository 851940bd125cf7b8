package mcptools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/testwait"
)

// decision is request_approval's result: one text block (what Claude Code's permission prompt
// tool reads; it refuses a result with anything more), the contract's PermissionDecision.
func decision(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	if len(res.Content) != 1 || res.StructuredContent != nil {
		t.Fatalf("want one text block and nothing more: %+v", res)
	}
	text := resultText(res)
	if err := contract.ValidateModel("PermissionDecision", []byte(text)); err != nil {
		t.Fatalf("not a PermissionDecision: %v: %s", err, text)
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(text), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// request_approval, as Claude Code's --permission-prompt-tool calls it: the person allows (the
// input comes back to run), denies with words, or a rule decides at once; with no decision in
// time it denies saying so, naming the askId, never allowing.
func TestRequestApproval(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	agent := d.issue(t, testSpace, ask.RoleAgent, ask.Actor{ID: "agent-1"}, owner)
	c := d.connect(t, clientOpts{Token: agent})
	ctx := context.Background()
	args := func(cmd string) map[string]any {
		return map[string]any{"tool_name": "Bash", "input": map[string]any{"command": cmd, "description": "x"}, "tool_use_id": "toolu_1", "cwd": "/home/u/src/shop"}
	}
	// decide replies r on the approval of cmd once it is open with the call waiting.
	decide := func(cmd string, r ask.Reply) {
		var id string
		testwait.Eventually(t, "the approval of "+cmd, func() bool {
			open, _ := d.Service.Store.OpenAsks(ctx, testSpace)
			for _, a := range open {
				if a.Kind == ask.KindApproval && strings.Contains(string(a.Approval.Input), cmd) && a.Waiting {
					id = a.ID
					return true
				}
			}
			return false
		})
		if _, err := d.Service.Reply(ctx, testSpace, id, r, &owner); err != nil {
			t.Error(err)
		}
	}

	go decide("npm test", ask.Reply{Outcome: ask.OutcomeAllowed})
	res := callTool(t, c, "request_approval", args("npm test"))
	got := decision(t, res)
	if res.IsError || got["behavior"] != "allow" || got["updatedInput"].(map[string]any)["command"] != "npm test" || got["askId"] == "" {
		t.Errorf("allowed: %s", resultText(res))
	}

	// As Claude Code calls it: no cwd, no project. The approval is filed under the client's name.
	go decide("rm -rf build", ask.Reply{Outcome: ask.OutcomeDenied, Message: "Use make clean."})
	res = callTool(t, c, "request_approval", map[string]any{"tool_name": "Bash", "input": map[string]any{"command": "rm -rf build"}, "tool_use_id": "toolu_2"})
	got = decision(t, res)
	if got["behavior"] != "deny" || got["message"] != "Use make clean." || got["updatedInput"] != nil {
		t.Errorf("denied: %s", resultText(res))
	}
	if a, err := d.Service.Find(ctx, testSpace, got["askId"].(string)); err != nil || a.Project != testClientInfo.Name {
		t.Errorf("the approval's project: %v %v, want the client's name", a, err)
	}

	if _, err := d.Service.CreateRule(ctx, &ask.Credential{Space: testSpace, Role: ask.RoleOwner, Actor: owner, Person: owner}, ask.RuleInput{Effect: ask.EffectAllow, RuleScope: ask.RuleScope{Tool: "Bash", CommandPrefix: "go test"}}); err != nil {
		t.Fatal(err)
	}
	res = callTool(t, c, "request_approval", args("go test ./..."))
	if got := decision(t, res); got["behavior"] != "allow" {
		t.Errorf("by the rule: %s", resultText(res))
	}
}

// No decision within the call's bound (?maxWait=1s here) is a deny that says no one decided
// and names the askId and await_reply: never an allow.
func TestRequestApprovalUndecided(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	agent := d.issue(t, testSpace, ask.RoleAgent, ask.Actor{ID: "agent-1"}, owner)
	d.MCP += "?maxWait=1s"
	c := d.connect(t, clientOpts{Token: agent})
	start := time.Now()
	res := callTool(t, c, "request_approval", map[string]any{"tool_name": "Bash", "input": map[string]any{"command": "make deploy"}, "project": "shop"})
	got := decision(t, res)
	id, _ := got["askId"].(string)
	if got["behavior"] != "deny" || id == "" || !strings.Contains(got["message"].(string), "No one decided on ask "+id) || !strings.Contains(got["message"].(string), "withdrawn") {
		t.Errorf("undecided: %s", resultText(res))
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
	// The agent was told no: the approval is withdrawn, and a later decision is refused, since
	// it could reach no one.
	a, err := d.Service.Find(context.Background(), testSpace, id)
	if err != nil || a.Status != ask.Closed || a.Thread[len(a.Thread)-1].Event != ask.NoticeWithdrawn {
		t.Fatalf("the approval after the bound: %+v %v", a, err)
	}
	_, err = d.Service.Reply(context.Background(), testSpace, id, ask.Reply{Outcome: ask.OutcomeAllowed}, &owner)
	if ask.ErrorCode(err) != ask.EClosed {
		t.Errorf("a decision after the agent was told no: %v, want %s", err, ask.EClosed)
	}
	// A person's credential raises no approval.
	p := d.connect(t, clientOpts{})
	res = callTool(t, p, "request_approval", map[string]any{"tool_name": "Bash", "input": map[string]any{"command": "ls"}, "project": "shop"})
	if !res.IsError || !strings.Contains(resultText(res), ask.EForbidden) {
		t.Errorf("a person's credential: %s", resultText(res))
	}
}
