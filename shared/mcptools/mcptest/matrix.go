// Package mcptest holds the MCP half of the role matrix (docs/trust.md), so that the real binary
// (cmd/loopback) and the Lambda handlers on moto (shared/awsrt) are held to the same table: every
// tool the server lists × every live kind of credential. A revoked credential never reaches a
// tool (its requests are 401 at the gate, which each caller checks itself).
package mcptest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Caller is an initialized MCP client.
type Caller interface {
	ListTools(context.Context, mcp.ListToolsRequest) (*mcp.ListToolsResult, error)
	CallTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error)
}

// Role is one live credential of the matrix, with a client that sends it.
type Role struct {
	Name   string // owner, teammate, agent, other space
	Space  string // the space its credential opens
	Person string // whose asks it raises: the name in raisedBy
	Client Caller
}

// ToolMatrix calls every tool the server lists as each role, on asks of the home space (made and
// read through svc; uploads is where tickets are kept): a role of the home space reaches them; a role of another space gets
// ask.not_found and changes nothing. An ask a role raises lands in its own space, raised by its
// person. A tool the table has no row for fails the test, so a new tool cannot be left out.
func ToolMatrix(t *testing.T, svc *ask.Service, uploads ask.UploadStore, home string, roles []Role) {
	t.Helper()
	ctx := context.Background()
	// An ask is acted on only by the agent that raised it (ask.Origin.Owns): each role of the home
	// space gets an open and an answered ask of its own, raised as it raises asks (its credential
	// and person, read from an ask it raised through the tools). A role of another space is given
	// the first home role's asks, and must get not_found.
	type owned struct{ open, answered *ask.Ask }
	asks := make([]owned, len(roles))
	for n, r := range roles {
		if r.Space != home {
			continue
		}
		mine := raiseThrough(t, svc, r, "matrix identity "+r.Name)
		origin := ask.Origin{Space: home, Client: "matrix 1.0", RaisedBy: mine.RaisedBy, CredentialID: mine.CredentialID}
		open, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "An open question", Project: "tool-matrix"}, origin)
		if err != nil {
			t.Fatal(err)
		}
		answered, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "An answered question", Project: "tool-matrix"}, origin)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Reply(ctx, home, answered.ID, ask.Reply{Outcome: ask.OutcomeAnswered, Text: "yes"}, mine.RaisedBy); err != nil {
			t.Fatal(err)
		}
		asks[n] = owned{open, answered}
	}
	var first owned
	for _, o := range asks {
		if o.open != nil {
			first = o
			break
		}
	}
	if first.open == nil {
		t.Fatal("the matrix has no role of the home space")
	}
	for n, r := range roles {
		if r.Space != home {
			asks[n] = first
		}
	}

	// What a role of the home space gets: a tool that names an ask reaches it (its answer may be
	// a refusal of the ask's state, never not_found); one of another space gets not_found.
	reaches := func(r Role, res *mcp.CallToolResult, ok func(string) bool) {
		t.Helper()
		text := Text(res)
		if r.Space != home {
			if !res.IsError || !strings.HasPrefix(text, ask.ENotFound) {
				t.Errorf("as %s: a tool reached another space's ask: %s", r.Name, text)
			}
			return
		}
		if strings.HasPrefix(text, ask.ENotFound) || strings.HasPrefix(text, ask.EForbidden) || !ok(text) {
			t.Errorf("as %s: %s", r.Name, text)
		}
	}
	isReply := func(n int) func(string) bool {
		return func(text string) bool { return strings.Contains(text, `"askId":"`+asks[n].answered.ID+`"`) }
	}
	refusesState := func(text string) bool {
		return strings.HasPrefix(text, ask.EHumansTurn) || strings.HasPrefix(text, ask.EAnswerInvalid) || strings.HasPrefix(text, ask.EInputInvalid)
	}

	type row struct {
		args  func(r Role, n int) map[string]any
		check func(r Role, n int, res *mcp.CallToolResult)
		// raises: the call makes an ask and waits on it; the check looks for it, then the call is
		// given up (the ask stays, as after a client's cancel).
		raises func(a *ask.Ask, r Role, n int) bool
	}
	marker := func(r Role, n int) string { return "matrix " + r.Name + " " + string(rune('a'+n)) }
	rows := map[string]row{
		"ask_question": {
			args: func(r Role, n int) map[string]any {
				return map[string]any{"question": marker(r, n), "project": "tool-matrix"}
			},
			raises: func(a *ask.Ask, r Role, n int) bool { return a.Question != nil && a.Question.Question == marker(r, n) },
		},
		"request_review": {
			args: func(r Role, n int) map[string]any {
				return map[string]any{"title": marker(r, n), "project": "tool-matrix", "content": []any{map[string]any{"type": "markdown", "text": "Look"}}}
			},
			raises: func(a *ask.Ask, r Role, n int) bool { return a.Review != nil && a.Review.Title == marker(r, n) },
		},
		"send_briefing": {
			args: func(r Role, n int) map[string]any {
				return map[string]any{"title": marker(r, n), "project": "tool-matrix", "sections": []any{map[string]any{"points": []any{map[string]any{"title": "One"}}}}}
			},
			raises: func(a *ask.Ask, r Role, n int) bool { return a.Briefing != nil && a.Briefing.Title == marker(r, n) },
		},
		"await_reply": {
			args:  func(_ Role, n int) map[string]any { return map[string]any{"askId": asks[n].answered.ID} },
			check: func(r Role, n int, res *mcp.CallToolResult) { reaches(r, res, isReply(n)) },
		},
		"answer_follow_up": {
			args: func(_ Role, n int) map[string]any {
				return map[string]any{"askId": asks[n].open.ID, "answer": "an answer nobody asked for"}
			},
			check: func(r Role, _ int, res *mcp.CallToolResult) { reaches(r, res, refusesState) },
		},
		"answer_briefing": {
			args: func(_ Role, n int) map[string]any {
				return map[string]any{"askId": asks[n].open.ID, "answers": []any{map[string]any{"point": "1", "answer": "done"}}}
			},
			check: func(r Role, _ int, res *mcp.CallToolResult) { reaches(r, res, refusesState) },
		},
		"get_inbox_link": {
			args: func(_ Role, n int) map[string]any { return map[string]any{"askId": asks[n].open.ID} },
			check: func(r Role, n int, res *mcp.CallToolResult) {
				reaches(r, res, func(text string) bool {
					return strings.Contains(text, "/asks/"+asks[n].open.ID) && !strings.Contains(text, "token")
				})
			},
		},
		"list_open_asks": {
			args: func(Role, int) map[string]any { return map[string]any{} },
			check: func(r Role, _ int, res *mcp.CallToolResult) {
				if res.IsError {
					t.Errorf("list_open_asks as %s: %s", r.Name, Text(res))
				} else if r.Space != home && strings.Contains(Text(res), first.open.ID) {
					t.Errorf("list_open_asks as %s lists another space's ask: %s", r.Name, Text(res))
				}
			},
		},
		// Only an agent raises an approval, and only one Loopback can show as it runs: a person's
		// credential is refused before anything else; the agent's reaches the domain, which refuses
		// an input hiding a bidirectional control (so nothing waits, and nothing is raised).
		"request_approval": {
			args: func(Role, int) map[string]any {
				return map[string]any{"tool_name": "Bash", "input": map[string]any{"command": "ls \u202egnp.exe"}, "project": "tool-matrix"}
			},
			check: func(r Role, _ int, res *mcp.CallToolResult) {
				want := ask.EForbidden
				if r.Name == "agent" {
					want = ask.EInputInvalid
				}
				if !res.IsError || !strings.HasPrefix(Text(res), want) {
					t.Errorf("request_approval as %s: %s, want %s", r.Name, Text(res), want)
				}
			},
		},
		"request_upload": {
			args: func(Role, int) map[string]any { return map[string]any{"contentType": "image/png"} },
			check: func(r Role, _ int, res *mcp.CallToolResult) {
				var tk struct{ UploadID string }
				if res.IsError || json.Unmarshal([]byte(Text(res)), &tk) != nil {
					t.Errorf("request_upload as %s: %s", r.Name, Text(res))
					return
				}
				if _, err := uploads.UploadByID(ctx, r.Space, tk.UploadID); err != nil {
					t.Errorf("request_upload as %s: the ticket is not one of its own space's: %v", r.Name, err)
				}
			},
		},
	}

	list, err := roles[0].Client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) == 0 {
		t.Fatal("the server lists no tools")
	}
	for _, tool := range list.Tools {
		rw, ok := rows[tool.Name]
		if !ok {
			t.Errorf("the role matrix has no row for the tool %s", tool.Name)
			continue
		}
		for n, r := range roles {
			var req mcp.CallToolRequest
			req.Params.Name, req.Params.Arguments = tool.Name, rw.args(r, n)
			if rw.raises == nil {
				cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				res, err := r.Client.CallTool(cctx, req)
				cancel()
				if err != nil {
					t.Fatalf("%s as %s: %v", tool.Name, r.Name, err)
				}
				rw.check(r, n, res)
				continue
			}
			cctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); _, _ = r.Client.CallTool(cctx, req) }()
			var raised *ask.Ask
			for deadline := time.Now().Add(15 * time.Second); raised == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				asks, err := svc.Store.OpenAsks(ctx, r.Space)
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range asks {
					if rw.raises(a, r, n) {
						raised = a
					}
				}
			}
			cancel()
			<-done
			switch {
			case raised == nil:
				t.Errorf("%s as %s: no ask in its space %s", tool.Name, r.Name, r.Space)
			case raised.RaisedBy == nil || raised.RaisedBy.Name != r.Person:
				t.Errorf("%s as %s: raised by %+v, want %s", tool.Name, r.Name, raised.RaisedBy, r.Person)
			}
		}
	}
	// Nothing a tool did as another space changed the home space's asks.
	for _, o := range asks {
		for id, want := range map[string]int{o.open.ID: 0, o.answered.ID: 1} {
			a, err := svc.Find(ctx, home, id)
			if err != nil {
				t.Fatal(err)
			}
			if len(a.Thread) != want {
				b, _ := json.Marshal(a.Thread)
				t.Errorf("ask %s's thread changed under the matrix: %s", id, b)
			}
		}
	}
}

// raiseThrough has a role raise a question through its client (the call is given up once the ask
// is there, as after a client's cancel) and returns the ask, as its space stores it.
func raiseThrough(t *testing.T, svc *ask.Service, r Role, question string) *ask.Ask {
	t.Helper()
	ctx := context.Background()
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = "ask_question", map[string]any{"question": question, "project": "tool-matrix"}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _, _ = r.Client.CallTool(cctx, req) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		asks, err := svc.Store.OpenAsks(ctx, r.Space)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range asks {
			if a.Question != nil && a.Question.Question == question {
				return a
			}
		}
	}
	t.Fatalf("as %s: the question %q never reached its space", r.Name, question)
	return nil
}

// Text is a tool result's text content.
func Text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
