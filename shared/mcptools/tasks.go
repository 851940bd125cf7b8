package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/reqlog"
)

// revokedMessage tells an agent that its credential was revoked while it waited.
func revokedMessage(askID string) string {
	return "auth.unauthorized: the credential this agent uses was revoked, so the wait on ask " + askID +
		" ended and its reply will not come here. The ask stays open for the person; ask them for a new credential."
}

// MCP tasks (spec 2025-11-25), kept in the store. mcp-go keeps tasks in a map run by goroutines,
// which a restart or another Lambda instance cannot see; so Loopback answers task-augmented
// tools/call and tasks/* itself, before mcp-go, from the TaskStore. A task's outcome is the
// person's move on its ask: nothing runs in the background, and any instance can answer.

// Task lifetimes: what a client may ask for, and what it gets when it does not say.
const (
	DefaultTaskTTL = 24 * time.Hour
	MaxTaskTTL     = 7 * 24 * time.Hour
)

// serveTask answers the task side of MCP, and reports whether it did.
func (h *Handler) serveTask(w http.ResponseWriter, r *http.Request, msg *rpcMessage) bool {
	ctx := r.Context()
	var result any
	var err error
	switch msg.Method {
	case "tools/call":
		tool, ok := h.tools[msg.Params.Name]
		if t := bytes.TrimSpace(msg.Params.Task); len(t) == 0 || string(t) == "null" || !ok || !tool.blocking() {
			return false
		}
		ttl, terr := taskTTL(msg.Params.Task)
		if terr != nil {
			result, err = nil, terr
			break
		}
		result, err = h.startTask(ctx, msg, tool, ttl)
	case "tasks/get":
		result, err = h.getTask(ctx, msg.Params.TaskID)
	case "tasks/result":
		result, err = h.taskResult(ctx, msg.Params.TaskID)
	case "tasks/list":
		result, err = h.listTasks(ctx, msg.Params.Cursor)
	case "tasks/cancel":
		result, err = h.cancelTask(ctx, msg.Params.TaskID)
	case "tasks/update":
		err = &rpcError{Code: mcp.METHOD_NOT_FOUND, Message: "tasks/update is part of the Tasks extension of MCP 2026-07-28, not of 2025-11-25 tasks"}
	default:
		return false
	}
	writeRPC(w, msg.ID, result, err)
	return true
}

// rpcError is a JSON-RPC error.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

// rpcErrorOf is err as a JSON-RPC error: an unknown task or a malformed parameter is invalid
// params (-32602, as both generations of tasks say), anything else internal.
func rpcErrorOf(err error) *rpcError {
	var re *rpcError
	switch {
	case errors.As(err, &re):
		return re
	case ask.ErrorCode(err) == ask.ENotFound, ask.ErrorCode(err) == ask.ERequestInvalid:
		return &rpcError{Code: mcp.INVALID_PARAMS, Message: ask.ErrorMessage(err)}
	}
	return &rpcError{Code: mcp.INTERNAL_ERROR, Message: ask.ErrorMessage(err)}
}

// taskTTL reads 2025-11-25's task parameter: an object with an optional ttl in milliseconds,
// which is clamped to MaxTaskTTL (and to DefaultTaskTTL when absent or not positive). Anything
// else is invalid params.
func taskTTL(raw json.RawMessage) (time.Duration, error) {
	var p struct {
		TTL *json.Number `json:"ttl"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil || bytes.TrimSpace(raw)[0] != '{' {
		return 0, &rpcError{Code: mcp.INVALID_PARAMS, Message: "params.task must be an object, such as {\"ttl\": 60000}"}
	}
	if p.TTL == nil {
		return DefaultTaskTTL, nil
	}
	ms, err := p.TTL.Int64()
	if err != nil {
		if f, ferr := p.TTL.Float64(); ferr == nil && f > 0 && f == math.Trunc(f) {
			return MaxTaskTTL, nil // a whole number beyond int64 milliseconds: as long as a task may live
		}
		return 0, &rpcError{Code: mcp.INVALID_PARAMS, Message: "params.task.ttl must be a whole number of milliseconds"}
	}
	switch {
	case ms <= 0:
		return DefaultTaskTTL, nil
	case ms >= MaxTaskTTL.Milliseconds():
		return MaxTaskTTL, nil
	}
	return time.Duration(ms) * time.Millisecond, nil
}

func writeRPC(w http.ResponseWriter, id json.RawMessage, result any, err error) {
	resp := map[string]any{"jsonrpc": "2.0", "id": id}
	if err != nil {
		e := rpcErrorOf(err)
		reqlog.LineOf(w).Add(slog.Int("rpc_error", e.Code))
		resp["error"] = e
	} else {
		resp["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// leaseTTL is how long a task keeps its ask marked waiting after the client's last poll.
func (h *Handler) taskLeaseTTL() time.Duration { return max(3*h.cfg.TaskPollInterval, 30*time.Second) }

// startTask runs a blocking tool's start (the ask is created, or the agent's turn recorded) and
// answers at once with a task to poll. A call refused at the start is a plain tool error, as it
// would be without a task.
func (h *Handler) startTask(ctx context.Context, msg *rpcMessage, tool toolSpec, ttl time.Duration) (any, error) {
	o, taskID := h.taskOrigin(ctx, tool)
	askID, err := tool.start(ctx, o, msg.Params.Arguments)
	if err != nil {
		return h.toolError(ctx, err), nil
	}
	now := h.cfg.Service.Now()
	t := &ask.Task{
		ID: taskID, Space: o.Space, CredentialID: gate.CredentialFrom(ctx).ID, AskID: askID, Tool: msg.Params.Name, Status: ask.TaskWorking,
		TTL: ttl, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(ttl),
	}
	if err := h.cfg.Tasks.CreateTask(ctx, t); err != nil {
		return nil, err
	}
	t, err = h.refresh(ctx, t)
	if err != nil {
		return nil, err
	}
	return map[string]any{"task": h.wireTask(t)}, nil
}

// taskOrigin is the caller's origin for a task's start, and the task's id: the task follows the
// ask from the start, its lease taken in the same change as the ask (when the tool makes one).
func (h *Handler) taskOrigin(ctx context.Context, tool toolSpec) (ask.Origin, string) {
	o, id := origin(ctx), ask.NewID()
	if tool.follows {
		o.Follow = &ask.Follow{Holder: id, TTL: h.taskLeaseTTL()}
	}
	return o, id
}

// refresh brings a working task up to date with its ask: finished if the person has moved,
// otherwise followed for another lease (a client polling a task is an agent waiting).
func (h *Handler) refresh(ctx context.Context, t *ask.Task) (*ask.Task, error) {
	if t.Terminal() {
		return t, nil
	}
	a, err := h.cfg.Service.Find(ctx, t.Space, t.AskID)
	if ask.ErrorCode(err) == ask.ENotFound {
		return h.finish(ctx, t, ask.TaskFailed, nil, "the ask is gone")
	} else if err != nil {
		return nil, err
	}
	if r, ok := ask.PersonsMove(a); ok {
		return h.finish(ctx, t, ask.TaskCompleted, taskReply(t.AskID, *r), "")
	}
	if err := h.cfg.Service.Follow(ctx, t.Space, t.AskID, t.ID, h.taskLeaseTTL()); err != nil {
		return nil, err
	}
	return t, nil
}

// finish moves a task to a terminal status (the first finish wins) and stops following its ask.
func (h *Handler) finish(ctx context.Context, t *ask.Task, status ask.TaskStatus, result *mcp.CallToolResult, message string) (*ask.Task, error) {
	done := *t
	done.Status, done.Message, done.UpdatedAt = status, message, h.cfg.Service.Now()
	if result != nil {
		result.Meta = mcp.WithRelatedTask(t.ID)
		b, err := json.Marshal(result)
		if err != nil {
			return nil, err
		}
		done.Result = b
	}
	stored, err := h.cfg.Tasks.FinishTask(ctx, &done)
	if err != nil {
		return nil, err
	}
	if err := h.cfg.Service.Unfollow(context.WithoutCancel(ctx), t.Space, t.AskID, t.ID); err != nil {
		h.cfg.Logger.WarnContext(ctx, "unfollowing a finished task", "task", t.ID, "err", err)
	}
	return stored, nil
}

// findTask returns a task of the caller's: a task belongs to the credential that started it, and
// is not found by any other.
func (h *Handler) findTask(ctx context.Context, id string) (*ask.Task, error) {
	if id == "" {
		return nil, &rpcError{Code: mcp.INVALID_PARAMS, Message: "taskId is required"}
	}
	c := gate.CredentialFrom(ctx)
	t, err := h.cfg.Tasks.FindTask(ctx, c.Space, id, h.cfg.Service.Now())
	if err != nil {
		return nil, err
	}
	if t.CredentialID != c.ID {
		return nil, ask.TaskNotFound(id) // another credential's task is no task of this one
	}
	return t, nil
}

// getTask: tasks/get.
func (h *Handler) getTask(ctx context.Context, id string) (any, error) {
	t, err := h.findTask(ctx, id)
	if err != nil {
		return nil, err
	}
	if t, err = h.refresh(ctx, t); err != nil {
		return nil, err
	}
	return h.wireTask(t), nil
}

// taskResult: tasks/result. It waits for the person like a blocking call, up to the same limit;
// a task still working then is an error the client answers by asking again.
func (h *Handler) taskResult(ctx context.Context, id string) (any, error) {
	t, err := h.findTask(ctx, id)
	if err != nil {
		return nil, err
	}
	if t, err = h.refresh(ctx, t); err != nil {
		return nil, err
	}
	if !t.Terminal() {
		reply, err := h.cfg.Waiter.Wait(ctx, gate.CredentialFrom(ctx), t.AskID, nil, keepaliveProgress(ctx))
		switch {
		case errors.Is(err, ErrRevoked):
			t, err = h.finish(ctx, t, ask.TaskFailed, nil, revokedMessage(t.AskID))
			if err != nil {
				return nil, err
			}
			return mcp.NewToolResultError(revokedMessage(t.AskID)), nil
		case errors.Is(err, ErrStillWaiting), errors.Is(err, ErrShuttingDown):
			return nil, &rpcError{Code: mcp.INTERNAL_ERROR, Message: "task " + t.ID + " is still waiting for the person; call tasks/result again"}
		case err != nil:
			return nil, err
		}
		if t, err = h.finish(ctx, t, ask.TaskCompleted, taskReply(t.AskID, *reply), ""); err != nil {
			return nil, err
		}
	}
	if len(t.Result) == 0 {
		return mcp.NewToolResultError("task " + t.ID + " " + string(t.Status) + ": " + t.Message), nil
	}
	return json.RawMessage(t.Result), nil
}

// taskPage is how many tasks one tasks/list page holds.
const taskPage = 50

// listTasks: tasks/list.
func (h *Handler) listTasks(ctx context.Context, cursor string) (any, error) {
	tasks, next, err := h.cfg.Tasks.ListTasks(ctx, origin(ctx).Space, cursor, taskPage, h.cfg.Service.Now())
	if err != nil {
		return nil, err
	}
	out := map[string]any{"tasks": []mcp.Task{}}
	list := make([]mcp.Task, 0, len(tasks))
	me := gate.CredentialFrom(ctx).ID
	for _, t := range tasks {
		if t.CredentialID == me { // another credential's tasks are not this caller's to see
			list = append(list, h.wireTask(t))
		}
	}
	out["tasks"] = list
	if next != "" {
		out["nextCursor"] = next
	}
	return out, nil
}

// cancelTask: tasks/cancel. The client stops following; the ask stays open for the person.
func (h *Handler) cancelTask(ctx context.Context, id string) (any, error) {
	t, err := h.findTask(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.Terminal() {
		return nil, &rpcError{Code: mcp.INVALID_PARAMS, Message: "task " + t.ID + " is already " + string(t.Status)}
	}
	if t, err = h.finish(ctx, t, ask.TaskCancelled, nil, "cancelled by the client; the ask stays open"); err != nil {
		return nil, err
	}
	return h.wireTask(t), nil
}

// wireTask is a task as MCP shows it.
func (h *Handler) wireTask(t *ask.Task) mcp.Task {
	ttl := t.TTL.Milliseconds()
	poll := h.cfg.TaskPollInterval.Milliseconds()
	status := mcp.TaskStatus(t.Status)
	return mcp.Task{
		TaskId: t.ID, Status: status, StatusMessage: t.Message,
		CreatedAt: ask.FormatTime(t.CreatedAt), LastUpdatedAt: ask.FormatTime(t.UpdatedAt),
		TTL: &ttl, PollInterval: &poll,
	}
}
