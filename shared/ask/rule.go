package ask

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"
	"unicode/utf8"
)

// Rules (contract revision 3) decide a space's approvals without asking: a tool use a rule covers
// is allowed or denied at once. What a rule covers, and what never matches, is decided here only
// (docs/rules.md): a deny rule wins over an allow rule; a command prefix covers only a simple
// command, word for word; a path pattern is matched against the path relative to the working
// directory, and a path that leaves it matches only an absolute pattern; a domain is the URL's
// host exactly, or its subdomains with a leading `*.`.

// Rule codes.
const (
	ERuleInvalid = "rule.invalid" // a rule (or a reply's remember) that does not fit RuleScope's rules
	ERuleLimit   = "rule.limit"   // a space that holds MaxRulesPerSpace rules already
)

// MaxRulesPerSpace bounds the rules of one space (docs/limits.md): every approval is matched
// against all of them, and the inbox lists them on one page.
const MaxRulesPerSpace = 500

// Rule lengths, from the contract.
const (
	MaxRuleToolRunes    = 200
	MaxRulePrefixRunes  = 500
	MaxRulePatternRunes = 500
	MaxRuleDomainRunes  = 253
)

// Effects of a rule.
const (
	EffectAllow = "allow"
	EffectDeny  = "deny"
)

// Tools whose scopes are narrowed by something more than the tool.
const (
	ToolBash         = "Bash"
	ToolEdit         = "Edit"
	ToolMultiEdit    = "MultiEdit"
	ToolWrite        = "Write"
	ToolRead         = "Read"
	ToolNotebookEdit = "NotebookEdit"
	ToolWebFetch     = "WebFetch"
	ToolWebSearch    = "WebSearch"
)

// FileTool reports whether tool works on one file named in its input (a pathPattern fits it).
func FileTool(tool string) bool {
	switch tool {
	case ToolEdit, ToolMultiEdit, ToolWrite, ToolRead, ToolNotebookEdit:
		return true
	}
	return false
}

// RuleScope is where a rule applies: the contract's RuleScope. What is left out applies everywhere.
type RuleScope struct {
	Tool          string `json:"tool"`
	CommandPrefix string `json:"commandPrefix,omitempty"`
	PathPattern   string `json:"pathPattern,omitempty"`
	Domain        string `json:"domain,omitempty"`
	Project       string `json:"project,omitempty"`
	Agent         string `json:"agent,omitempty"`
}

// RuleInput is a rule to make or change: the contract's RuleInput.
type RuleInput struct {
	Effect string `json:"effect"`
	RuleScope
}

// Rule is a rule of a space, as stored and as the contract's Rule shows it.
type Rule struct {
	ID    string `json:"id"`
	Space string `json:"-"`
	RuleInput
	CreatedBy     Actor      `json:"createdBy"`
	CreatedAt     time.Time  `json:"-"`
	UpdatedAt     time.Time  `json:"-"`
	Matches       int        `json:"matches"`
	LastMatchedAt *time.Time `json:"-"`
}

// MarshalJSON writes the contract's Rule.
func (r Rule) MarshalJSON() ([]byte, error) {
	o := newObject()
	o.field("id", r.ID)
	o.field("effect", r.Effect)
	o.field("tool", r.Tool)
	o.str("commandPrefix", r.CommandPrefix)
	o.str("pathPattern", r.PathPattern)
	o.str("domain", r.Domain)
	o.str("project", r.Project)
	o.str("agent", r.Agent)
	o.field("createdBy", r.CreatedBy)
	o.time("createdAt", r.CreatedAt)
	o.time("updatedAt", r.UpdatedAt)
	o.field("matches", r.Matches)
	if r.LastMatchedAt != nil {
		o.time("lastMatchedAt", *r.LastMatchedAt)
	}
	return o.bytes()
}

// RuleList is the contract's RuleList: a space's rules, newest first.
type RuleList struct {
	Items []*Rule `json:"items"`
}

// RuleStore keeps rules. Adapters: sqlite, dynamo; both pass asktest.TestRuleStore.
type RuleStore interface {
	// CreateRule stores a new rule unless its space holds max rules already: then it stores
	// nothing and returns RulesFull(max). An id already stored is an error wrapping
	// ErrAlreadyStored.
	CreateRule(ctx context.Context, r *Rule, max int) error
	// Rules lists a space's rules, newest first (by CreatedAt, then id, descending).
	Rules(ctx context.Context, space string) ([]*Rule, error)
	// UpdateRule replaces a stored rule's effect, scope, CreatedBy and UpdatedAt, keeping its
	// matches; ErrNotFound when the space holds no rule of that id.
	UpdateRule(ctx context.Context, r *Rule) error
	// DeleteRule removes a rule; ErrNotFound when the space holds no rule of that id.
	DeleteRule(ctx context.Context, space, id string) error
	// CountRuleMatch adds one to a rule's matches and sets its LastMatchedAt to at (never
	// backwards); ErrNotFound when the rule is gone.
	CountRuleMatch(ctx context.Context, space, id string, at time.Time) error
}

// RulesFull refuses a rule that a full space has no room for.
func RulesFull(max int) *Error {
	return Errorf(ERuleLimit, "this space holds %d rules, as many as it may: delete a rule you no longer need (or widen one) before you make another", max)
}

// RuleNotFound refuses a rule id the space does not hold.
func RuleNotFound(id string) *Error { return Errorf(ENotFound, "there is no rule %s", id) }

// Validate checks a rule to make or change against the contract's rules (ERuleInvalid).
func (in *RuleInput) Validate() error {
	var c checker
	switch in.Effect {
	case EffectAllow, EffectDeny:
	case "":
		c.fail(ERuleInvalid, "effect is required: allow or deny")
	default:
		c.fail(ERuleInvalid, "effect must be allow or deny (got %q)", in.Effect)
	}
	if err := in.RuleScope.Validate(""); err != nil && c.err == nil {
		return err
	}
	return errOrNil(c.err)
}

// Validate checks a scope: its tool, and at most one narrowing that fits the tool (a command
// prefix for Bash, a path pattern for a file tool, a domain for WebFetch). prefix names the
// field's place in the message ("remember." for a reply's).
func (sc *RuleScope) Validate(prefix string) error {
	var c checker
	f := func(name string) string { return prefix + name }
	text := func(name, v string, max int, optional bool) {
		if optional && v == "" {
			return
		}
		if !utf8.ValidString(v) {
			c.fail(ERuleInvalid, "%s is not UTF-8 text", f(name))
			return
		}
		c.requiredCode(ERuleInvalid, f(name), v)
		if i := strings.IndexFunc(v, notOneLine); i >= 0 {
			r, _ := utf8.DecodeRuneInString(v[i:])
			c.fail(ERuleInvalid, "%s must be one line of text: it holds %U at byte %d; remove it", f(name), r, i)
		}
		if n := utf8.RuneCountInString(v); n > max {
			c.fail(ERuleInvalid, "%s is %d characters; at most %d are allowed", f(name), n, max)
		}
		if strings.TrimSpace(v) != v {
			c.fail(ERuleInvalid, "%s begins or ends with whitespace; remove it", f(name))
		}
	}
	text("tool", sc.Tool, MaxRuleToolRunes, false)
	text("commandPrefix", sc.CommandPrefix, MaxRulePrefixRunes, true)
	text("pathPattern", sc.PathPattern, MaxRulePatternRunes, true)
	text("domain", sc.Domain, MaxRuleDomainRunes, true)
	text("project", sc.Project, MaxProjectRunes, true)
	text("agent", sc.Agent, MaxNameRunes, true)
	if c.err != nil {
		return c.err
	}
	n := 0
	for _, v := range []string{sc.CommandPrefix, sc.PathPattern, sc.Domain} {
		if v != "" {
			n++
		}
	}
	switch {
	case n > 1:
		c.fail(ERuleInvalid, "give at most one of %s, %s and %s", f("commandPrefix"), f("pathPattern"), f("domain"))
	case sc.CommandPrefix != "" && sc.Tool != ToolBash:
		c.fail(ERuleInvalid, "%s fits only the tool Bash, not %s", f("commandPrefix"), sc.Tool)
	case sc.PathPattern != "" && !FileTool(sc.Tool):
		c.fail(ERuleInvalid, "%s fits only a file tool (Edit, MultiEdit, Write, Read, NotebookEdit), not %s", f("pathPattern"), sc.Tool)
	case sc.Domain != "" && sc.Tool != ToolWebFetch:
		c.fail(ERuleInvalid, "%s fits only the tool WebFetch, not %s", f("domain"), sc.Tool)
	case sc.CommandPrefix != "":
		if why := notSimple(sc.CommandPrefix); why != "" {
			c.fail(ERuleInvalid, "%s must be a simple command: it holds %s, and a rule never covers a command that chains, pipes, redirects or substitutes", f("commandPrefix"), why)
		}
	case sc.PathPattern != "":
		if err := checkPattern(sc.PathPattern); err != "" {
			c.fail(ERuleInvalid, "%s: %s", f("pathPattern"), err)
		}
	case sc.Domain != "":
		if !validDomainPattern(sc.Domain) {
			c.fail(ERuleInvalid, "%s must be a host name in lower case (letters, digits, hyphens and dots; punycode for other scripts), optionally after `*.` for every subdomain: %q is not", f("domain"), sc.Domain)
		}
	}
	return errOrNil(c.err)
}

// NewRule makes a rule of a space from a valid input.
func NewRule(id, space string, in RuleInput, by Actor, now time.Time) (*Rule, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	return &Rule{ID: id, Space: space, RuleInput: in, CreatedBy: by, CreatedAt: now, UpdatedAt: now}, nil
}

// --- what a tool use is, as rules see it ---

// ToolUse is a tool use as rules match it: the tool, where, by whom, and the one thing in its
// input a narrowing names (a command, a file's path, a URL).
type ToolUse struct {
	Tool    string
	Project string
	Cwd     string
	Agent   string // the agent's Actor.ID
	Command string // Bash: input.command
	Path    string // a file tool: input.file_path (notebook_path for NotebookEdit)
	URL     string // WebFetch: input.url
}

// NewToolUse reads what rules match from a tool's input (a JSON object).
func NewToolUse(tool string, input map[string]any, project, cwd, agent string) ToolUse {
	u := ToolUse{Tool: tool, Project: project, Cwd: cwd, Agent: agent}
	str := func(k string) string {
		s, _ := input[k].(string)
		return s
	}
	switch {
	case tool == ToolBash:
		u.Command = str("command")
	case tool == ToolNotebookEdit:
		u.Path = str("notebook_path")
	case FileTool(tool):
		u.Path = str("file_path")
	case tool == ToolWebFetch:
		u.URL = str("url")
	}
	return u
}

// Covers reports whether the rule's scope covers the tool use.
func (sc *RuleScope) Covers(u ToolUse) bool {
	if sc.Tool != u.Tool {
		return false
	}
	if sc.Project != "" && sc.Project != u.Project {
		return false
	}
	if sc.Agent != "" && sc.Agent != u.Agent {
		return false
	}
	switch {
	case sc.CommandPrefix != "":
		return PrefixCovers(sc.CommandPrefix, u.Command)
	case sc.PathPattern != "":
		return PatternCovers(sc.PathPattern, u.Path, u.Cwd)
	case sc.Domain != "":
		return DomainCovers(sc.Domain, u.URL)
	}
	return true
}

// MatchRules returns the rule that decides the tool use, if any: a deny rule that covers it
// wins over any allow rule; among rules of one effect the first in the list (newest first).
func MatchRules(rules []*Rule, u ToolUse) *Rule {
	var allow *Rule
	for _, r := range rules {
		if !r.Covers(u) {
			continue
		}
		if r.Effect == EffectDeny {
			return r
		}
		if allow == nil && r.Effect == EffectAllow {
			allow = r
		}
	}
	return allow
}

// --- commands ---

// notSimple says why a command is not a simple one ("" when it is): it chains, pipes, redirects,
// substitutes, runs in the background, spans lines, or holds a control character. A rule's
// prefix never covers such a command, so that no prefix lets a second command through.
func notSimple(cmd string) string {
	for _, bad := range []string{";", "&", "|", ">", "<", "`", "$(", "\n", "\r"} {
		if strings.Contains(cmd, bad) {
			return fmt.Sprintf("%q", bad)
		}
	}
	for i, r := range cmd {
		if r != '\t' && notOneLine(r) {
			return fmt.Sprintf("%U at byte %d", r, i)
		}
		if r == utf8.RuneError {
			return "bytes that are not UTF-8"
		}
	}
	return ""
}

// SimpleCommand reports whether cmd is a simple command: no `;`, `&`, `|`, `>`, `<`, backtick,
// `$(`, line break or control character.
func SimpleCommand(cmd string) bool { return notSimple(cmd) == "" }

// commandWords splits a command into words at ASCII spaces and tabs only: the shell splits
// there, and at no other space (a no-break space is part of a word to it).
func commandWords(cmd string) []string {
	return strings.FieldsFunc(cmd, func(r rune) bool { return r == ' ' || r == '\t' })
}

// PrefixCovers reports whether a command starts, word for word, with the prefix, and is simple.
func PrefixCovers(prefix, cmd string) bool {
	if !SimpleCommand(cmd) || !SimpleCommand(prefix) {
		return false
	}
	pw, cw := commandWords(prefix), commandWords(cmd)
	if len(pw) == 0 || len(pw) > len(cw) {
		return false
	}
	for i := range pw {
		if pw[i] != cw[i] {
			return false
		}
	}
	return true
}

// --- paths ---

// checkPattern says what is wrong with a path pattern ("" when nothing is): segments separated by
// `/`, none empty, `.` or `..`, no backslash, `**` only as a whole segment.
func checkPattern(p string) string {
	if strings.Contains(p, `\`) {
		return "use / between folders; a backslash is not allowed"
	}
	rest := strings.TrimPrefix(p, "/")
	if rest == "" {
		return "name at least one folder or file after /"
	}
	for _, seg := range strings.Split(rest, "/") {
		switch {
		case seg == "":
			return "a folder's name is empty (two / in a row, or a / at the end: write dir/** for a folder)"
		case seg == "." || seg == "..":
			return fmt.Sprintf("%q is not allowed in a pattern: write the path as it is, relative to the working directory or absolute", seg)
		case seg != "**" && strings.Contains(seg, "**"):
			return fmt.Sprintf("%q: ** stands for whole folders and must be a segment of its own, such as src/**", seg)
		}
	}
	return ""
}

// PatternCovers reports whether a file's path matches a pattern. A relative path is taken
// relative to cwd. A path inside cwd matches a relative pattern by its path relative to cwd,
// and an absolute pattern by its absolute path; a path outside cwd (or with no cwd to place
// it) matches only an absolute pattern, by its absolute path.
func PatternCovers(pattern, file, cwd string) bool {
	if file == "" || checkPattern(pattern) != "" || strings.ContainsRune(file, 0) {
		return false
	}
	abs := file
	if !path.IsAbs(abs) {
		if cwd == "" || !path.IsAbs(cwd) {
			abs = "" // nowhere to place it
		} else {
			abs = path.Join(cwd, file)
		}
	}
	if abs != "" {
		abs = path.Clean(abs)
	}
	if strings.HasPrefix(pattern, "/") {
		return abs != "" && globMatch(strings.Split(pattern[1:], "/"), strings.Split(abs[1:], "/"))
	}
	if abs == "" || cwd == "" || !path.IsAbs(cwd) {
		return false
	}
	c := path.Clean(cwd)
	var rel string
	switch {
	case c == "/":
		rel = abs[1:]
	case strings.HasPrefix(abs, c+"/"):
		rel = abs[len(c)+1:]
	default:
		return false // outside the working directory (or the directory itself)
	}
	if rel == "" {
		return false
	}
	return globMatch(strings.Split(pattern, "/"), strings.Split(rel, "/"))
}

// globMatch matches path segments against pattern segments: `**` any number of segments (none
// included), `*` within a segment any run of characters; everything else literally.
func globMatch(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if globMatch(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 || !segMatch(pat[0], segs[0]) {
		return false
	}
	return globMatch(pat[1:], segs[1:])
}

// segMatch matches one segment: `*` any run of characters (none included), the rest literally.
func segMatch(pat, s string) bool {
	parts := strings.Split(pat, "*")
	if len(parts) == 1 {
		return pat == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}

// --- domains ---

// validHost reports whether h is a host name Loopback matches: lower-case ASCII labels of
// letters, digits and hyphens (punycode for other scripts), or an IP address's digits and dots.
func validHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			ch := label[i]
			if !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '-') {
				return false
			}
		}
	}
	return true
}

func validDomainPattern(d string) bool {
	return validHost(strings.TrimPrefix(d, "*."))
}

// URLHost is the host a fetch of raw would reach, lower case, if raw is an http(s) URL with a
// host Loopback matches; "" otherwise.
func URLHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" {
		return ""
	}
	h := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if !validHost(h) {
		return ""
	}
	return h
}

// DomainCovers reports whether a URL's host is the domain, or (for `*.d`) a subdomain of d.
func DomainCovers(domain, rawURL string) bool {
	h := URLHost(rawURL)
	if h == "" || !validDomainPattern(domain) {
		return false
	}
	if d, ok := strings.CutPrefix(domain, "*."); ok {
		return strings.HasSuffix(h, "."+d)
	}
	return h == domain
}
