package mcptools_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
)

// TestClientAndRaisedBy: an ask's client is the name and version the MCP client declared, on
// either protocol era; raisedBy is the person behind the credential, also when the credential is
// an agent's.
func TestClientAndRaisedBy(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	claude := ask.Actor{ID: "agent-7", Name: "Claude on the laptop"}
	agentToken := d.issue(t, testSpace, ask.RoleAgent, claude, owner)

	tests := []struct {
		name       string
		opts       clientOpts
		wantClient string
	}{
		{"discover (2026-07-28)", clientOpts{}, "loopback-test 9.9"},
		{"initialize (2025-11-25)", clientOpts{Legacy: true}, "loopback-test 9.9"},
		{"agent credential", clientOpts{Token: agentToken, Info: &mcp.Implementation{Name: "claude-code", Version: "2.1.0"}}, "claude-code 2.1.0"},
		{"agent credential, initialize", clientOpts{Token: agentToken, Legacy: true, Info: &mcp.Implementation{Name: "cursor", Version: "1.7"}}, "cursor 1.7"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := d.connect(t, tt.opts)
			p := startTool(t, c, "ask_question", question(fmt.Sprint("project-", i)))
			a := d.waitingAsk(t, 1)
			if a.Project != fmt.Sprint("project-", i) {
				t.Fatalf("found ask of project %q", a.Project)
			}
			if a.Client != tt.wantClient {
				t.Errorf("client %q, want %q", a.Client, tt.wantClient)
			}
			if a.RaisedBy == nil || *a.RaisedBy != owner {
				t.Errorf("raisedBy %+v, want the credential's person %+v", a.RaisedBy, owner)
			}
			d.reply(t, a.ID, map[string]any{"outcome": "dismissed"})
			toolReply(t, p.result(t))
		})
	}
}

// TestSessionAcrossInstances: a session begun on one instance works on another built on the same
// database (as on Lambda, where any instance serves any request), and still knows its client.
func TestSessionAcrossInstances(t *testing.T) {
	a := newTestDeployment(t, deployOpts{})
	b := newTestDeployment(t, deployOpts{DBPath: a.DBPath})
	session := initSession(t, a.MCP, a.Token, testClientInfo)
	if !strings.HasPrefix(session["Mcp-Session-Id"], "lb2.") {
		t.Fatalf("session id %q", session["Mcp-Session-Id"])
	}

	// B lists tools for A's session.
	var list struct{ Tools []struct{ Name string } }
	mustRPC(t, b.MCP, b.Token, session, "tools/list", map[string]any{}, &list)
	if len(list.Tools) != len(toolInputs) {
		t.Fatalf("instance B listed %d tools for A's session", len(list.Tools))
	}

	// B runs a blocking call for A's session.
	type outcome struct {
		r   rpcResponse
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := doRPC(b.MCP, b.Token, session, "tools/call", map[string]any{"name": "ask_question", "arguments": question("across")})
		done <- outcome{r, err}
	}()
	asked := b.waitingAsk(t, 1)
	if asked.Client != "loopback-test 9.9" {
		t.Errorf("instance B recorded client %q, want the one A's session began with", asked.Client)
	}
	if seen := a.getAsk(t, asked.ID); seen.ID != asked.ID {
		t.Fatal("instance A does not see the ask instance B made")
	}
	b.reply(t, asked.ID, map[string]any{"outcome": "answered", "selected": []string{"SQLite"}})
	var o outcome
	select {
	case o = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the call on instance B did not return")
	}
	if o.err != nil {
		t.Fatalf("tools/call on instance B: %v", o.err)
	}
	r := o.r
	if r.Error != nil {
		t.Fatalf("tools/call on instance B: %d %s", r.Error.Code, r.Error.Message)
	}
	parsed, err := mcp.ParseCallToolResult(&r.Result)
	if err != nil {
		t.Fatal(err)
	}
	if tr := toolReply(t, parsed); tr.AskID != asked.ID || tr.Reply.Outcome != ask.OutcomeAnswered {
		t.Fatalf("ToolReply %+v", tr)
	}

	// A session id that is not one of ours is refused, whichever instance gets it.
	for _, bad := range []string{"not-a-session", "lb2.@@@.00", "lb1.bG9vcGJhY2stdGVzdCA5Ljk.0123456789abcdef0123456789abcdef"} {
		r, err := doRPC(b.MCP, b.Token, map[string]string{"Mcp-Session-Id": bad, "Mcp-Protocol-Version": legacyVersion}, "tools/list", map[string]any{})
		if err == nil && r.Status == http.StatusOK && r.Error == nil {
			t.Errorf("session id %q was accepted", bad)
		}
	}
}
