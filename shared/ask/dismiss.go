package ask

import (
	"context"
	"encoding/json"
	"fmt"
)

// DismissedApprovalMessage is what an agent is told of an approval a person dismissed without
// deciding (contract revision 6): an approval takes only allowed or denied, so a dismissal is a
// denial, in these words.
const DismissedApprovalMessage = "The person dismissed this request in Loopback without deciding: it is not allowed. Do not run it; go on without it, or ask again if you still need it."

// ApplyDismissVia closes an open ask for a person, whoever's move it is (contract revision 6):
// the one way out of an ask whose agent owes a turn and is gone. It records a dismissed reply
// (for an approval, a denial in DismissedApprovalMessage's words) by the person, on surface via,
// in the thread, and closes the ask. A closed ask is refused with EClosed; on error the ask is
// unchanged. Every copy of the ask (Slack, push, email links) hears of it as of any close.
func ApplyDismissVia(a *Ask, by *Actor, via Surface, now Clock) error {
	if a.Status == Closed {
		return Errorf(EClosed, "ask %s is closed", a.ID)
	}
	r := Reply{Outcome: OutcomeDismissed}
	if a.Kind == KindApproval {
		r = Reply{Outcome: OutcomeDenied, Message: DismissedApprovalMessage}
	}
	t := now()
	a.Thread = append(a.Thread, Entry{Author: AuthorHuman, Reply: &r, By: by, Via: via, At: t})
	a.UpdatedAt = t
	a.Status, a.ClosedAt, a.Waiting = Closed, &t, false
	return nil
}

// DismissVia dismisses an open ask of a space for a person (ApplyDismissVia), and returns it in
// the contract's JSON as the store wrote it. It races replies on the same ask like any reply:
// the first to be written wins.
func (s *Service) DismissVia(ctx context.Context, space, id string, by *Actor, via Surface) (WireAsk, error) {
	if !via.Valid() {
		return WireAsk{}, Errorf(EInternal, "dismiss via unknown surface %q", via)
	}
	a, wire, err := s.change(ctx, space, id, bounded(false, func(a *Ask) error { return ApplyDismissVia(a, by, via, s.Now) }))
	if err != nil {
		return WireAsk{}, err
	}
	return WireAsk{ID: a.ID, Version: a.Version, JSON: json.RawMessage(wire)}, nil
}

// dismissedOnAgentsMove reports whether the thread's entry i, a person's dismissal, came during
// the agent's move: the agent owed a turn (an answer to a question asked back, or on a briefing's
// points) and was not waited for.
func dismissedOnAgentsMove(a *Ask, i int) bool {
	e := a.Thread[i]
	if e.Author != AuthorHuman || e.Reply == nil || e.Reply.Outcome != OutcomeDismissed {
		return false
	}
	before := *a
	before.Thread = a.Thread[:i]
	return DeriveStatus(&before) == AwaitingAgent
}

// closedMessage says, for an agent that moves on a closed ask, that it is closed; when a person
// dismissed it while the agent owed a turn, also who did, where and when, and that nothing more
// is wanted on it.
func closedMessage(a *Ask) string {
	for i := len(a.Thread) - 1; i >= 0; i-- {
		e := a.Thread[i]
		if e.Author != AuthorHuman || e.Reply == nil {
			continue
		}
		if !dismissedOnAgentsMove(a, i) {
			break
		}
		who := "the person"
		if e.By != nil && e.By.Name != "" {
			who = e.By.Name
		} else if e.By != nil && e.By.ID != "" {
			who = e.By.ID
		}
		where := e.Via.Label()
		if where == "" {
			where = "Loopback"
		}
		return fmt.Sprintf("ask %s is closed: %s dismissed it in %s at %s while it was your move, without waiting for your answer. Nothing more is wanted on it: do not answer it or wait on it. Go on without it, or ask again if you still need the person.", a.ID, who, where, e.At.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	return fmt.Sprintf("ask %s is closed", a.ID)
}
