package ask

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits from the contract. MaxInputBytes bounds all of an input together, measured as its JSON.
const (
	MaxInputBytes = 256 << 10
	MinOptions    = 2
	MaxOptions    = 6
	MaxLabelRunes = 80
	MaxTitleRunes = 200
	MaxPoints     = 50
	MaxPointDepth = 3
)

// Limits where the contract is silent but people would expect one (docs/design/asks.md).
const (
	// MaxProjectRunes bounds a project's name: a folder's name, shown on every row of the inbox.
	MaxProjectRunes = 200
	// MaxBriefingPoints bounds a briefing's points however they were added: its fifty, and the
	// sub-points the agent's answers break them into.
	MaxBriefingPoints = 500
	// MaxSubPoints bounds the sub-points one answer breaks a point into.
	MaxSubPoints = 20
	// MaxNameRunes bounds a credential holder's name: shown on every ask it raises or answers.
	MaxNameRunes = 200
)

// CheckName checks the name a credential is made for (a person or an agent): text, more than
// blank, one line (OneLine), at most MaxNameRunes characters.
func CheckName(name string) error {
	var c checker
	if !utf8.ValidString(name) {
		c.fail(EInputInvalid, "name is not UTF-8 text")
	}
	c.oneLine("name", name)
	c.required("name", name)
	c.maxRunes("name", name, MaxNameRunes)
	if c.err != nil {
		return c.err
	}
	return nil
}

// QuestionInput is a question for the person, with optional choices.
type QuestionInput struct {
	Question string   `json:"question"`
	Options  []Choice `json:"options,omitempty"`
	Multiple bool     `json:"multiple,omitempty"`
	Context  string   `json:"context,omitempty"`
	Project  string   `json:"project"`
	// Deadline, when given, closes the question if nobody answers by then (revision 4).
	Deadline *DeadlineInput `json:"deadline,omitempty"`
}

// ReviewInput is work put in front of the person for approval or feedback.
type ReviewInput struct {
	Title   string  `json:"title"`
	Content []Block `json:"content"`
	Summary string  `json:"summary,omitempty"`
	Revises string  `json:"revises,omitempty"`
	Project string  `json:"project"`
	// Deadline, when given, closes the review if nobody answers by then (revision 4).
	Deadline *DeadlineInput `json:"deadline,omitempty"`
}

// BriefingPoint is a point as the agent sends it, before it is numbered.
type BriefingPoint struct {
	Title   string  `json:"title"`
	Detail  string  `json:"detail,omitempty"`
	Content []Block `json:"content,omitempty"`
}

// BriefingSection is a list of points under an optional heading.
type BriefingSection struct {
	Title  string          `json:"title,omitempty"`
	Points []BriefingPoint `json:"points"`
}

// BriefingInput is something explained as points the person can reply on one at a time.
type BriefingInput struct {
	Title    string            `json:"title"`
	Summary  string            `json:"summary,omitempty"`
	Sections []BriefingSection `json:"sections"`
	Project  string            `json:"project"`
	// Deadline, when given, closes the briefing if nobody answers by then (revision 4).
	Deadline *DeadlineInput `json:"deadline,omitempty"`
}

// PointAnswer is the agent's answer on one point of a briefing.
type PointAnswer struct {
	Point   string          `json:"point"`
	Answer  string          `json:"answer"`
	Content []Block         `json:"content,omitempty"`
	Points  []BriefingPoint `json:"points,omitempty"`
}

// BriefingAnswerInput is the agent's answers on a briefing, one per point.
type BriefingAnswerInput struct {
	AskID   string        `json:"askId"`
	Answers []PointAnswer `json:"answers"`
}

// FollowUpInput is the agent's answer to a question the person asked back.
type FollowUpInput struct {
	AskID   string  `json:"askId"`
	Answer  string  `json:"answer"`
	Content []Block `json:"content,omitempty"`
}

// Origin is who is asking: filled in by the gate and the MCP session, never by the agent's input.
type Origin struct {
	Space    string
	Client   string
	RaisedBy *Actor
	// CredentialID is the credential the agent asked with.
	CredentialID string
	// Role is that credential's role: a person's credential used over MCP acts on the asks raised
	// in that person's name, an agent's only on its own (Origin.Owns).
	Role Role
	// Follow, when the agent will wait on the ask its call creates or answers, is the lease it
	// holds: taken before the change, and the ask marked waiting in that same change (one write,
	// one event, and never `waiting: false` in between). Nil: the call does not wait.
	Follow *Follow
}

// checker collects the first rule an input breaks, naming the field.
type checker struct{ err *Error }

func (c *checker) fail(code, format string, args ...any) {
	if c.err == nil {
		c.err = Errorf(code, format, args...)
	}
}

func (c *checker) required(path, v string) {
	c.requiredCode(EInputInvalid, path, v)
}

// requiredCode refuses an empty field, and one that would show as nothing (Blank).
func (c *checker) requiredCode(code, path, v string) {
	switch {
	case v == "":
		c.fail(code, "%s is required and must not be empty", path)
	case Blank(v):
		c.fail(code, "%s holds only whitespace or invisible characters; write something the person can read", path)
	}
}

// project checks a project's name: present, more than whitespace, one line, and at most
// MaxProjectRunes.
func (c *checker) project(v string) {
	c.required("project", v)
	c.oneLine("project", v)
	c.maxRunes("project", v, MaxProjectRunes)
}

// What a text may hold, one rule for every field (docs/limits.md):
//
//   - A one-line field (a title, a choice's label, a project's name, a file name, a credential's
//     or a client's name) holds no control character (newlines and tabs included), no line or
//     paragraph separator, and no bidirectional embedding, override or isolate.
//   - A multi-line field (a question, markdown, code, a diff, a summary, an answer) keeps its
//     newlines, tabs and other characters, but no bidirectional embedding, override or isolate.
//
// The directional controls U+202A–U+202E and U+2066–U+2069 reorder what follows them when shown:
// `invoices\u202Egnp.exe` shows as "invoicesexe.png", and code shown for approval can read
// otherwise than it runs (Trojan Source). Text in any script shows right without them; the
// directional marks (U+200E, U+200F, U+061C), which reorder nothing, are kept.

// BidiControl reports whether r is an explicit directional embedding, override or isolate.
func BidiControl(r rune) bool {
	return (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069')
}

// notOneLine reports whether r has no place in a one-line field.
func notOneLine(r rune) bool {
	return unicode.Is(unicode.Cc, r) || r == '\u2028' || r == '\u2029' || BidiControl(r)
}

// CleanOneLine is s with what a one-line field may not hold removed: for what Loopback shows but
// cannot refuse (an MCP client's name, given in initialize).
func CleanOneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if notOneLine(r) {
			return -1
		}
		return r
	}, s)
}

// OneLine checks a one-line field (the rule above); path names it.
func OneLine(path, v string) error {
	var c checker
	c.oneLine(path, v)
	return errOrNil(c.err)
}

// MultiLine checks a multi-line field (the rule above); path names it.
func MultiLine(path, v string) error {
	var c checker
	c.multiLine(path, v)
	return errOrNil(c.err)
}

func (c *checker) oneLine(path, v string) {
	if i := strings.IndexFunc(v, notOneLine); i >= 0 {
		r, _ := utf8.DecodeRuneInString(v[i:])
		c.fail(EInputInvalid, "%s must be one line of text: it holds %U at byte %d (a control character, a line break or a bidirectional override); remove it", path, r, i)
	}
}

func (c *checker) multiLine(path, v string) {
	if i := strings.IndexFunc(v, BidiControl); i >= 0 {
		r, _ := utf8.DecodeRuneInString(v[i:])
		c.fail(EInputInvalid, "%s holds the bidirectional control %U at byte %d, which would show the text in another order than it is written; remove it", path, r, i)
	}
}

func (c *checker) maxRunes(path, v string, n int) {
	if utf8.RuneCountInString(v) > n {
		c.fail(EInputInvalid, "%s is %d characters; at most %d are allowed", path, utf8.RuneCountInString(v), n)
	}
}

func (c *checker) blocks(path string, blocks []Block, atLeastOne bool) {
	if atLeastOne && len(blocks) == 0 {
		c.fail(EInputInvalid, "%s needs at least one block", path)
	}
	for i := range blocks {
		b := &blocks[i]
		p := fmt.Sprintf("%s[%d]", path, i)
		if err := b.validate(p); err != nil && c.err == nil {
			c.err = err
		}
		c.multiLine(p+".text", b.Text)
		c.multiLine(p+".code", b.Code)
		c.multiLine(p+".diff", b.Diff)
		c.multiLine(p+".caption", b.Caption)
		c.oneLine(p+".language", b.Language)
		c.oneLine(p+".filename", b.Filename)
		c.oneLine(p+".uploadId", b.UploadID)
	}
}

func (c *checker) point(path string, p BriefingPoint) {
	c.required(path+".title", p.Title)
	c.oneLine(path+".title", p.Title)
	c.maxRunes(path+".title", p.Title, MaxTitleRunes)
	c.multiLine(path+".detail", p.Detail)
	c.blocks(path+".content", p.Content, false)
}

func (c *checker) size(what string, v any) {
	if c.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		c.fail(EInputInvalid, "%s cannot be encoded: %v", what, err)
		return
	}
	if len(b) > MaxInputBytes {
		c.fail(EInputInvalid, "%s is %d bytes as JSON; all of it together may be at most %d (256 KiB): show the part that matters, or split it", what, len(b), MaxInputBytes)
	}
}

// Validate checks every rule the contract sets on a question.
func (in *QuestionInput) Validate() error {
	var c checker
	c.required("question", in.Question)
	c.multiLine("question", in.Question)
	c.multiLine("context", in.Context)
	c.project(in.Project)
	if in.Options != nil && (len(in.Options) < MinOptions || len(in.Options) > MaxOptions) {
		c.fail(EInputInvalid, "options: offer between %d and %d choices, or none (got %d)", MinOptions, MaxOptions, len(in.Options))
	}
	seen := map[string]bool{}
	for i, o := range in.Options {
		path := fmt.Sprintf("options[%d].label", i)
		c.required(path, o.Label)
		c.oneLine(path, o.Label)
		c.maxRunes(path, o.Label, MaxLabelRunes)
		c.multiLine(fmt.Sprintf("options[%d].description", i), o.Description)
		if seen[o.Label] {
			c.fail(EInputInvalid, "%s: %q is offered twice; replies pick choices by label, so labels must differ", path, o.Label)
		}
		seen[o.Label] = true
	}
	c.size("the question", in)
	return errOrNil(c.err)
}

// Validate checks every rule the contract sets on a review. Whether Revises names a review of the
// same space, and whether image blocks name stored uploads, needs the store: the service checks it.
func (in *ReviewInput) Validate() error {
	var c checker
	c.required("title", in.Title)
	c.oneLine("title", in.Title)
	c.maxRunes("title", in.Title, MaxTitleRunes)
	c.multiLine("summary", in.Summary)
	c.oneLine("revises", in.Revises)
	c.project(in.Project)
	c.blocks("content", in.Content, true)
	c.size("the review", in)
	return errOrNil(c.err)
}

// Validate checks every rule the contract sets on a briefing, including at most fifty points
// numbered straight through its sections.
func (in *BriefingInput) Validate() error {
	var c checker
	c.required("title", in.Title)
	c.oneLine("title", in.Title)
	c.maxRunes("title", in.Title, MaxTitleRunes)
	c.multiLine("summary", in.Summary)
	c.project(in.Project)
	if len(in.Sections) == 0 {
		c.fail(EInputInvalid, "sections needs at least one section")
	}
	n := 0
	for i, s := range in.Sections {
		if len(s.Points) == 0 {
			c.fail(EInputInvalid, "sections[%d].points needs at least one point", i)
		}
		c.oneLine(fmt.Sprintf("sections[%d].title", i), s.Title)
		for j, p := range s.Points {
			c.point(fmt.Sprintf("sections[%d].points[%d]", i, j), p)
		}
		n += len(s.Points)
	}
	if n > MaxPoints {
		c.fail(EInputInvalid, "sections: a briefing has at most %d points in all (got %d): split it into several briefings", MaxPoints, n)
	}
	c.size("the briefing", in)
	return errOrNil(c.err)
}

// Validate checks the shape of the agent's answers; whether they fit the briefing is checked
// against it by AnswerBriefing.
func (in *BriefingAnswerInput) Validate() error {
	var c checker
	c.required("askId", in.AskID)
	if len(in.Answers) == 0 {
		c.fail(EAnswerInvalid, "answers needs at least one answer")
	}
	for i, a := range in.Answers {
		path := fmt.Sprintf("answers[%d]", i)
		c.required(path+".point", a.Point)
		c.required(path+".answer", a.Answer)
		c.multiLine(path+".answer", a.Answer)
		c.blocks(path+".content", a.Content, false)
		if len(a.Points) > MaxSubPoints {
			c.fail(EAnswerInvalid, "%s.points: one answer breaks a point into at most %d sub-points (got %d)", path, MaxSubPoints, len(a.Points))
		}
		for j, p := range a.Points {
			c.point(fmt.Sprintf("%s.points[%d]", path, j), p)
		}
	}
	c.size("the answers", in)
	return asAnswerError(c.err)
}

// Validate checks the shape of the agent's answer to a follow-up.
func (in *FollowUpInput) Validate() error {
	var c checker
	c.required("askId", in.AskID)
	c.required("answer", in.Answer)
	c.multiLine("answer", in.Answer)
	c.blocks("content", in.Content, false)
	c.size("the answer", in)
	return asAnswerError(c.err)
}

// asAnswerError relabels shape errors of an agent's answer with the answer code.
func asAnswerError(e *Error) error {
	if e == nil {
		return nil
	}
	return &Error{Code: EAnswerInvalid, Message: e.Message}
}

// errOrNil keeps a nil *Error from becoming a non-nil error interface.
func errOrNil(e *Error) error {
	if e == nil {
		return nil
	}
	return e
}

// NewQuestion builds an open question from a valid input.
func NewQuestion(id string, in QuestionInput, o Origin, now Clock) (*Ask, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	options := in.Options
	if options == nil {
		options = []Choice{}
	}
	a := newAsk(id, KindQuestion, in.Project, o, now)
	a.Question = &QuestionPrompt{Question: in.Question, Options: options, Multiple: in.Multiple, Context: in.Context}
	if err := setDeadline(a, in.Deadline, a.CreatedAt); err != nil {
		return nil, err
	}
	return a, nil
}

// NewReview builds an open review from a valid input.
func NewReview(id string, in ReviewInput, o Origin, now Clock) (*Ask, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	a := newAsk(id, KindReview, in.Project, o, now)
	a.Review = &ReviewPrompt{Title: in.Title, Content: in.Content, Summary: in.Summary}
	a.Revises = in.Revises
	if err := setDeadline(a, in.Deadline, a.CreatedAt); err != nil {
		return nil, err
	}
	return a, nil
}

// NewBriefing builds an open briefing from a valid input, numbering its points 1, 2, 3, …
// straight through every section.
func NewBriefing(id string, in BriefingInput, o Origin, now Clock) (*Ask, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	p := &BriefingPrompt{Title: in.Title, Summary: in.Summary}
	n := 0
	for _, s := range in.Sections {
		ps := BriefingPromptSection{Title: s.Title}
		for _, bp := range s.Points {
			n++
			ps.Points = append(ps.Points, Point{ID: fmt.Sprint(n), Title: bp.Title, Detail: bp.Detail, Content: bp.Content})
		}
		p.Sections = append(p.Sections, ps)
	}
	a := newAsk(id, KindBriefing, in.Project, o, now)
	a.Briefing = p
	if err := setDeadline(a, in.Deadline, a.CreatedAt); err != nil {
		return nil, err
	}
	return a, nil
}

func newAsk(id string, kind Kind, project string, o Origin, now Clock) *Ask {
	t := now()
	return &Ask{
		ID: id, Kind: kind, Status: AwaitingHuman,
		Project: project, Client: strings.TrimSpace(o.Client), RaisedBy: o.RaisedBy, CredentialID: o.CredentialID,
		Thread: []Entry{}, CreatedAt: t, UpdatedAt: t, Space: o.Space,
	}
}

// Blank reports whether s would show as nothing: every character of it whitespace, an invisible
// format character (zero-width spaces and joiners, the byte-order mark, soft hyphens, direction
// marks), a control character, or one of the fillers that render as a blank (Braille's and
// Hangul's). A text field must hold more than that.
func Blank(s string) bool {
	for _, r := range s {
		switch {
		case unicode.IsSpace(r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Cc, r):
		case r == '\u2800', r == '\u3164', r == '\u115f', r == '\u1160', r == '\uffa0':
		default:
			return false
		}
	}
	return true
}
