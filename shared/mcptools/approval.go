package mcptools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// request_approval: permission for a tool use, as Claude Code's --permission-prompt-tool asks it
// (`claude -p --permission-prompt-tool mcp__loopback__request_approval`). It waits as a blocking
// call does, under the same per-client bound (keepalive comment lines where the client takes SSE),
// and answers with the contract's PermissionDecision, whose JSON text is what Claude Code reads:
// allow with the input to run, or deny with what to tell the model. No decision is a deny that
// says so and names the askId: never an allow.

const requestApprovalDescription = `Ask the person's permission for a tool use before it runs: a shell command, a file edit, a fetch, another tool. ` +
	`Made for Claude Code's --permission-prompt-tool, which calls it with tool_name, input and tool_use_id and reads its text: ` +
	`{"behavior":"allow","updatedInput":…} runs the tool with that input; {"behavior":"deny","message":…} does not, and the message says why. ` +
	`A rule the person made may decide at once. Otherwise the call waits for the person; if no one has decided in time it denies, saying so and naming the askId, and withdraws the approval: ` +
	`call it again for the same tool use to put it to the person again.`

// approvalRequest is the contract's ApprovalRequest.
type approvalRequest struct {
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Project   string          `json:"project,omitempty"`
	Cwd       string          `json:"cwd,omitempty"`
}

// permissionDecision is the contract's PermissionDecision.
type permissionDecision struct {
	Behavior     string          `json:"behavior"`
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	Message      string          `json:"message,omitempty"`
	AskID        string          `json:"askId,omitempty"`
}

// requestApproval: request_approval.
func (h *Handler) requestApproval(ctx context.Context, args json.RawMessage) (any, error) {
	var in approvalRequest
	if err := decodeArgs(args, &in, ask.EInputInvalid); err != nil {
		return nil, err
	}
	cred := gate.CredentialFrom(ctx)
	follow := h.cfg.Waiter.NewFollow()
	if in.Project == "" && in.Cwd == "" {
		// Claude Code's permission prompt tool sends neither (only tool_name, input and
		// tool_use_id): the approval is filed under the client's name.
		name, _, _ := strings.Cut(clientFrom(ctx), " ")
		in.Project = cmp.Or(name, "agent")
	}
	a, decided, err := h.cfg.Service.RequestApproval(ctx, cred, ask.ApprovalInput{
		Tool: in.ToolName, Input: in.Input, ToolUseID: in.ToolUseID, Project: in.Project, Cwd: in.Cwd,
		Client: clientFrom(ctx), Follow: follow,
	})
	if err != nil {
		return nil, err
	}
	if decided != nil {
		return decisionOf(a.ID, in.Input, decided), nil
	}
	_, err = h.cfg.Waiter.Wait(ctx, cred, a.ID, follow, keepaliveProgress(ctx))
	if err != nil && !errors.Is(err, ErrRevoked) {
		// The call answers without a decision: the approval must not wait on for a person whose
		// decision could reach no one. It is withdrawn; one decided meanwhile is marked too late.
		if errors.Is(err, context.Canceled) {
			markGone(ctx)
		}
		_, _ = h.cfg.Service.StopWaiting(context.WithoutCancel(ctx), cred, a.ID, time.Now(), stoppedWaitingText)
	}
	switch {
	case errors.Is(err, ErrStillWaiting):
		return undecided(a.ID, fmt.Sprintf("No one decided on ask %s within %s, so this tool use is not allowed and did not run, and the approval is withdrawn. To put it to the person again, call request_approval again for the same tool use.", a.ID, h.cfg.Waiter.limitOf(ctx).Round(time.Second))), nil
	case errors.Is(err, ErrRevoked):
		return undecided(a.ID, revokedMessage(a.ID)), nil
	case errors.Is(err, context.Canceled):
		return undecided(a.ID, "The call was cancelled before anyone decided."), nil
	case err != nil:
		return undecided(a.ID, fmt.Sprintf("The wait for a decision on ask %s ended before anyone decided (%s), so this tool use is not allowed and did not run, and the approval is withdrawn: call request_approval again for the same tool use to put it to the person again.", a.ID, ask.ErrorMessage(err))), nil
	}
	closed, err := h.cfg.Service.Find(context.WithoutCancel(ctx), cred.Space, a.ID)
	if err != nil {
		return nil, err
	}
	if d := closed.ApprovalDecision(); d != nil && d.Event != ask.NoticeTerminal {
		return decisionOf(a.ID, in.Input, d), nil
	}
	return undecided(a.ID, fmt.Sprintf("Ask %s ended without a decision in Loopback, so this tool use is not allowed here.", a.ID)), nil
}

// decisionOf is the PermissionDecision of a decision: allow with the input as asked, or deny with
// the person's words (or the rule's).
func decisionOf(askID string, input json.RawMessage, d *ask.Decision) permissionDecision {
	if d.Allowed() {
		return permissionDecision{Behavior: "allow", UpdatedInput: input, AskID: askID}
	}
	msg := d.Message
	if msg == "" {
		msg = ask.DefaultDenyMessage
	}
	return permissionDecision{Behavior: "deny", Message: msg, AskID: askID}
}

// stoppedWaitingText is the withdrawn notice of an approval whose request_approval call answered
// without a decision.
const stoppedWaitingText = "The agent stopped waiting before anyone decided here: it was told the tool use is not allowed."

// undecided is a deny that says no one decided: never an allow.
func undecided(askID, msg string) permissionDecision {
	return permissionDecision{Behavior: "deny", Message: msg, AskID: askID}
}
