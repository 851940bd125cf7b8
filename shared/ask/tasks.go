package ask

import (
	"context"
	"encoding/base64"
	"time"
)

// TaskStatus is where an MCP task stands (spec 2025-11-25).
type TaskStatus string

const (
	TaskWorking   TaskStatus = "working"
	TaskCompleted TaskStatus = "completed"
	TaskFailed    TaskStatus = "failed"
	TaskCancelled TaskStatus = "cancelled"
)

// Task is an MCP task: a blocking tool call that the client polls instead of holding open. It is
// kept in the store, so any instance (or a restarted binary) can answer for it. Its result is
// the person's move on the ask; once seen it is kept in Result so the task's answer never changes.
type Task struct {
	ID    string
	Space string
	// CredentialID is the credential that started the task: revoking it ends the task.
	CredentialID string
	AskID        string
	Tool         string
	Status       TaskStatus
	Message      string // why it failed or was cancelled
	Result       []byte // the tool's CallToolResult as JSON, once terminal
	TTL          time.Duration
	CreatedAt    time.Time
	UpdatedAt    time.Time
	ExpiresAt    time.Time // CreatedAt + TTL: after it the task may be forgotten
}

// Terminal reports whether the task will never change again.
func (t *Task) Terminal() bool { return t.Status != TaskWorking }

// TaskStore keeps MCP tasks.
type TaskStore interface {
	CreateTask(ctx context.Context, t *Task) error
	// FindTask returns a task of a space, or an *Error with ENotFound (also when it expired).
	FindTask(ctx context.Context, space, id string, now time.Time) (*Task, error)
	// FinishTask moves a working task to a terminal status with its result or message. It returns
	// the task as stored afterwards: if it was already terminal, unchanged, so the first finish wins.
	FinishTask(ctx context.Context, t *Task) (*Task, error)
	// ListTasks returns a space's unexpired tasks, newest first, after the cursor ("" for the
	// first page), and the cursor of the next page ("" on the last).
	ListTasks(ctx context.Context, space, cursor string, limit int, now time.Time) ([]*Task, string, error)
}

// EncodeTaskCursor makes ListTasks' cursor from the last task of a page: its creation time in the
// contract's fixed width, then its id, as URL-safe base64. Every adapter gives out the same
// cursors, so a client's cursor does not depend on the store behind the server.
func EncodeTaskCursor(created time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(FormatTime(created) + id))
}

// DecodeTaskCursor reads a cursor EncodeTaskCursor made, as the stored form of the time and the
// id; anything else is an *Error with ERequestInvalid.
func DecodeTaskCursor(cursor string) (created, id string, err error) {
	invalid := Errorf(ERequestInvalid, "the cursor %q is not one this server gave out", cursor)
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) <= len(TimeLayout) {
		return "", "", invalid
	}
	created, id = string(b[:len(TimeLayout)]), string(b[len(TimeLayout):])
	if _, err := time.Parse(TimeLayout, created); err != nil {
		return "", "", invalid
	}
	return created, id, nil
}
