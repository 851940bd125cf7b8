package mcptools_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/contract"
)

// The tools Loopback offers, and the contract model each one takes ("" for a schema of its own).
var toolInputs = map[string]string{
	"ask_question":     "QuestionInput",
	"request_review":   "ReviewInput",
	"send_briefing":    "BriefingInput",
	"answer_briefing":  "BriefingAnswerInput",
	"answer_follow_up": "FollowUpInput",
	"await_reply":      "",
	"get_inbox_link":   "InboxRequest",
	"request_upload":   "UploadRequest",
	"list_open_asks":   "",
	"request_approval": "ApprovalRequest",
}

var blockingTools = []string{"ask_question", "request_review", "send_briefing", "answer_briefing", "answer_follow_up", "await_reply"}

// TestToolsListWithTheClient: mcp-go's client lists the nine tools and reads what it needs.
func TestToolsListWithTheClient(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	for _, legacy := range []bool{false, true} {
		c := d.connect(t, clientOpts{Legacy: legacy})
		res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatalf("legacy=%v: tools/list: %v", legacy, err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			blocking := slices.Contains(blockingTools, tool.Name)
			switch {
			case blocking && (tool.Execution == nil || tool.Execution.TaskSupport != mcp.TaskSupportOptional):
				t.Errorf("%s: execution %+v, want taskSupport optional", tool.Name, tool.Execution)
			case !blocking && tool.Execution != nil && tool.Execution.TaskSupport != mcp.TaskSupportForbidden:
				t.Errorf("%s does not wait, yet offers tasks: %+v", tool.Name, tool.Execution)
			}
			if textOnly := tool.Name == "request_approval"; tool.OutputSchema.Type != "object" && !textOnly {
				t.Errorf("%s: the client sees no outputSchema", tool.Name)
			} else if textOnly && (tool.OutputSchema.Type != "" || tool.RawOutputSchema != nil) {
				t.Errorf("%s: an outputSchema, which would need structuredContent that Claude Code's permission prompt tool refuses", tool.Name)
			}
		}
		slices.Sort(names)
		want := slices.Sorted(maps.Keys(toolInputs))
		if !slices.Equal(names, want) {
			t.Fatalf("legacy=%v: tools %v, want %v", legacy, names, want)
		}
	}
}

// TestToolsListSchemas: each tool's schemas, as sent, are the contract's: its required fields,
// limits and doc comments; each blocking tool returns a ToolReply and may run as a task.
func TestToolsListSchemas(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	session := initSession(t, d.MCP, d.Token, testClientInfo)
	var list struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	mustRPC(t, d.MCP, d.Token, session, "tools/list", map[string]any{}, &list)
	tools := map[string]map[string]json.RawMessage{}
	for _, tool := range list.Tools {
		var name string
		json.Unmarshal(tool["name"], &name)
		tools[name] = tool
	}
	if len(tools) != len(toolInputs) {
		t.Fatalf("%d tools, want %d", len(tools), len(toolInputs))
	}

	for name, model := range toolInputs {
		t.Run(name, func(t *testing.T) {
			tool := tools[name]
			if tool == nil {
				t.Fatalf("no tool %s", name)
			}
			var description string
			json.Unmarshal(tool["description"], &description)
			if len(description) < 40 {
				t.Errorf("description %q is too thin for a model to choose the tool by", description)
			}
			if model != "" {
				want, err := contract.ToolSchema(model)
				if err != nil {
					t.Fatal(err)
				}
				if !jsonEqual(t, tool["inputSchema"], want) {
					t.Errorf("inputSchema is not the contract's %s:\n got %s\nwant %s", model, tool["inputSchema"], want)
				}
			}
			if !slices.Contains(blockingTools, name) {
				return
			}
			if !jsonEqual(t, tool["outputSchema"], contract.MustToolSchema("ToolReply")) {
				t.Errorf("outputSchema is not ToolReply: %s", tool["outputSchema"])
			}
			var exec struct {
				TaskSupport string `json:"taskSupport"`
			}
			if err := json.Unmarshal(tool["execution"], &exec); err != nil || exec.TaskSupport != "optional" {
				t.Errorf("execution %s, want taskSupport optional", tool["execution"])
			}
			if !strings.Contains(description, "await_reply") || !strings.Contains(description, "waits") {
				t.Errorf("the description does not say the call waits and what to do after: %q", description)
			}
			if !strings.Contains(description, "list_open_asks") || !strings.Contains(description, "timeout") {
				t.Errorf("the description does not say how to resume after a client's timeout (list_open_asks): %q", description)
			}
		})
	}

	// The rules a model reads in the schemas, checked one by one.
	type rule struct {
		tool, path, keyword string
		want                any // a number for limits, a []string for required, a substring for descriptions
	}
	rules := []rule{
		{"ask_question", "", "required", []string{"question", "project"}},
		{"ask_question", "options", "minItems", 2.0},
		{"ask_question", "options", "maxItems", 6.0},
		{"ask_question", "options.items.label", "maxLength", 80.0},
		{"ask_question", "options.items", "required", []string{"label"}},
		{"ask_question", "project", "description", "git rev-parse --show-toplevel"},
		{"ask_question", "question", "description", "markdown"},
		{"request_review", "", "required", []string{"title", "content", "project"}},
		{"request_review", "title", "maxLength", 200.0},
		{"request_review", "content", "minItems", 1.0},
		{"request_review", "project", "description", "git rev-parse --show-toplevel"},
		{"send_briefing", "", "required", []string{"title", "sections", "project"}},
		{"send_briefing", "title", "maxLength", 200.0},
		{"send_briefing", "sections.items.points.items.title", "maxLength", 200.0},
		{"send_briefing", "project", "description", "git rev-parse --show-toplevel"},
		{"answer_briefing", "", "required", []string{"askId", "answers"}},
		{"answer_briefing", "answers", "minItems", 1.0},
		{"answer_briefing", "answers.items", "required", []string{"point", "answer"}},
		{"answer_follow_up", "", "required", []string{"askId", "answer"}},
		{"answer_follow_up", "answer", "minLength", 1.0},
		{"await_reply", "", "required", []string{"askId"}},
		{"await_reply", "askId", "description", "ask"},
		{"request_upload", "", "required", []string{"contentType"}},
		{"request_approval", "", "required", []string{"tool_name", "input"}},
	}
	for _, r := range rules {
		t.Run(r.tool+"/"+r.path+"/"+r.keyword, func(t *testing.T) {
			var root map[string]any
			if err := json.Unmarshal(tools[r.tool]["inputSchema"], &root); err != nil {
				t.Fatal(err)
			}
			node := schemaAt(t, root, r.path)
			got, ok := node[r.keyword]
			if !ok {
				t.Fatalf("%s has no %s: %v", r.path, r.keyword, node)
			}
			switch want := r.want.(type) {
			case float64:
				if got != want {
					t.Errorf("%s %s is %v, want %v", r.path, r.keyword, got, want)
				}
			case string:
				if s, _ := got.(string); !strings.Contains(s, want) {
					t.Errorf("%s %s is %q, want it to mention %q", r.path, r.keyword, s, want)
				}
			case []string:
				var have []string
				for _, v := range got.([]any) {
					have = append(have, v.(string))
				}
				for _, w := range want {
					if !slices.Contains(have, w) {
						t.Errorf("%s required is %v, missing %q", r.path, have, w)
					}
				}
			}
		})
	}
}

// schemaAt walks a dotted path of property names (and "items") through a schema, following
// references into $defs.
func schemaAt(t *testing.T, root map[string]any, path string) map[string]any {
	t.Helper()
	node := root
	resolve := func() {
		for {
			ref, ok := node["$ref"].(string)
			if !ok {
				return
			}
			name, ok := strings.CutPrefix(ref, "#/$defs/")
			if !ok {
				t.Fatalf("unexpected $ref %q", ref)
			}
			node = root["$defs"].(map[string]any)[name].(map[string]any)
		}
	}
	if path == "" {
		return node
	}
	for _, step := range strings.Split(path, ".") {
		resolve()
		var next any
		if step == "items" {
			next = node["items"]
		} else {
			props, _ := node["properties"].(map[string]any)
			next = props[step]
		}
		m, ok := next.(map[string]any)
		if !ok {
			t.Fatalf("the schema has nothing at %s (stuck at %q)", path, step)
		}
		node = m
	}
	resolve()
	return node
}
