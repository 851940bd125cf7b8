package mcptools_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
)

// TestLineCommentsReachTheAgent (contract revision 7): a person's line comments on a review reach
// the agent waiting in request_review, through a real MCP client: in the words, each as
// `path:line` with its text, and in structuredContent as the reply's comments. A comment on a line
// the diff does not show is refused with words that say which lines it shows, and nothing is
// written: the agent goes on waiting.
func TestLineCommentsReachTheAgent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply map[string]any
		says  []string
	}{
		{"approved", map[string]any{"outcome": "approved", "comments": []map[string]any{
			{"path": "cache.go", "line": 1, "side": "new", "text": "Name the file after the project."},
			{"path": "cache.go", "line": 1, "side": "old", "text": "Keep Redis for the sessions."},
		}}, []string{"Olga Owner approved the review", "take the line comments into account",
			"Line comments (2), each at its file and line of the diff:\n- cache.go:1: “Name the file after the project.”\n- cache.go:1 (old file, a removed line): “Keep Redis for the sessions.”"}},
		{"changes_requested", map[string]any{"outcome": "changes_requested", "feedback": "See my comment.", "comments": []map[string]any{
			{"path": "cache.go", "line": 1, "side": "new", "text": "Use modernc.org/sqlite, no cgo."},
		}}, []string{"Olga Owner requested changes: “See my comment.”", "addressing each line comment", `"revises"`,
			"Line comments (1), each at its file and line of the diff:\n- cache.go:1: “Use modernc.org/sqlite, no cgo.”"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newTestDeployment(t, deployOpts{})
			c := d.connect(t, clientOpts{})
			p := startTool(t, c, "request_review", review("comments", ""))
			id := d.waitingAsk(t, 1).ID

			bad := map[string]any{"outcome": "approved", "comments": []map[string]any{
				{"path": "cache.go", "line": 7, "side": "new", "text": "?"}}}
			status, body := d.api(t, d.Token, "POST", "/api/v1/asks/"+id+"/reply", bad)
			if status != http.StatusUnprocessableEntity || !strings.Contains(string(body), "reply.invalid") ||
				!strings.Contains(string(body), "does not show line 7 of cache.go") || !strings.Contains(string(body), "new lines 1") {
				t.Fatalf("a comment off the diff: %d %s", status, body)
			}
			if p.returned() {
				t.Fatal("a refused reply ended the agent's wait")
			}

			d.replyAs(t, d.Token, id, tc.reply)
			res := p.result(t)
			words := replyWords(t, res)
			for _, s := range tc.says {
				if !strings.Contains(words, s) {
					t.Errorf("the words do not say %q:\n%s", s, words)
				}
			}
			tr := toolReply(t, res)
			want := tc.reply["comments"].([]map[string]any)
			if len(tr.Reply.Comments) != len(want) {
				t.Fatalf("structured comments: %+v", tr.Reply.Comments)
			}
			for i, c := range tr.Reply.Comments {
				if c.Path != want[i]["path"] || c.Line != want[i]["line"] || string(c.Side) != want[i]["side"] || c.Text != want[i]["text"] {
					t.Errorf("comment %d: %+v, want %v", i, c, want[i])
				}
			}
			sc := res.StructuredContent.(map[string]any)["reply"].(map[string]any)
			if cs, _ := sc["comments"].([]any); len(cs) != len(want) {
				t.Errorf("structuredContent.reply.comments: %v", sc)
			}
			if tr.Reply.Outcome != ask.Outcome(tc.name) {
				t.Errorf("outcome %s", tr.Reply.Outcome)
			}
		})
	}
}
