// Package ask is Loopback's domain: what an agent asks, what a person replies, whose move it is,
// and every rule between them. It does no I/O: stores, blobs and events are ports (interfaces)
// that adapters implement, so the local binary and the Lambdas run exactly these rules.
//
// The types here are the contract's shapes (spec/main.tsp): their JSON is what the API sends, and
// tests validate it against the schema the contract emits.
package ask

import (
	"time"
)

// Kind is what an agent is asking for.
type Kind string

const (
	KindQuestion Kind = "question"
	KindReview   Kind = "review"
	KindBriefing Kind = "briefing"
	// KindApproval is in approval.go.
)

// Status says where an ask stands: while it is open, it is either the person's move or the agent's.
type Status string

const (
	AwaitingHuman Status = "awaiting_human"
	AwaitingAgent Status = "awaiting_agent"
	Closed        Status = "closed"
)

// Actor is someone a gate recognised: a person, or the agent they authorised.
type Actor struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// Choice is one of a question's options. Replies select choices by label.
type Choice struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// QuestionPrompt is a question as the person sees it.
type QuestionPrompt struct {
	Question string   `json:"question"`
	Options  []Choice `json:"options"`
	Multiple bool     `json:"multiple"`
	Context  string   `json:"context,omitempty"`
}

// ReviewPrompt is work put up for review as the person sees it.
type ReviewPrompt struct {
	Title   string  `json:"title"`
	Content []Block `json:"content"`
	Summary string  `json:"summary,omitempty"`
}

// Point is a briefing point with the id replies and answers name it by.
type Point struct {
	ID      string  `json:"id"`
	Title   string  `json:"title"`
	Detail  string  `json:"detail,omitempty"`
	Content []Block `json:"content,omitempty"`
}

// BriefingPromptSection is a list of points under an optional heading.
type BriefingPromptSection struct {
	Title  string  `json:"title,omitempty"`
	Points []Point `json:"points"`
}

// BriefingPrompt is a briefing as first shown; sub-points the agent adds live in the thread.
type BriefingPrompt struct {
	Title    string                  `json:"title"`
	Summary  string                  `json:"summary,omitempty"`
	Sections []BriefingPromptSection `json:"sections"`
}

// Ask is something an agent needs from a person: a prompt, then a thread of turns that ends with a
// reply that closes it. Exactly one of Question, Review, Briefing and Approval is set, matching
// Kind.
type Ask struct {
	ID     string
	Kind   Kind
	Status Status

	// Waiting is true while some agent follows the ask (a blocking call, or a task being polled).
	Waiting bool

	Project  string
	Client   string
	RaisedBy *Actor

	Question *QuestionPrompt
	Review   *ReviewPrompt
	Briefing *BriefingPrompt
	Approval *ApprovalPrompt

	// Revises is the id of the review this review revises.
	Revises string

	// Deadline is when the ask closes if nobody answers, and with what (revision 4); nil: never.
	Deadline *Deadline
	// EscalatesAt is when the ask, still unanswered, is also sent to the other people of its
	// space: its creation plus the space's Escalation.AfterMinutes then (revision 4); nil: never.
	EscalatesAt *time.Time

	Thread []Entry

	CreatedAt time.Time
	UpdatedAt time.Time
	ClosedAt  *time.Time

	// Space is the space the ask belongs to; it never leaves the server.
	Space string
	// CredentialID is the credential that raised the ask (list_open_asks finds an agent's asks
	// by it); it never leaves the server either. Empty for asks raised before it was kept.
	CredentialID string
	// Version counts committed changes. A Store writes conditionally on it, so two writers that
	// read the same version cannot both win.
	Version int
}

// Author says who took a turn in an ask's thread.
type Author string

const (
	AuthorHuman Author = "human"
	AuthorAgent Author = "agent"
)

// Entry is one turn in an ask's thread after it was opened: a person's reply, an agent's answer,
// or Loopback's notice of what ended an approval without a reply in Loopback.
type Entry struct {
	Author Author

	// Loopback's notice (AuthorLoopback): what happened, in words (Text), what was decided when
	// something was, and the rule that decided.
	Event   NoticeEvent
	Text    string
	Outcome Outcome
	RuleID  string

	// A person's turn, and where they gave it (empty on turns taken before revision 4).
	Reply *Reply
	By    *Actor
	Via   Surface

	// An agent's turn: an answer to a question asked back, or on one briefing point.
	Answer  string
	Content []Block
	Point   string
	Points  []Point
	// CredentialID is the credential an agent's turn came with (Origin.CredentialID). It never
	// leaves the server: the contract's thread names no agent. Stores keep it beside the ask's
	// JSON (TurnCredentials). Empty on a person's turn, and on turns taken before it was kept.
	CredentialID string

	At time.Time
}

// Whoami says which space a credential opens and who holds it.
type Whoami struct {
	Space string `json:"space"`
	Actor Actor  `json:"actor"`
}

// RecentLimit is how many closed asks a snapshot carries.
const RecentLimit = 50

// Open reports whether the ask still wants a move from someone.
func (a *Ask) Open() bool { return a.Status != Closed }
