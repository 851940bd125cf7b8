package hooks

import (
	"context"
	"errors"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/mcptools"
)

// Domain is Approvals on the domain: ask.Service makes, joins and ends approvals (its rules
// decide at once), and the MCP waiter waits for the person, holding the approval's lease, so
// that the inbox shows an agent waiting exactly while a hook's request is open.
type Domain struct {
	Service *ask.Service
	Waiter  *mcptools.Waiter
}

// Request implements Approvals.
func (d Domain) Request(ctx context.Context, cred *ask.Credential, r Request) (string, *Decision, error) {
	a, decided, err := d.Service.RequestApproval(ctx, cred, approvalInput(r, nil))
	if err != nil {
		return "", nil, err
	}
	return a.ID, decisionOf(a.ID, decided), nil
}

// Await implements Approvals: the waiter's wait, bounded by limit, then the decision the
// approval's thread records.
func (d Domain) Await(ctx context.Context, cred *ask.Credential, askID string, limit time.Duration, beat func() error) (*Decision, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, limit, ErrUndecided)
	defer cancel()
	_, err := d.Waiter.Wait(ctx, cred, askID, nil, func(time.Duration) error { return beat() })
	switch {
	case errors.Is(context.Cause(ctx), ErrUndecided), errors.Is(err, mcptools.ErrStillWaiting),
		errors.Is(err, mcptools.ErrShuttingDown), errors.Is(err, mcptools.ErrRevoked):
		return nil, ErrUndecided
	case err != nil:
		return nil, err
	}
	a, err := d.Service.Find(context.WithoutCancel(ctx), cred.Space, askID)
	if err != nil {
		return nil, err
	}
	// A decision made in Loopback (the person's, or a rule's). One made at the terminal, or an
	// approval withdrawn, is none of Loopback's to hand back: the client decided already.
	if dec := a.ApprovalDecision(); dec != nil && dec.Event != ask.NoticeTerminal {
		return decisionOf(askID, dec), nil
	}
	return nil, ErrUndecided
}

// Withdraw implements Approvals.
func (d Domain) Withdraw(ctx context.Context, cred *ask.Credential, r Request, how Ending) error {
	in := ask.EndInput{Session: r.Session, Tool: r.Tool, Input: r.Input, Event: ask.NoticeTerminal}
	switch how {
	case RanAtTerminal:
		in.Outcome = ask.OutcomeAllowed
	case DeniedAtTerminal:
		in.Outcome = ask.OutcomeDenied
	default:
		in.Event = ask.NoticeWithdrawn
	}
	_, err := d.Service.EndApproval(ctx, cred, in)
	return err
}

// StoppedWaitingText is the withdrawn notice of an approval whose hook stopped waiting.
const StoppedWaitingText = "The agent stopped waiting before anyone decided here: its own terminal decides."

// StopWaiting implements Approvals.
func (d Domain) StopWaiting(ctx context.Context, cred *ask.Credential, askID string, ended time.Time) error {
	_, err := d.Service.StopWaiting(ctx, cred, askID, ended, StoppedWaitingText)
	return err
}

func approvalInput(r Request, f *ask.Follow) ask.ApprovalInput {
	return ask.ApprovalInput{
		Tool: r.Tool, Input: r.Input, ToolUseID: r.ToolUseID, Project: r.Project, Cwd: r.Cwd,
		Session: r.Session, Client: r.Client, Follow: f,
	}
}

func decisionOf(askID string, d *ask.Decision) *Decision {
	if d == nil {
		return nil
	}
	return &Decision{AskID: askID, Allow: d.Allowed(), Message: d.Message}
}
