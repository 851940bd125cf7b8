package ask

// Outcome names what a person's reply does.
type Outcome string

const (
	OutcomeAnswered         Outcome = "answered"
	OutcomeApproved         Outcome = "approved"
	OutcomeChangesRequested Outcome = "changes_requested"
	OutcomeFollowUp         Outcome = "follow_up"
	OutcomeDismissed        Outcome = "dismissed"
	OutcomeResponded        Outcome = "responded"
	// OutcomeAllowed and OutcomeDenied, for approvals, are in approval.go.
)

// Reply is what a person replies. Only the fields of its Outcome are meaningful; JSON decoding
// refuses fields that belong to another outcome, and encoding writes only the outcome's own.
type Reply struct {
	Outcome Outcome

	Selected []string // answered: labels of the choices picked
	Text     string   // answered: words of their own
	Note     string   // approved
	Feedback string   // changes_requested
	// Comments are an approval's or a request for changes' comments on lines of the review's diff
	// (contract revision 7; linecomment.go).
	Comments []LineComment
	Question string // follow_up
	Points   []PointReply
	Message  string     // denied: what the agent is told
	Remember *RuleScope // allowed, denied: the rule to make from now on

	// By is who gave the reply, as the thread records it (Entry.By): PersonsMove sets it, so that
	// the waiting agent is told whose answer it is. It is never part of the reply's JSON (the
	// contract's reply names no one; its thread entry does).
	By *Actor
	// Via is where the reply was given (Entry.Via), set with By, so that the agent is told.
	Via Surface

	// OnAgentsMove is set on a dismissal that came while the agent owed a turn (PersonsMove;
	// contract revision 6: a person may close any open ask), so that the agent is told it was not
	// waited for. Never part of the reply's JSON.
	OnAgentsMove bool

	// Deadline is set on the move a deadline made (PersonsMove): no person replied, and this is
	// the agent's own default (Deadline.Default), or, without one, a dismissal standing for "nobody
	// answered". Never part of the reply's JSON either.
	Deadline *DeadlineReached
}

// PointReply is the person on one point of a briefing: words, resolved, or both.
type PointReply struct {
	Point    string `json:"point"`
	Text     string `json:"text,omitempty"`
	Resolved bool   `json:"resolved,omitempty"`
}

// closes reports whether the reply, once accepted, ends the ask outright. A follow_up hands the move
// to the agent; a responded closes only when it leaves every point resolved (decided by the briefing).
func (r *Reply) closes() bool {
	switch r.Outcome {
	case OutcomeFollowUp, OutcomeResponded:
		return false
	}
	return true
}
