package ask

import (
	"context"
	"time"
)

// An agent follows an ask while it waits on a blocking call or polls it as a task. Following is
// recorded as leases with an expiry, renewed while the agent follows; the ask's Waiting is true
// while any lease is live. A process killed mid-wait stops renewing, and its lease lapses.

// Lease is one agent following one ask, until ExpiresAt unless renewed.
type Lease struct {
	Space     string
	AskID     string
	Holder    string // unique per wait or task
	ExpiresAt time.Time
}

// LeaseStore keeps leases.
type LeaseStore interface {
	// PutLease creates or renews a lease (same space, ask and holder).
	PutLease(ctx context.Context, l Lease) error
	// DeleteLease removes a lease; removing one that is gone is not an error.
	DeleteLease(ctx context.Context, space, askID, holder string) error
	// LiveLeases counts the leases on an ask that expire after now.
	LiveLeases(ctx context.Context, space, askID string, now time.Time) (int, error)
	// ExpiredLeases returns up to limit leases that expired at or before now, oldest first.
	ExpiredLeases(ctx context.Context, now time.Time, limit int) ([]Lease, error)
}

// PersonsMove returns the reply that hands the move away from the person, if the person has moved:
// the latest reply in the thread while it is the agent's move or the ask is closed. A waiting
// agent returns it, with Reply.By naming who gave it; while the ask awaits the person, there is
// none.
//
// An approval that closed without a reply in Loopback (a rule, the terminal, the agent gone)
// ends a wait too: its decision as a reply (allowed, or denied with the words the agent is
// told), or, withdrawn, a denial saying that no one decided. A caller that must tell "no
// decision" from a denial (a hook, which then leaves it to the terminal) reads
// Ask.ApprovalDecision, which is nil for it.
func PersonsMove(a *Ask) (*Reply, bool) {
	if a.Status == AwaitingHuman {
		return nil, false
	}
	if r, ok := deadlineMove(a); ok {
		return r, true
	}
	if a.Kind == KindApproval && a.Status == Closed {
		if d := a.ApprovalDecision(); d != nil {
			return &Reply{Outcome: d.Outcome, Message: d.Message, By: d.By}, true
		}
		msg := WithdrawnMessage
		for _, e := range a.Thread {
			if e.Author == AuthorLoopback && e.Event == NoticeTerminal {
				msg = e.Text + " Nothing was allowed in Loopback."
			}
		}
		return &Reply{Outcome: OutcomeDenied, Message: msg}, true
	}
	for i := len(a.Thread) - 1; i >= 0; i-- {
		if e := a.Thread[i]; e.Author == AuthorHuman && e.Reply != nil {
			r := *e.Reply
			r.By, r.Via = e.By, e.Via
			r.OnAgentsMove = a.Status == Closed && dismissedOnAgentsMove(a, i)
			return &r, true
		}
	}
	return nil, false
}
