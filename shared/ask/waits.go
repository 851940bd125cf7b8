package ask

import (
	"context"
	"errors"
	"time"
)

// A blocking MCP call (and a 2025 tasks/result) holds a process while it waits for the person:
// on AWS, one of the MCP function's reserved executions. Where several instances serve MCP, no
// instance sees the others' waits, so the waits a credential holds are counted in the store, and
// a client's cancel, which may reach another instance than the wait, is carried there too.

// HeldWait is one call holding a process while it waits, until ExpiresAt unless renewed.
type HeldWait struct {
	Credential string // the credential's id
	Holder     string // unique per call
	Call       string // what names the call for a cancel: credential, session and request id
	ExpiresAt  time.Time
}

// ErrTooManyWaits is TakeWait's answer when the credential holds its most waits already.
var ErrTooManyWaits = errors.New("too many waits")

// WaitStore counts the waits each credential holds across processes.
type WaitStore interface {
	// TakeWait records w, unless w's credential holds max live waits (expiring after now) already:
	// then ErrTooManyWaits. Two processes taking the last place at once: one of them gets it.
	TakeWait(ctx context.Context, w HeldWait, max int, now time.Time) error
	// RenewWait moves a wait's expiry (recording it again if it lapsed), and reports whether a
	// cancel reached it.
	RenewWait(ctx context.Context, w HeldWait) (cancelled bool, err error)
	// WaitCancelled reports whether a cancel reached the wait. A wait not found is not cancelled.
	WaitCancelled(ctx context.Context, credential, holder string) (bool, error)
	// CancelWaits marks the live waits of credential made by call as cancelled, and says how
	// many it marked.
	CancelWaits(ctx context.Context, credential, call string, now time.Time) (int, error)
	// EndWait forgets a wait; forgetting one that is gone is not an error.
	EndWait(ctx context.Context, credential, holder string) error
}
