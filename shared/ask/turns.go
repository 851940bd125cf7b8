package ask

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Clock tells the time. Services pass one that truncates to the precision stores keep.
type Clock func() time.Time

// ApplyReply records a person's reply given in the inbox; see ApplyReplyVia.
func ApplyReply(a *Ask, r Reply, by *Actor, now Clock) error {
	return ApplyReplyVia(a, r, by, SurfaceInbox, now)
}

// ApplyReplyVia records a person's reply on the ask, given on surface via, or refuses it. It
// returns 409-class errors (EClosed, EAgentsTurn) when the ask is not open to the person, and
// EReplyInvalid when the reply does not fit the ask. On error the ask is unchanged. It is the one
// rule every surface answers through: the first valid answer wins, wherever it is given.
func ApplyReplyVia(a *Ask, r Reply, by *Actor, via Surface, now Clock) error {
	if a.Status == Closed {
		return Errorf(EClosed, "ask %s is closed", a.ID)
	}
	if a.Status == AwaitingAgent && !(a.Kind == KindBriefing && r.Outcome == OutcomeDismissed) {
		return Errorf(EAgentsTurn, "ask %s is waiting for the agent to answer; reply after it does", a.ID)
	}
	if err := r.checkText(); err != nil {
		return err
	}
	closes := r.closes()
	switch a.Kind {
	case KindQuestion:
		if err := checkQuestionReply(a.Question, r); err != nil {
			return err
		}
	case KindReview:
		switch r.Outcome {
		case OutcomeApproved, OutcomeChangesRequested:
			if err := CheckLineComments(a.Review, r.Comments); err != nil {
				return err
			}
		case OutcomeFollowUp, OutcomeDismissed:
		default:
			return Errorf(EReplyInvalid, "a review takes approved, changes_requested, follow_up or dismissed, not %s", r.Outcome)
		}
	case KindBriefing:
		switch r.Outcome {
		case OutcomeResponded:
			c, err := checkResponded(BriefingPoints(a), r.Points)
			if err != nil {
				return err
			}
			closes = c
		case OutcomeDismissed:
		case OutcomeFollowUp:
			return Errorf(EReplyInvalid, "a briefing takes no follow_up: write on a point with responded instead")
		default:
			return Errorf(EReplyInvalid, "a briefing takes responded or dismissed, not %s", r.Outcome)
		}
	case KindApproval:
		if err := checkApprovalReply(a.Approval, r); err != nil {
			return err
		}
	}
	t := now()
	a.Thread = append(a.Thread, Entry{Author: AuthorHuman, Reply: &r, By: by, Via: via, At: t})
	a.UpdatedAt = t
	if closes {
		// Closed, nobody follows it any more: the agent's call returns with this reply. Saying so
		// in this same change spares the follower's own write (and its event) a moment later.
		a.Status, a.ClosedAt, a.Waiting = Closed, &t, false
	} else {
		a.Status = AwaitingAgent
	}
	return nil
}

func checkQuestionReply(q *QuestionPrompt, r Reply) error {
	switch r.Outcome {
	case OutcomeAnswered:
	case OutcomeFollowUp, OutcomeDismissed:
		return nil
	default:
		return Errorf(EReplyInvalid, "a question takes answered, follow_up or dismissed, not %s", r.Outcome)
	}
	if len(r.Selected) == 0 && Blank(r.Text) {
		return Errorf(EReplyInvalid, "answered needs a choice in selected, or text")
	}
	if len(r.Selected) > 1 && !q.Multiple {
		return Errorf(EReplyInvalid, "selected: this question takes one choice (got %d)", len(r.Selected))
	}
	for i, label := range r.Selected {
		if !slices.ContainsFunc(q.Options, func(c Choice) bool { return c.Label == label }) {
			return Errorf(EReplyInvalid, "selected[%d]: %q is not one of the choices offered", i, label)
		}
		if slices.Index(r.Selected, label) != i {
			return Errorf(EReplyInvalid, "selected[%d]: %q is picked twice", i, label)
		}
	}
	return nil
}

// checkAgentsTurn refuses an agent's move on a closed ask or during the person's turn.
func checkAgentsTurn(a *Ask) error {
	switch a.Status {
	case Closed:
		return &Error{Code: EClosed, Message: closedMessage(a)}
	case AwaitingHuman:
		return Errorf(EHumansTurn, "ask %s is waiting for the person; call await_reply to wait for their reply", a.ID)
	}
	return nil
}

// AnswerFollowUp records the agent's answer to the question the person asked back, and hands the
// move back to the person.
func AnswerFollowUp(a *Ask, in FollowUpInput, now Clock) error {
	if err := in.Validate(); err != nil {
		return err
	}
	if a.Kind == KindBriefing {
		return Errorf(EAnswerInvalid, "ask %s is a briefing: answer its points with answer_briefing", a.ID)
	}
	if err := checkAgentsTurn(a); err != nil {
		return err
	}
	t := now()
	a.Thread = append(a.Thread, Entry{Author: AuthorAgent, Answer: in.Answer, Content: in.Content, At: t})
	a.Status, a.UpdatedAt = AwaitingHuman, t
	return nil
}

// AnswerBriefing records the agent's answers on a briefing's points, numbering any new sub-points
// beneath their point, and hands the move back to the person. Every point the person wrote on
// without resolving must be answered; other open points may be.
func AnswerBriefing(a *Ask, in BriefingAnswerInput, now Clock) error {
	if err := in.Validate(); err != nil {
		return err
	}
	if a.Kind != KindBriefing {
		return Errorf(EAnswerInvalid, "ask %s is a %s, not a briefing: use answer_follow_up", a.ID, a.Kind)
	}
	if err := checkAgentsTurn(a); err != nil {
		return err
	}
	ps := BriefingPoints(a)
	named := map[string]bool{}
	for i, ans := range in.Answers {
		path := fmt.Sprintf("answers[%d]", i)
		st := ps.ByID[ans.Point]
		switch {
		case st == nil:
			return Errorf(EAnswerInvalid, "%s.point: this briefing has no point %q", path, ans.Point)
		case named[ans.Point]:
			return Errorf(EAnswerInvalid, "%s.point: point %s is answered twice; give one answer per point", path, ans.Point)
		case st.Resolved:
			return Errorf(EAnswerInvalid, "%s.point: point %s is resolved; the person is done with it", path, ans.Point)
		case len(ans.Points) > 0 && st.Depth >= MaxPointDepth:
			return Errorf(EAnswerInvalid, "%s.points: point %s is %d levels deep; points go at most %d levels deep", path, ans.Point, st.Depth, MaxPointDepth)
		}
		named[ans.Point] = true
	}
	added := 0
	for _, ans := range in.Answers {
		added += len(ans.Points)
	}
	if total := len(ps.ByID) + added; added > 0 && total > MaxBriefingPoints {
		return Errorf(EAnswerInvalid, "answers: a briefing has at most %d points however they were added; this one has %d, and these answers would add %d", MaxBriefingPoints, len(ps.ByID), added)
	}
	for _, id := range ps.Pending() {
		if !named[id] {
			return Errorf(EAnswerInvalid, "answers: the person wrote on point %s; answer every point they wrote on (owed: %s)", id, strings.Join(ps.Pending(), ", "))
		}
	}
	t := now()
	for _, ans := range in.Answers {
		e := Entry{Author: AuthorAgent, Answer: ans.Answer, Content: ans.Content, Point: ans.Point, At: t}
		for i, id := range subPointIDs(ps.ByID[ans.Point], len(ans.Points)) {
			bp := ans.Points[i]
			e.Points = append(e.Points, Point{ID: id, Title: bp.Title, Detail: bp.Detail, Content: bp.Content})
		}
		a.Thread = append(a.Thread, e)
	}
	a.Status, a.UpdatedAt = AwaitingHuman, t
	return nil
}

// DeriveStatus works out whose move it is from the thread alone. A stored ask's Status must always
// equal it; the fuzz tests and CheckInvariants hold the rules to that. A thread with any turn after
// the one that closed the ask has no status: DeriveStatus returns "" for it.
func DeriveStatus(a *Ask) Status {
	status := AwaitingHuman
	replayed := *a
	replayed.Thread = nil
	for _, e := range a.Thread {
		if e.Author == AuthorLoopback && e.Event == NoticeTooLate {
			// A decision that came too late is noted after the turn that closed the ask, and
			// changes nothing.
			continue
		}
		if e.Author == AuthorLoopback && e.Event == NoticeEscalated && status == AwaitingHuman {
			// An escalation tells more people of the ask; whose move it is stays the same.
			continue
		}
		if status == Closed {
			// Nothing may follow the turn that closed the ask: no status fits such a thread.
			return ""
		}
		replayed.Thread = append(replayed.Thread, e)
		switch {
		case e.Author == AuthorLoopback:
			status = Closed // a rule, the terminal, or the agent gone: each ends the approval
		case e.Author == AuthorAgent:
			status = AwaitingHuman
		case e.Reply == nil:
		case e.Reply.Outcome == OutcomeFollowUp:
			status = AwaitingAgent
		case e.Reply.Outcome == OutcomeResponded:
			if BriefingPoints(&replayed).AllResolved() {
				status = Closed
			} else {
				status = AwaitingAgent
			}
		default:
			status = Closed
		}
	}
	return status
}

// CheckInvariants reports the first rule a stored ask breaks: whose move it is matches its thread,
// a closed ask has a close time and nothing after its closing turn, and every point id is unique.
func CheckInvariants(a *Ask) error {
	if got := DeriveStatus(a); got == "" {
		return fmt.Errorf("the thread goes on after the turn that closed the ask")
	} else if got != a.Status {
		return fmt.Errorf("status is %s but the thread says %s", a.Status, got)
	}
	if (a.Status == Closed) != (a.ClosedAt != nil) {
		return fmt.Errorf("status %s with closedAt %v", a.Status, a.ClosedAt)
	}
	if a.Kind == KindBriefing {
		seen := map[string]bool{}
		ids := []string{}
		for _, s := range a.Briefing.Sections {
			for _, p := range s.Points {
				ids = append(ids, p.ID)
			}
		}
		for _, e := range a.Thread {
			for _, p := range e.Points {
				ids = append(ids, p.ID)
			}
		}
		for _, id := range ids {
			if seen[id] {
				return fmt.Errorf("point id %s is used twice", id)
			}
			seen[id] = true
			if strings.Count(id, ".")+1 > MaxPointDepth {
				return fmt.Errorf("point %s is deeper than %d levels", id, MaxPointDepth)
			}
		}
	}
	return nil
}

// checkText holds the person's words to the rule of every multi-line field (MultiLine): no
// bidirectional override, which would show the agent (and the inbox) another text than written.
func (r *Reply) checkText() error {
	var c checker
	c.multiLine("text", r.Text)
	c.multiLine("note", r.Note)
	c.multiLine("feedback", r.Feedback)
	c.multiLine("question", r.Question)
	c.multiLine("message", r.Message)
	for i, p := range r.Points {
		c.multiLine(fmt.Sprintf("points[%d].text", i), p.Text)
	}
	if c.err != nil {
		return &Error{Code: EReplyInvalid, Message: c.err.Message}
	}
	return nil
}
