// Package hooks is how a client hands Loopback a decision it would otherwise ask at its terminal:
// Claude Code's hooks POST their JSON to /hooks/claude-code (an http hook, or `loopback hook` for
// a command hook), and Codex's and Cursor's command hooks reach the same endpoint through
// `loopback hook` (cmd/loopback), which speaks each client's format.
//
// A PermissionRequest becomes an approval (or joins the pending one for the same session, tool and
// input); the request waits for the person's decision, or a rule's, up to the hook's timeout, and
// answers in the hook's output format. No decision (the limit, an error, the ask withdrawn) is
// answered with `{}`, which leaves the decision to the terminal: a hook never allows on its own.
// A PostToolUse or PermissionDenied for the same session, tool and input says the terminal decided:
// the pending approval is withdrawn, and the inbox says it was answered at the terminal.
package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Request is one decision a client asks for, in Loopback's words.
type Request struct {
	Client    string          // "claude-code", "codex", "cursor"
	Session   string          // the client's session (Claude Code's session_id)
	Tool      string          // the tool's name as the client calls it (Bash, Edit, mcp__x__y)
	Input     json.RawMessage // the tool's input, a JSON object
	ToolUseID string          // when the client names the call (permission-prompt-tool, PostToolUse)
	Cwd       string          // the agent's working directory
	Project   string          // the repository's root folder name; left out, the domain takes Cwd's last folder
}

// Decision is what the person, or one of their rules, decided on a Request.
type Decision struct {
	AskID   string
	Allow   bool
	Message string // a denial's words for the agent
}

// ErrUndecided ends a wait that reached its limit, or whose approval closed without a decision
// (withdrawn, answered at the terminal): the client decides, never Loopback.
var ErrUndecided = errors.New("no decision")

// Approvals is what the hooks need of the domain: create or join an approval, wait for its
// decision, and withdraw it when the terminal answered. shared/app binds it to ask.Service and the
// MCP waiter (Domain).
type Approvals interface {
	// Request creates the approval, or joins the pending one for the same session, tool and
	// input. A rule that covers it decides at once: decided is then non-nil (and the askID
	// names the record of it, if any).
	Request(ctx context.Context, cred *ask.Credential, r Request) (askID string, decided *Decision, err error)
	// Await waits up to limit for the decision on askID; beat runs now and then while it waits
	// (an error from it, a client gone, ends the wait). ErrUndecided: none came.
	Await(ctx context.Context, cred *ask.Credential, askID string, limit time.Duration, beat func() error) (*Decision, error)
	// Withdraw closes the pending approval for r's session, tool and input, if there is one,
	// saying how it ended. No pending approval: nothing happens.
	Withdraw(ctx context.Context, cred *ask.Credential, r Request, how Ending) error
	// StopWaiting says that the hook's wait on askID ended at ended without a decision handed
	// to the client (the limit, the client gone, an error): the approval is withdrawn, since the
	// terminal decides now; one decided in Loopback meanwhile is recorded as too late, the agent
	// not told of it.
	StopWaiting(ctx context.Context, cred *ask.Credential, askID string, ended time.Time) error
}

// Ending is how an approval ended without a decision in Loopback.
type Ending int

const (
	// RanAtTerminal: the tool ran (PostToolUse): the person said yes at the terminal.
	RanAtTerminal Ending = iota
	// DeniedAtTerminal: the client reported the tool use denied (PermissionDenied).
	DeniedAtTerminal
	// StoppedWaiting: the hook's request closed before anyone decided. Claude Code closes it
	// when the person answers No or Esc at the terminal (it sends no PermissionDenied for that),
	// or when the session ends.
	StoppedWaiting
)
