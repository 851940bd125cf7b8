package mcptools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
)

// A result that carries a person's reply says, in words a model reads first, who answered, what
// they decided and what to do next (the tool, with the askId); then the contract's ToolReply as
// JSON, in a second text block, exactly as structuredContent holds it: a client that parses the
// text as JSON finds the JSON whole in a block of its own. The words come once more as an
// embedded text resource (replyURI), for clients that show the model structuredContent in place of
// the text blocks: Claude Code (2.1.332) does, and keeps only the non-text blocks beside it
// ("[Resource from loopback at loopback://asks/<id>/reply] <words>", then the JSON).

// toolReply is a ToolReply as structured content, the words, and the same JSON as text.
func toolReply(askID string, r ask.Reply) *mcp.CallToolResult {
	return replyResult(askID, r, replyWords(askID, r))
}

// taskReply is toolReply for a task's result. A client that runs tasks in the background hands
// the completion to the model as a notification that it is told not to take as the person's
// consent (Claude Code does): the words say how to receive the same reply as a direct tool
// result, and await_reply on an ask the person has moved on answers at once, never as a task.
func taskReply(askID string, r ask.Reply) *mcp.CallToolResult {
	words := replyWords(askID, r) + fmt.Sprintf(
		" This reached you as a background task's result: to receive the same reply as a direct tool result, call await_reply with {\"askId\": %q}; it returns at once.", askID)
	return replyResult(askID, r, words)
}

// ToolReply is what a blocking tool returns (the contract's ToolReply): the reply that ended its
// wait, as its structured content and as JSON text.
type ToolReply struct {
	AskID    string          `json:"askId"`
	Reply    ask.Reply       `json:"reply"`
	Deadline *DeadlinePassed `json:"deadline,omitempty"`
}

// DeadlinePassed is the contract's DeadlinePassed (revision 4): nobody answered by the ask's
// deadline, and Reply is the agent's own default (TookDefault) or a dismissal standing for "nobody
// answered"; Note says so in the words the text block opens with.
type DeadlinePassed struct {
	At          string `json:"at"`
	TookDefault bool   `json:"tookDefault"`
	Note        string `json:"note"`
}

func replyResult(askID string, r ask.Reply, words string) *mcp.CallToolResult {
	tr := ToolReply{AskID: askID, Reply: r}
	if r.Deadline != nil {
		tr.Deadline = &DeadlinePassed{At: ask.FormatTime(r.Deadline.At), TookDefault: r.Deadline.Default, Note: deadlineNote(askID, r)}
	}
	b, _ := json.Marshal(tr)
	var structured map[string]any
	_ = json.Unmarshal(b, &structured)
	return &mcp.CallToolResult{
		StructuredContent: structured,
		Content: []mcp.Content{
			mcp.NewTextContent(words),
			mcp.NewTextContent(string(b)),
			mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: replyURI(askID), MIMEType: "text/plain", Text: words}),
		},
	}
}

// replyURI names the reply on an ask, as the embedded resource that carries its words.
func replyURI(askID string) string { return "loopback://asks/" + askID + "/reply" }

// personName is who gave a reply, as the model is told: their name, else their id.
func personName(by *ask.Actor) string {
	switch {
	case by == nil:
		return "The person"
	case strings.TrimSpace(by.Name) != "":
		return strings.TrimSpace(by.Name)
	case by.ID != "":
		return by.ID
	}
	return "The person"
}

// surfaceWords says where a reply was given, for the model: every surface is the person's own.
func surfaceWords(via ask.Surface) string {
	switch via {
	case ask.SurfaceSlack:
		return "in Slack, as the Slack user they linked to Loopback"
	case ask.SurfaceEmail:
		return "from Loopback's email, through a link sent to them alone"
	case ask.SurfacePush:
		return "from a Loopback notification on their device"
	}
	return "in Loopback's inbox"
}

// deadlineNote says, for a model to read, that nobody answered by the deadline: that the reply is
// its own default and no person's, or that there is no answer at all.
func deadlineNote(askID string, r ask.Reply) string {
	when := r.Deadline.At.UTC().Format("2006-01-02 15:04:05 UTC")
	if r.Deadline.Default {
		return fmt.Sprintf("Nobody answered your ask %s by its deadline, %s. This is NOT a person's answer: it is the default you set when you asked, taken because nobody answered: %s. The ask is closed. Go on with the default, and say wherever you report this decision that it was taken by default, without a person.",
			askID, when, ask.DescribeReply(r))
	}
	return fmt.Sprintf("Nobody answered your ask %s by its deadline, %s, and you set no default: there is no answer. Nobody approved, declined or chose anything; the reply's dismissed outcome only stands for that. The ask is closed: do not wait on it. Go on without the answer as you would without the person, or ask again if you still need one.",
		askID, when)
}

// replyWords says what a reply is: who answered, what they decided, what to do next.
func replyWords(askID string, r ask.Reply) string {
	if r.Deadline != nil {
		return deadlineNote(askID, r)
	}
	who := personName(r.By)
	own := fmt.Sprintf("This is %s's own reply to your ask %s, given %s.", who, askID, surfaceWords(r.Via))
	var decided, next string
	switch r.Outcome {
	case ask.OutcomeAnswered:
		var parts []string
		if len(r.Selected) > 0 {
			parts = append(parts, "chose "+quoteAll(r.Selected))
		}
		if strings.TrimSpace(r.Text) != "" {
			parts = append(parts, "wrote "+quote(r.Text))
		}
		decided = who + " answered: " + strings.Join(parts, ", and ") + "."
		next = "The question is closed: go on as they answered."
	case ask.OutcomeApproved:
		decided = who + " approved the review."
		if strings.TrimSpace(r.Note) != "" {
			decided = who + " approved the review, noting " + quote(r.Note) + "."
		}
		next = "The review is closed: go ahead."
		if len(r.Comments) > 0 {
			next = "The review is closed: go ahead, and take the line comments into account."
		}
	case ask.OutcomeChangesRequested:
		decided = who + " requested changes: " + quote(r.Feedback) + "."
		next = fmt.Sprintf("Make the changes, then call request_review with \"revises\": %q to put the new version up for review.", askID)
		if len(r.Comments) > 0 {
			next = fmt.Sprintf("Make the changes, addressing each line comment at its file and line, then call request_review with \"revises\": %q to put the new version up for review.", askID)
		}
	case ask.OutcomeFollowUp:
		decided = who + " asked back: " + quote(r.Question) + "."
		next = fmt.Sprintf("Answer them with answer_follow_up {\"askId\": %q, \"answer\": \"…\"}; it then waits for their next reply. The ask stays open.", askID)
	case ask.OutcomeDismissed:
		decided = who + " dismissed the ask without answering it."
		next = "It is closed: do not wait on it. Go on without it, or ask again differently if you still need an answer."
		if r.OnAgentsMove {
			// Revision 6: a person may close an ask while the agent owes a turn (an answer to
			// their question back, or on a briefing's points), typically one no agent waited on.
			decided = who + " dismissed the ask while it was your move, without waiting for your answer."
			next = "It is closed: nothing more is wanted on it. Do not answer it (answer_follow_up and answer_briefing are refused now) and do not wait on it. Go on without it, or ask again if you still need the person."
		}
	case ask.OutcomeResponded:
		var wrote, resolved []string
		for _, p := range r.Points {
			switch {
			case strings.TrimSpace(p.Text) != "" && !p.Resolved:
				wrote = append(wrote, fmt.Sprintf("on point %s: %s", p.Point, quote(p.Text)))
			case strings.TrimSpace(p.Text) != "":
				wrote = append(wrote, fmt.Sprintf("on point %s (resolved): %s", p.Point, quote(p.Text)))
				resolved = append(resolved, p.Point)
			default:
				resolved = append(resolved, p.Point)
			}
		}
		decided = who + " replied on the briefing"
		if len(wrote) > 0 {
			decided += ", writing " + strings.Join(wrote, "; ")
		}
		if len(resolved) > 0 {
			decided += "; resolved point " + strings.Join(resolved, ", ")
		}
		decided += "."
		if pending := pendingPoints(r); len(pending) > 0 {
			next = fmt.Sprintf("Answer every point they wrote on without resolving (%s) with answer_briefing {\"askId\": %q, \"answers\": […]}; it then waits for their next reply.", strings.Join(pending, ", "), askID)
		} else {
			next = "Every point is resolved, so the briefing is closed: go on."
		}
	default:
		decided = who + " replied (" + string(r.Outcome) + ")."
	}
	return strings.TrimSpace(decided+" "+own+" "+next) + lineCommentWords(r.Comments)
}

// lineCommentWords lists a reply's line comments (contract revision 7) for a model to read, after
// the reply's words, one a line, each at its place in the review's diff as `path:line`, the way
// compilers and linters name a line:
//
//	Line comments (2), each at its file and line of the diff:
//	- src/retry.go:12: “Wrap the error.”
//	- src/retry.go:12 (old file, a removed line): “This was the bug.”
//
// Empty without any.
func lineCommentWords(cs []ask.LineComment) string {
	if len(cs) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n\nLine comments (%d), each at its file and line of the diff:", len(cs))
	for _, c := range cs {
		b.WriteString("\n- " + c.Where() + ": " + quote(c.Text))
	}
	return b.String()
}

// pendingPoints are the points a responded reply leaves the agent to answer.
func pendingPoints(r ask.Reply) []string {
	var out []string
	for _, p := range r.Points {
		if strings.TrimSpace(p.Text) != "" && !p.Resolved {
			out = append(out, p.Point)
		}
	}
	return out
}

// quote quotes words for a model to read: in typographic quotes, kept as written (no escapes,
// which strconv.Quote would add to every line break and non-ASCII letter).
func quote(s string) string { return "“" + strings.TrimSpace(s) + "”" }

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = quote(s)
	}
	return strings.Join(q, ", ")
}
