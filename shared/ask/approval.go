package ask

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/pmezard/go-difflib/difflib"
)

// Approvals (contract revision 3): a tool use an agent is about to make, put to the person to
// allow or deny. Loopback writes what the person sees (title, content, suggested rules) from the
// tool's input alone, never from anything the agent says about it, so that an agent cannot make a
// command look like another or widen a rule by what it writes.

// KindApproval is an agent's tool use waiting for the person's permission.
const KindApproval Kind = "approval"

// The person's decisions on an approval.
const (
	OutcomeAllowed Outcome = "allowed"
	OutcomeDenied  Outcome = "denied"
)

// AuthorLoopback is the author of a notice: something that happened to an ask that no one
// replied in Loopback.
const AuthorLoopback Author = "loopback"

// NoticeEvent says how an approval was decided or ended without a reply in Loopback.
type NoticeEvent string

const (
	NoticeRule      NoticeEvent = "rule"      // a rule decided it at once
	NoticeTerminal  NoticeEvent = "terminal"  // the person answered at the agent's own terminal
	NoticeWithdrawn NoticeEvent = "withdrawn" // the agent stopped waiting before anyone decided
	NoticeTooLate   NoticeEvent = "too_late"  // a decision came after the agent stopped waiting
)

// MaxDenyMessageRunes bounds a denial's message, from the contract.
const MaxDenyMessageRunes = 2000

// Sizes of an approval's fields, from the contract.
const (
	MaxToolRunes    = 200
	MaxCwdRunes     = 4096
	MaxSessionRunes = 200
	MaxToolUseID    = 200
	// maxTitleLine bounds an approval's title: one line for a list or a notification.
	maxTitleLine = MaxTitleRunes
)

// ApprovalPrompt is the contract's ApprovalPrompt: a tool use as the person is shown it.
type ApprovalPrompt struct {
	Tool        string          `json:"tool"`
	Title       string          `json:"title"`
	Content     []Block         `json:"content"`
	Input       json.RawMessage `json:"input"`
	Cwd         string          `json:"cwd,omitempty"`
	Session     string          `json:"session,omitempty"`
	Agent       *Actor          `json:"agent,omitempty"`
	Suggestions []RuleScope     `json:"suggestions"`
}

// ApprovalInput is a tool use an agent's client asks permission for: from Claude Code's
// PermissionRequest hook, its permission prompt tool (request_approval), or `loopback hook`.
type ApprovalInput struct {
	Tool      string
	Input     json.RawMessage // a JSON object: the tool's input exactly as it would run
	ToolUseID string
	Project   string // left out: the last element of Cwd
	Cwd       string
	Session   string
	Client    string
	// Follow, when the caller will wait on the approval, is the lease it holds (Origin.Follow).
	Follow *Follow
}

// Decision is how an approval was decided: by a person (in Loopback, or at the terminal), or by
// a rule. A waiting agent's client reads it to allow or deny the tool use.
type Decision struct {
	Outcome Outcome // OutcomeAllowed or OutcomeDenied
	// Message is what the agent is told of a denial (the person's words, or Loopback's).
	Message string
	// By is the person who decided in Loopback; nil for a rule or the terminal.
	By *Actor
	// RuleID is the rule that decided, for Event NoticeRule.
	RuleID string
	// Event is "" for a person's reply in Loopback, or the notice's event (rule, terminal).
	Event NoticeEvent
}

// Allowed reports whether the decision lets the tool use run.
func (d *Decision) Allowed() bool { return d != nil && d.Outcome == OutcomeAllowed }

// DefaultDenyMessage is what the agent is told of a denial that came without words.
const DefaultDenyMessage = "The person denied this tool use in Loopback."

// WithdrawnMessage is what a wait on an approval that ended with no decision returns: nothing
// was allowed.
const WithdrawnMessage = "No one decided in Loopback before the agent stopped waiting; nothing was allowed."

// ApprovalDecision is the decision that closed an approval, read from its thread; nil while it
// is undecided, when it ended without a decision (withdrawn), and for any other kind of ask.
func (a *Ask) ApprovalDecision() *Decision {
	if a.Kind != KindApproval || a.Status != Closed {
		return nil
	}
	for _, e := range a.Thread {
		switch {
		case e.Author == AuthorHuman && e.Reply != nil && (e.Reply.Outcome == OutcomeAllowed || e.Reply.Outcome == OutcomeDenied):
			d := &Decision{Outcome: e.Reply.Outcome, By: e.By}
			if d.Outcome == OutcomeDenied {
				d.Message = e.Reply.Message
				if d.Message == "" {
					d.Message = DefaultDenyMessage
				}
			}
			return d
		case e.Author == AuthorLoopback && (e.Event == NoticeRule || e.Event == NoticeTerminal) && e.Outcome != "":
			d := &Decision{Outcome: e.Outcome, RuleID: e.RuleID, Event: e.Event}
			if d.Outcome == OutcomeDenied {
				d.Message = e.Text
			}
			return d
		case e.Author == AuthorLoopback && e.Event == NoticeWithdrawn:
			return nil
		}
	}
	return nil
}

// Canonical is a JSON value written canonically: objects' keys sorted, no insignificant space,
// numbers as written. Two inputs that mean the same are the same bytes.
func Canonical(raw json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// decodeObject reads a tool's input: a JSON object, numbers kept as written.
func decodeObject(raw json.RawMessage) (map[string]any, error) {
	if err := NoDuplicateKeys(raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("must be a JSON object")
	}
	if dec.More() {
		return nil, fmt.Errorf("must be one JSON object")
	}
	return m, nil
}

// ProjectOf is an approval's project: the given one, or else the last element of cwd.
func ProjectOf(project, cwd string) string {
	if project != "" {
		return project
	}
	c := strings.TrimRight(strings.ReplaceAll(cwd, `\`, "/"), "/")
	if i := strings.LastIndex(c, "/"); i >= 0 {
		c = c[i+1:]
	}
	return c
}

// Validate checks an approval's input: the tool's name, its input a JSON object, and the sizes
// of the contract; all of it at most MaxInputBytes.
func (in *ApprovalInput) Validate() error {
	var c checker
	c.required("tool", in.Tool)
	c.oneLine("tool", in.Tool)
	c.maxRunes("tool", in.Tool, MaxToolRunes)
	c.oneLine("toolUseId", in.ToolUseID)
	c.maxRunes("toolUseId", in.ToolUseID, MaxToolUseID)
	c.oneLine("cwd", in.Cwd)
	c.maxRunes("cwd", in.Cwd, MaxCwdRunes)
	c.oneLine("session", in.Session)
	c.maxRunes("session", in.Session, MaxSessionRunes)
	if in.Project == "" && ProjectOf("", in.Cwd) == "" {
		c.fail(EInputInvalid, "project is required when cwd does not name a folder: give the project you are working in")
	} else {
		c.project(ProjectOf(in.Project, in.Cwd))
	}
	if c.err != nil {
		return c.err
	}
	if n := len(in.Input) + len(in.Tool) + len(in.Cwd) + len(in.Session) + len(in.ToolUseID) + len(in.Project); n > MaxInputBytes {
		return Errorf(EInputInvalid, "the tool use is %d bytes; all of it together may be at most %d (256 KiB)", n, MaxInputBytes)
	}
	if _, err := decodeObject(in.Input); err != nil {
		return Errorf(EInputInvalid, "input %v: the tool's input as it would run", err)
	}
	return nil
}

// NewApproval builds an open approval from a valid input: its prompt written from the tool's
// input alone. agent is the credential's holder.
func NewApproval(id string, in ApprovalInput, o Origin, agent *Actor, now Clock) (*Ask, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	p, err := BuildApprovalPrompt(in)
	if err != nil {
		return nil, err
	}
	p.Agent = agent
	a := newAsk(id, KindApproval, ProjectOf(in.Project, in.Cwd), o, now)
	a.Approval = p
	return a, nil
}

// BuildApprovalPrompt writes what the person is shown of a tool use, from its input alone.
func BuildApprovalPrompt(in ApprovalInput) (*ApprovalPrompt, error) {
	input, err := decodeObject(in.Input)
	if err != nil {
		return nil, Errorf(EInputInvalid, "input %v", err)
	}
	canon, err := Canonical(in.Input)
	if err != nil {
		return nil, Errorf(EInputInvalid, "input: %v", err)
	}
	p := &ApprovalPrompt{Tool: in.Tool, Input: canon, Cwd: in.Cwd, Session: in.Session}
	str := func(k string) (string, bool) {
		s, ok := input[k].(string)
		return s, ok && s != ""
	}
	shown := false
	switch {
	case in.Tool == ToolBash:
		if cmd, ok := str("command"); ok {
			p.Title = firstLine(cmd)
			p.Content = []Block{{Type: BlockCode, Code: cmd, Language: "sh"}}
			shown = true
		}
	case in.Tool == ToolEdit:
		file, ok := str("file_path")
		old, _ := input["old_string"].(string)
		nw, _ := input["new_string"].(string)
		if ok {
			p.Title = "Edit " + file
			p.Content = []Block{{Type: BlockDiff, Diff: unifiedDiff(file, old, nw, true), Filename: file}}
			shown = true
		}
	case in.Tool == ToolMultiEdit:
		file, ok := str("file_path")
		edits, _ := input["edits"].([]any)
		if ok && len(edits) > 0 {
			p.Title = "Edit " + file
			for _, e := range edits {
				m, _ := e.(map[string]any)
				old, _ := m["old_string"].(string)
				nw, _ := m["new_string"].(string)
				p.Content = append(p.Content, Block{Type: BlockDiff, Diff: unifiedDiff(file, old, nw, true), Filename: file})
			}
			shown = true
		}
	case in.Tool == ToolWrite:
		file, ok := str("file_path")
		content, _ := input["content"].(string)
		if ok {
			p.Title = "Write " + file
			p.Content = []Block{{Type: BlockDiff, Diff: unifiedDiff(file, "", content, false), Filename: file}}
			shown = true
		}
	case in.Tool == ToolRead:
		if file, ok := str("file_path"); ok {
			p.Title = "Read " + file
			p.Content = []Block{{Type: BlockCode, Code: file, Language: "text", Filename: path.Base(file)}}
			shown = true
		}
	case in.Tool == ToolWebFetch:
		if u, ok := str("url"); ok {
			p.Title = "Fetch " + u
			p.Content = []Block{{Type: BlockMarkdown, Text: "Fetch " + markdownURL(u)}}
			if prompt, ok := str("prompt"); ok {
				p.Content = append(p.Content, Block{Type: BlockCode, Code: prompt, Language: "text", Filename: "prompt"})
			}
			shown = true
		}
	case in.Tool == ToolWebSearch:
		if q, ok := str("query"); ok {
			p.Title = "Search the web: " + q
			p.Content = []Block{{Type: BlockCode, Code: q, Language: "text", Filename: "query"}}
			shown = true
		}
	}
	if !shown {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, canon, "", "  "); err != nil {
			return nil, Errorf(EInputInvalid, "input: %v", err)
		}
		p.Title = in.Tool
		if file, ok := str("notebook_path"); ok && in.Tool == ToolNotebookEdit {
			p.Title = "Edit " + file
		}
		p.Content = []Block{{Type: BlockCode, Code: pretty.String(), Language: "json"}}
	}
	p.Title = cut(strings.TrimSpace(CleanOneLine(p.Title)), maxTitleLine)
	if Blank(p.Title) {
		p.Title = cut(CleanOneLine(in.Tool), maxTitleLine)
	}
	var c checker
	c.blocks("the tool's input as shown", p.Content, true)
	if c.err != nil {
		// A bidirectional control would show the person another command than runs: not shown,
		// not decided here. The agent's own terminal decides.
		return nil, Errorf(EInputInvalid, "%s; Loopback does not put a tool use to the person that it cannot show as it runs", c.err.Message)
	}
	p.Suggestions = Suggest(in.Tool, input, ProjectOf(in.Project, in.Cwd), in.Cwd)
	return p, nil
}

// firstLine is a command's first line, with … when more follow.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return strings.TrimSpace(s[:i]) + " …"
	}
	return s
}

// markdownURL writes a URL as a markdown autolink when it is one plainly, and as code otherwise.
func markdownURL(u string) string {
	if URLHost(u) != "" && !strings.ContainsAny(u, " <>`\\\t\n\r") && utf8.ValidString(u) {
		return "<" + u + ">"
	}
	return "`` " + strings.ReplaceAll(CleanOneLine(u), "`", "'") + " ``"
}

// unifiedDiff is a unified diff of a file from old to new; the whole text as context when
// whole is false (a new file).
func unifiedDiff(file, old, nw string, whole bool) string {
	from := "a/" + strings.TrimPrefix(file, "/")
	if !whole {
		from = "/dev/null"
	}
	d := difflib.UnifiedDiff{
		A: difflib.SplitLines(old), B: difflib.SplitLines(nw),
		FromFile: from, ToFile: "b/" + strings.TrimPrefix(file, "/"), Context: 3,
	}
	if old == "" {
		d.A = nil
	}
	s, err := difflib.GetUnifiedDiffString(d)
	if err != nil || s == "" {
		// No change at all (old equals new): say so in diff form, so the block still shows it.
		return fmt.Sprintf("--- %s\n+++ b/%s\n", from, strings.TrimPrefix(file, "/"))
	}
	return s
}

// Suggest writes the rules Loopback suggests for a tool use, narrowest first, from its input
// alone: for Bash, the command's first two words and its first word as prefixes (a simple
// command only); for a file tool, the file and its folder; for WebFetch, the URL's host; for any
// other tool, the tool. Each in this project.
func Suggest(tool string, input map[string]any, project, cwd string) []RuleScope {
	out := []RuleScope{}
	add := func(sc RuleScope) {
		sc.Tool, sc.Project = tool, project
		if sc.Validate("") == nil {
			out = append(out, sc)
		}
	}
	u := NewToolUse(tool, input, project, cwd, "")
	switch {
	case tool == ToolBash:
		if !SimpleCommand(u.Command) {
			return out
		}
		w := commandWords(u.Command)
		if len(w) == 0 || !plainWord(w[0]) {
			return out
		}
		if len(w) > 1 && plainWord(w[1]) && !strings.HasPrefix(w[1], "-") && !strings.ContainsAny(w[1], "/~.") {
			add(RuleScope{CommandPrefix: w[0] + " " + w[1]})
		}
		add(RuleScope{CommandPrefix: w[0]})
	case FileTool(tool):
		if u.Path == "" || strings.ContainsAny(u.Path, `*\`) {
			return out
		}
		abs := u.Path
		if !path.IsAbs(abs) && path.IsAbs(cwd) {
			abs = path.Join(cwd, abs)
		}
		if !path.IsAbs(abs) {
			return out
		}
		abs = path.Clean(abs)
		c := path.Clean(cwd)
		if path.IsAbs(cwd) && strings.HasPrefix(abs, strings.TrimSuffix(c, "/")+"/") {
			rel := strings.TrimPrefix(abs[len(c):], "/")
			add(RuleScope{PathPattern: rel})
			if dir := path.Dir(rel); dir != "." {
				add(RuleScope{PathPattern: dir + "/**"})
			} else {
				add(RuleScope{PathPattern: "**"})
			}
		} else {
			add(RuleScope{PathPattern: abs})
			if dir := path.Dir(abs); dir != "/" {
				add(RuleScope{PathPattern: dir + "/**"})
			}
		}
	case tool == ToolWebFetch:
		if h := URLHost(u.URL); h != "" {
			add(RuleScope{Domain: h})
		}
	default:
		add(RuleScope{})
	}
	return out
}

// plainWord reports whether a command's word is plain enough to suggest as a prefix: no quotes,
// escapes, expansions or assignments, so that it means to the person what it means to the shell.
func plainWord(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("-_./+:@,%~", r):
		default:
			return false
		}
	}
	return true
}

// checkApprovalReply holds a person's reply on an approval to its rules: allowed or denied only,
// and a remember that names the approval's own tool and fits it (RuleScope.Validate).
func checkApprovalReply(p *ApprovalPrompt, r Reply) error {
	switch r.Outcome {
	case OutcomeAllowed, OutcomeDenied:
	default:
		return Errorf(EReplyInvalid, "an approval takes allowed or denied, not %s", r.Outcome)
	}
	if r.Remember == nil {
		return nil
	}
	if p == nil || r.Remember.Tool != p.Tool {
		tool := ""
		if p != nil {
			tool = p.Tool
		}
		return Errorf(EReplyInvalid, "remember.tool must be this approval's own tool, %s (got %q)", tool, r.Remember.Tool)
	}
	if err := r.Remember.Validate("remember."); err != nil {
		return &Error{Code: EReplyInvalid, Message: ErrorMessage(err)}
	}
	return nil
}
