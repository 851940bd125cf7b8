package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/reqlog"
)

// MCP 2026-07-28 and the Tasks extension, io.modelcontextprotocol/tasks (SEP-2663, the spec in
// modelcontextprotocol/ext-tasks). mcp-go serves 2026-07-28 but not the extension, so Loopback
// answers it in front of mcp-go, as it does the 2025-11-25 tasks (tasks.go), from the same store:
//
//   - server/discover advertises the extension, not 2025's capabilities.tasks;
//   - a blocking tool called by a request that declares the extension answers at once with a
//     CreateTaskResult; without the declaration it blocks, as before; 2025's `task` parameter is
//     ignored;
//   - tasks/get, tasks/update and tasks/cancel serve those tasks (tasks/list and tasks/result are
//     gone from this generation: -32601);
//   - every such request gets the checks mcp-go gives the requests it serves: the protocol
//     version in the header and in _meta, the client capabilities, Mcp-Method and Mcp-Name.

// ExtensionTasks is the Tasks extension's identifier.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// ExtensionTaskTTL is how long an extension task is kept: a person may take days, and the client
// (Claude Code runs such a call in the background) has no time limit of its own.
const ExtensionTaskTTL = MaxTaskTTL

// Status messages of a task, written for the person or model that reads them.
const (
	statusWaiting   = "waiting for the person in the inbox"
	statusCancelled = "the agent stopped following; the ask stays open for the person"
)

// modern reports whether a request speaks 2026-07-28 or later, by its _meta or its header.
func modern(r *http.Request, msg *rpcMessage) bool {
	return mcp.IsModernProtocol(msg.Params.Meta.ProtocolVersion()) || mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion))
}

// declaresTasks reports whether a request declares the Tasks extension in its capabilities.
func declaresTasks(msg *rpcMessage) bool {
	caps := msg.Params.Meta.ClientCapabilities()
	if caps == nil || caps.Extensions == nil {
		return false
	}
	_, ok := caps.Extensions[ExtensionTasks]
	return ok
}

// serveModern answers what Loopback itself serves of 2026-07-28, and reports whether it did.
func (h *Handler) serveModern(w http.ResponseWriter, r *http.Request, msg *rpcMessage) bool {
	ctx := r.Context()
	switch msg.Method {
	case string(mcp.MethodToolsCall):
		tool, ok := h.tools[msg.Params.Name]
		if !ok || !tool.blocking() || !declaresTasks(msg) {
			return false // mcp-go serves it; a blocking tool blocks
		}
		if err := checkModern(r, msg); err != nil {
			writeModernError(w, msg.ID, err)
			return true
		}
		result, err := h.startExtensionTask(ctx, msg, tool)
		writeModern(w, msg.ID, result, err)
		return true
	case "tasks/get", "tasks/update", "tasks/cancel":
		if err := taskRequestParams(msg); err != nil {
			writeModernError(w, msg.ID, err)
			return true
		}
		if err := checkModern(r, msg); err != nil {
			writeModernError(w, msg.ID, err)
			return true
		}
		if !declaresTasks(msg) {
			writeModernError(w, msg.ID, missingTasksCapability())
			return true
		}
		var result any
		var err error
		switch msg.Method {
		case "tasks/get":
			result, err = h.getExtensionTask(ctx, msg.Params.TaskID)
		case "tasks/update":
			result, err = h.updateExtensionTask(ctx, msg.Params.TaskID)
		default:
			result, err = h.cancelExtensionTask(ctx, msg.Params.TaskID)
		}
		writeModern(w, msg.ID, result, err)
		return true
	case string(mcp.MethodSubscriptionsListen):
		// The extension's taskIds in a listen's notifications: a client that did not declare
		// the extension gets -32021. A declaring one gets mcp-go's acknowledgement, which agrees
		// to no task ids (notifications/tasks are optional; Loopback's clients poll).
		var p struct {
			Notifications struct {
				TaskIDs json.RawMessage `json:"taskIds"`
			} `json:"notifications"`
		}
		if json.Unmarshal(msg.rawParams, &p) != nil || len(p.Notifications.TaskIDs) == 0 || string(p.Notifications.TaskIDs) == "null" || declaresTasks(msg) {
			return false
		}
		if err := checkModern(r, msg); err != nil {
			writeModernError(w, msg.ID, err)
			return true
		}
		writeModernError(w, msg.ID, missingTasksCapability())
		return true
	case "tasks/list", "tasks/result":
		if err := checkModern(r, msg); err != nil {
			writeModernError(w, msg.ID, err)
			return true
		}
		writeModernError(w, msg.ID, &rpcError{Code: mcp.METHOD_NOT_FOUND,
			Message: msg.Method + " is not part of MCP " + mcp.ProtocolVersion20260728 + " (the Tasks extension has no " + msg.Method + "): poll tasks/get, whose completed task carries the result"})
		return true
	}
	return false
}

// checkModern applies to a request Loopback answers itself the checks of 2026-07-28 that mcp-go
// applies to the ones it serves (its streamable_http_modern.go and request_handler.go): the
// protocol version stated in the header and in _meta, alike and known; the client capabilities
// present; Mcp-Method naming the method; and, for tasks/*, Mcp-Name naming the task.
func checkModern(r *http.Request, msg *rpcMessage) *rpcError {
	header, meta := r.Header.Get(mcp.HeaderProtocolVersion), msg.Params.Meta.ProtocolVersion()
	switch {
	case r.Header.Get(mcp.HeaderLastEventID) != "":
		return &rpcError{Code: mcp.HEADER_MISMATCH, Message: "Last-Event-ID is not supported in protocol version " + mcp.ProtocolVersion20260728 + ": streams are not resumable"}
	case header == "":
		return &rpcError{Code: mcp.HEADER_MISMATCH, Message: mcp.HeaderProtocolVersion + " header is required for requests carrying " + mcp.MetaKeyProtocolVersion}
	case meta == "":
		return &rpcError{Code: mcp.INVALID_PARAMS, Message: "missing or invalid _meta field " + mcp.MetaKeyProtocolVersion}
	case header != meta:
		return &rpcError{Code: mcp.HEADER_MISMATCH, Message: mcp.HeaderProtocolVersion + " header " + header + " does not match request " + mcp.MetaKeyProtocolVersion + " " + meta}
	case !mcp.IsValidProtocolVersion(meta):
		e := mcp.UnsupportedProtocolVersionError{Version: meta, Supported: mcp.ValidProtocolVersions}.JSONRPCError()
		return &rpcError{Code: e.Error.Code, Message: e.Error.Message, Data: e.Error.Data}
	case msg.Params.Meta.ClientCapabilities() == nil:
		return &rpcError{Code: mcp.INVALID_PARAMS, Message: "missing or invalid _meta field " + mcp.MetaKeyClientCapabilities}
	}
	if err := mcp.ValidateStandardHeaders(r.Header.Get, meta, mcp.MCPMethod(msg.Method), msg.rawParams); err != nil {
		return &rpcError{Code: mcp.HEADER_MISMATCH, Message: err.Error()}
	}
	if msg.Method == "tasks/get" || msg.Method == "tasks/update" || msg.Method == "tasks/cancel" {
		name, ok := mcp.DecodeHeaderValue(r.Header.Get(mcp.HeaderName))
		switch {
		case r.Header.Get(mcp.HeaderName) == "":
			return &rpcError{Code: mcp.HEADER_MISMATCH, Message: "Mcp-Name: missing required header for method " + strconv.Quote(msg.Method) + " (the task's id)"}
		case !ok || name != msg.Params.TaskID:
			return &rpcError{Code: mcp.HEADER_MISMATCH, Message: "Mcp-Name: header value " + strconv.Quote(name) + " does not match params.taskId " + strconv.Quote(msg.Params.TaskID)}
		}
	}
	return nil
}

// taskRequestParams checks the params of tasks/get, tasks/update and tasks/cancel as the
// extension's schema declares them: an object with a string taskId, and for tasks/update an
// inputResponses object. Anything else is invalid params (-32602).
func taskRequestParams(msg *rpcMessage) *rpcError {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(msg.rawParams, &p); err != nil || p == nil {
		return &rpcError{Code: mcp.INVALID_PARAMS, Message: msg.Method + ": params must be an object with the taskId"}
	}
	var id string
	if err := json.Unmarshal(p["taskId"], &id); err != nil || id == "" {
		return &rpcError{Code: mcp.INVALID_PARAMS, Message: msg.Method + ": params.taskId must be the task's id, a non-empty string"}
	}
	if msg.Method == "tasks/update" {
		var responses map[string]json.RawMessage
		if err := json.Unmarshal(p["inputResponses"], &responses); err != nil || responses == nil {
			return &rpcError{Code: mcp.INVALID_PARAMS, Message: "tasks/update: params.inputResponses must be an object of input responses keyed as the task's inputRequests were"}
		}
	}
	return nil
}

// missingTasksCapability is the extension's -32021 for a request that uses its methods without
// declaring it.
func missingTasksCapability() *rpcError {
	return &rpcError{Code: mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, Message: "Missing required client capability: declare the " + ExtensionTasks + " extension in _meta." + mcp.MetaKeyClientCapabilities + " to use tasks",
		Data: map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{ExtensionTasks: map[string]any{}}}}}
}

// discoverHook makes server/discover advertise the Tasks extension in place of 2025-11-25's
// tasks capability, which mcp-go reports (one capability set for every protocol revision) and
// which a 2025 initialize keeps. mcp-go runs it on the result before encoding it.
//
// Seam: it goes when mcp-go serves the Tasks extension, or takes capabilities per revision.
func discoverHook(_ context.Context, _ any, _ *mcp.DiscoverRequest, result *mcp.DiscoverResult) {
	if result == nil {
		return
	}
	result.Capabilities.Tasks = nil
	ext := make(map[string]any, len(result.Capabilities.Extensions)+1)
	for k, v := range result.Capabilities.Extensions { // mcp-go's own map: copied, not written
		ext[k] = v
	}
	ext[ExtensionTasks] = struct{}{}
	result.Capabilities.Extensions = ext
}

// startExtensionTask runs a blocking tool's start and answers with a CreateTaskResult, once the
// task is stored (so tasks/get finds it). A call refused at the start is a tool error, as it
// would be without a task, and creates nothing.
func (h *Handler) startExtensionTask(ctx context.Context, msg *rpcMessage, tool toolSpec) (any, error) {
	o, taskID := h.taskOrigin(ctx, tool)
	askID, err := tool.start(ctx, o, msg.Params.Arguments)
	if err != nil {
		return completeResult(h.toolError(ctx, err))
	}
	if !tool.follows {
		// await_reply on an ask the person has moved on: the reply is the call's own result, at
		// once, not a task to poll. A client that backgrounds tasks (Claude Code) would otherwise
		// hand it over once more as a notification the model is told not to take as consent.
		a, err := h.cfg.Service.Find(ctx, o.Space, askID)
		if err != nil {
			return completeResult(h.toolError(ctx, err))
		}
		if r, ok := ask.PersonsMove(a); ok {
			return completeResult(toolReply(askID, *r))
		}
	}
	now := h.cfg.Service.Now()
	t := &ask.Task{
		ID: taskID, Space: o.Space, CredentialID: gate.CredentialFrom(ctx).ID, AskID: askID, Tool: msg.Params.Name,
		Status: ask.TaskWorking, TTL: ExtensionTaskTTL, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(ExtensionTaskTTL),
	}
	if err := h.cfg.Tasks.CreateTask(ctx, t); err != nil {
		return nil, err
	}
	if t, err = h.refresh(ctx, t); err != nil {
		return nil, err
	}
	created := h.extensionTask(t)
	created["resultType"] = "task"
	return created, nil
}

// getExtensionTask: tasks/get. Polling is following: each poll renews the task's lease on its
// ask, so the inbox shows the agent waiting while polls keep coming.
func (h *Handler) getExtensionTask(ctx context.Context, id string) (any, error) {
	t, err := h.findTask(ctx, id)
	if err != nil {
		return nil, err
	}
	if t, err = h.refresh(ctx, t); err != nil {
		return nil, err
	}
	got := h.extensionTask(t)
	got["resultType"] = "complete"
	return got, nil
}

// updateExtensionTask: tasks/update. Loopback's tasks never ask the client for input (the person
// answers in the inbox, not through the client), so no input request is ever outstanding, and
// the extension says to ignore responses to keys that are not: an empty acknowledgement.
func (h *Handler) updateExtensionTask(ctx context.Context, id string) (any, error) {
	if _, err := h.findTask(ctx, id); err != nil {
		return nil, err
	}
	return map[string]any{"resultType": "complete"}, nil
}

// cancelExtensionTask: tasks/cancel. The agent stops following; the ask stays for the person. A
// task already finished stays as it is (cancellation is cooperative): an acknowledgement either way.
func (h *Handler) cancelExtensionTask(ctx context.Context, id string) (any, error) {
	t, err := h.findTask(ctx, id)
	if err != nil {
		return nil, err
	}
	if !t.Terminal() {
		if _, err := h.finish(ctx, t, ask.TaskCancelled, nil, statusCancelled); err != nil {
			return nil, err
		}
	}
	return map[string]any{"resultType": "complete"}, nil
}

// extensionTask is a task as the extension shows it (a DetailedTask): its status, and the
// result of a completed one or the error of a failed one.
func (h *Handler) extensionTask(t *ask.Task) map[string]any {
	out := map[string]any{
		"taskId": t.ID, "status": string(t.Status),
		"createdAt": ask.FormatTime(t.CreatedAt), "lastUpdatedAt": ask.FormatTime(t.UpdatedAt),
		"ttlMs": t.TTL.Milliseconds(), "pollIntervalMs": h.cfg.TaskPollInterval.Milliseconds(),
	}
	switch t.Status {
	case ask.TaskWorking:
		out["statusMessage"] = statusWaiting
	case ask.TaskCompleted:
		var result map[string]any
		if json.Unmarshal(t.Result, &result) == nil {
			// The result is what the blocking call would have returned, as 2026-07-28 shapes it.
			if meta, ok := result["_meta"].(map[string]any); ok {
				delete(meta, mcp.RelatedTaskMetaKey)
				if len(meta) == 0 {
					delete(result, "_meta")
				}
			}
			result["resultType"] = "complete"
			out["result"] = result
			out["statusMessage"] = completedMessage(result)
		}
	case ask.TaskFailed:
		out["statusMessage"] = t.Message
		out["error"] = map[string]any{"code": mcp.INTERNAL_ERROR, "message": t.Message}
	case ask.TaskCancelled:
		out["statusMessage"] = t.Message
	}
	return out
}

// completedMessage says what the person did, from a ToolReply result.
func completedMessage(result map[string]any) string {
	sc, _ := result["structuredContent"].(map[string]any)
	reply, _ := sc["reply"].(map[string]any)
	switch reply["outcome"] {
	case string(ask.OutcomeFollowUp):
		return "the person asked a follow-up: answer it with answer_follow_up"
	case string(ask.OutcomeChangesRequested):
		return "the person requested changes"
	case string(ask.OutcomeApproved):
		return "the person approved"
	case string(ask.OutcomeDismissed):
		return "the person dismissed it"
	case string(ask.OutcomeResponded):
		return "the person replied on the points"
	case string(ask.OutcomeAnswered):
		return "the person answered"
	}
	return "the person replied"
}

// completeResult is a tool result as 2026-07-28 sends it.
func completeResult(r *mcp.CallToolResult) (any, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	out["resultType"] = "complete"
	return out, nil
}

// writeModern answers a request of 2026-07-28 with a result, or with its error as a JSON-RPC
// error at the HTTP status 2026-07-28 gives it.
func writeModern(w http.ResponseWriter, id json.RawMessage, result any, err error) {
	if err != nil {
		writeModernError(w, id, rpcErrorOf(err))
		return
	}
	if m, ok := result.(map[string]any); ok {
		meta, _ := m["_meta"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		meta[mcp.MetaKeyServerInfo] = serverInfo()
		m["_meta"] = meta
	}
	writeJSONRPC(w, http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func writeModernError(w http.ResponseWriter, id json.RawMessage, e *rpcError) {
	status := http.StatusOK
	switch e.Code {
	case mcp.METHOD_NOT_FOUND:
		status = http.StatusNotFound
	case mcp.HEADER_MISMATCH, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, mcp.UNSUPPORTED_PROTOCOL_VERSION,
		mcp.INVALID_REQUEST, mcp.INVALID_PARAMS, mcp.PARSE_ERROR:
		status = http.StatusBadRequest
	}
	reqlog.LineOf(w).Add(slog.Int("rpc_error", e.Code))
	writeJSONRPC(w, status, map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
}

func writeJSONRPC(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// serverInfo is how Loopback names itself in results, as mcp-go names it.
func serverInfo() mcp.Implementation {
	return mcp.Implementation{Name: "loopback", Version: "revision " + strconv.Itoa(buildinfo.Revision) + " build " + buildinfo.Build}
}
