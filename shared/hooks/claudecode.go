package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/reqlog"
)

// Path is where Claude Code's hooks (and `loopback hook`) POST, beside /mcp and outside /api/v1.
const Path = "/hooks/claude-code"

// Defaults and bounds of the hook endpoint (docs/limits.md).
const (
	// ClaudeCodeTimeout is Claude Code's default timeout for a hook, in which the answer must
	// arrive: a hook that times out decides nothing.
	ClaudeCodeTimeout = 600 * time.Second
	// Margin is how much sooner than the hook's timeout the endpoint answers "no decision", so
	// that its answer arrives before the client gives up on it.
	Margin = 15 * time.Second
	// DefaultMaxWait is how long a PermissionRequest waits for the decision when the hook's URL
	// does not say its timeout (?timeout=SECONDS): Claude Code's default less the margin.
	DefaultMaxWait = ClaudeCodeTimeout - Margin
	// MaxBodyBytes bounds a hook's JSON: a tool's input (a file's new content) and the rest.
	MaxBodyBytes = 1 << 20
)

// Handler serves Path: Claude Code's hook JSON with an agent's credential as Bearer.
type Handler struct {
	Approvals Approvals
	Gate      *gate.Gate
	Logger    *slog.Logger
}

// Event is the part of a Claude Code hook's JSON that Loopback reads. Claude Code adds fields
// from version to version: the others are ignored.
type Event struct {
	HookEventName    string          `json:"hook_event_name"`
	SessionID        string          `json:"session_id"`
	Cwd              string          `json:"cwd"`
	PermissionMode   string          `json:"permission_mode"`
	ToolName         string          `json:"tool_name"`
	ToolInput        json.RawMessage `json:"tool_input"`
	ToolUseID        string          `json:"tool_use_id"`
	NotificationType string          `json:"notification_type"`
}

// Output is a PermissionRequest hook's answer, as Claude Code and Codex read it.
type Output struct {
	HookSpecificOutput *SpecificOutput `json:"hookSpecificOutput,omitempty"`
}

// SpecificOutput is the hookSpecificOutput of a PermissionRequest's answer.
type SpecificOutput struct {
	HookEventName string        `json:"hookEventName"`
	Decision      *HookDecision `json:"decision,omitempty"`
}

// HookDecision is the decision a PermissionRequest hook answers.
type HookDecision struct {
	Behavior string `json:"behavior"` // allow | deny
	Message  string `json:"message,omitempty"`
}

// OutputFor is the hook answer for d; nil d is no decision ({}).
func OutputFor(d *Decision) Output {
	if d == nil {
		return Output{}
	}
	hd := &HookDecision{Behavior: "allow"}
	if !d.Allow {
		hd = &HookDecision{Behavior: "deny", Message: DenialMessage(d)}
	}
	return Output{HookSpecificOutput: &SpecificOutput{HookEventName: "PermissionRequest", Decision: hd}}
}

// DenialMessage is what the agent is told of a denial: the person's words, or that they denied it.
func DenialMessage(d *Decision) string {
	if m := strings.TrimSpace(d.Message); m != "" {
		return m
	}
	return "The person denied this in Loopback (ask " + d.AskID + "). Do not try it another way; ask them what to do instead."
}

// ParseEvent decodes and checks a hook's JSON: malformed JSON is request.invalid (400), JSON that
// is not a hook event Loopback can act on is input.invalid (422).
func ParseEvent(body []byte) (*Event, error) {
	if err := ask.NoDuplicateKeys(body); err != nil {
		return nil, ask.Errorf(ask.ERequestInvalid, "the hook's JSON is not valid: %v", err)
	}
	var ev Event
	if err := json.Unmarshal(body, &ev); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, ask.Errorf(ask.EInputInvalid, "%s: expected %s", te.Field, te.Type.Kind())
		}
		return nil, ask.Errorf(ask.ERequestInvalid, "the body is not a hook's JSON object: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if ev.HookEventName == "" {
		return nil, ask.Errorf(ask.EInputInvalid, "hook_event_name is required: the body must be the JSON a Claude Code hook sends")
	}
	if ev.HookEventName == "PermissionRequest" || ev.HookEventName == "PostToolUse" || ev.HookEventName == "PermissionDenied" {
		switch {
		case ev.SessionID == "":
			return nil, ask.Errorf(ask.EInputInvalid, "session_id is required for %s", ev.HookEventName)
		case ev.ToolName == "":
			return nil, ask.Errorf(ask.EInputInvalid, "tool_name is required for %s", ev.HookEventName)
		case !isObject(ev.ToolInput):
			return nil, ask.Errorf(ask.EInputInvalid, "tool_input must be a JSON object for %s", ev.HookEventName)
		}
	}
	return &ev, nil
}

// Request is the event's decision request.
func (ev *Event) Request(client string) Request {
	return Request{
		Client: client, Session: ev.SessionID, Tool: ev.ToolName, Input: ev.ToolInput,
		ToolUseID: ev.ToolUseID, Cwd: ev.Cwd,
	}
}

func isObject(raw json.RawMessage) bool {
	return bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{"))
}

// clientOf names the client that sent the hook: ?client= (`loopback hook` says codex or
// cursor), else claude-code.
func clientOf(r *http.Request) string {
	switch c := r.URL.Query().Get("client"); c {
	case "codex", "cursor":
		return c
	}
	return "claude-code"
}

func (h *Handler) errors() httpapi.Errors { return httpapi.Errors{Logger: h.Logger} }

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != Path {
		h.errors().Write(w, r, ask.Errorf(httpapi.ERouteNotFound, "no such endpoint: %s %s; Claude Code's hooks POST to %s", r.Method, r.URL.Path, Path))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		h.errors().Write(w, r, ask.Errorf(httpapi.EMethodNotAllowed, "%s takes a hook's JSON with POST", Path))
		return
	}
	cred, err := h.Gate.Check(gate.FromRequest(r), gate.BearerToken(r.Header.Get("Authorization")))
	if err == nil {
		err = gate.OnlyMCP(cred)
	}
	if err != nil {
		h.errors().Write(w, r, err)
		return
	}
	if line := reqlog.From(r.Context()); line != nil {
		line.Credential(cred.ID)
	}
	if cred.Role.IsPerson() {
		h.errors().Write(w, r, ask.Errorf(ask.EForbidden, "approvals are raised by agents: give the hook an agent's credential (loopback token create --name NAME), never a person's"))
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "application/json") {
		h.errors().Write(w, r, ask.Errorf(httpapi.EMediaType, "a hook's body is JSON: send Content-Type: application/json"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		h.errors().Write(w, r, ask.Errorf(ask.ETooLarge, "a hook's JSON may be at most %d KiB", MaxBodyBytes>>10))
		return
	} else if err != nil {
		h.errors().Write(w, r, ask.Errorf(ask.ERequestInvalid, "reading the request: %v", err))
		return
	}
	ev, err := ParseEvent(body)
	if err != nil {
		h.errors().Write(w, r, err)
		return
	}
	limit, err := h.limit(r)
	if err != nil {
		h.errors().Write(w, r, err)
		return
	}
	ctx := gate.WithCredential(r.Context(), cred)
	switch ev.HookEventName {
	case "PermissionRequest":
		h.permissionRequest(ctx, w, r, cred, ev.Request(clientOf(r)), limit)
	case "PostToolUse", "PermissionDenied":
		how := RanAtTerminal
		if ev.HookEventName == "PermissionDenied" {
			how = DeniedAtTerminal
		}
		if err := h.Approvals.Withdraw(ctx, cred, ev.Request(clientOf(r)), how); err != nil {
			h.errors().Write(w, r, err)
			return
		}
		writeOutput(w, Output{})
	default:
		// Notification (idle_prompt, permission_prompt) and every other event: heard, nothing to
		// decide.
		writeOutput(w, Output{})
	}
}

// limit is how long a PermissionRequest waits: the hook's timeout (?timeout=SECONDS, as in the
// hook's settings) less Margin, else DefaultMaxWait. The waiter's own bound (its MaxWait: 1 h
// locally, 14 min 30 s on AWS, under the Lambda's 15 minutes) caps it further.
func (h *Handler) limit(r *http.Request) (time.Duration, error) {
	limit := DefaultMaxWait
	if s := r.URL.Query().Get("timeout"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return 0, ask.Errorf(ask.ERequestInvalid, "timeout must be the hook's timeout in whole seconds, such as 600")
		}
		limit = max(time.Duration(n)*time.Second-Margin, time.Second)
	}
	return limit, nil
}

// permissionRequest creates or joins the approval and answers with its decision, or with no
// decision when none comes in time.
func (h *Handler) permissionRequest(ctx context.Context, w http.ResponseWriter, r *http.Request, cred *ask.Credential, req Request, limit time.Duration) {
	askID, decided, err := h.Approvals.Request(ctx, cred, req)
	if err != nil {
		h.errors().Write(w, r, err)
		return
	}
	if decided != nil {
		writeOutput(w, OutputFor(decided))
		return
	}
	// Once the wait beats (every progress interval of the waiter, 15 s), the answer is 200 with
	// a space now and then (JSON allows whitespace before its value), which keeps proxies
	// from cutting the wait (CloudFront after 60 s of silence); whatever happens, its body is
	// then a decision or {}.
	ka := &spaces{w: w}
	d, err := h.Approvals.Await(ctx, cred, askID, limit, ka.beat)
	if d == nil {
		// No decision handed to the client (the limit, the client gone, an error): it decides at
		// its terminal, so the approval must not wait on in the inbox as if an answer could
		// still reach it. A decision that came meanwhile is recorded as too late.
		ended := time.Now()
		if err := h.Approvals.StopWaiting(context.WithoutCancel(ctx), cred, askID, ended); err != nil {
			h.Logger.WarnContext(ctx, "withdrawing an approval whose hook stopped waiting", "ask", askID, "err", err)
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, ErrUndecided):
		d = nil
	case errors.Is(err, context.Canceled):
		// The client closed the request: Claude Code does when the person answers No or Esc at
		// its terminal. Nobody reads an answer.
		return
	default:
		if ask.ErrorCode(err) == ask.EInternal {
			h.Logger.ErrorContext(ctx, "approval wait failed", "ask", askID, "err", err)
		}
		d = nil // no decision: the terminal decides
	}
	ka.finish(OutputFor(d))
}

// spaces writes a space now and then to a response whose JSON is not ready yet.
type spaces struct {
	w       http.ResponseWriter
	mu      sync.Mutex
	started bool
}

func (s *spaces) beat() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		setJSONHeaders(s.w.Header())
		s.w.WriteHeader(http.StatusOK)
		s.started = true
	}
	if _, err := s.w.Write([]byte(" ")); err != nil {
		return err
	}
	return http.NewResponseController(s.w).Flush()
}

func (s *spaces) finish(out Output) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		b, _ := json.Marshal(out)
		_, _ = s.w.Write(append(b, '\n'))
		return
	}
	writeOutput(s.w, out)
}

func writeOutput(w http.ResponseWriter, out Output) {
	b, _ := json.Marshal(out)
	setJSONHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(b, '\n'))
}

func setJSONHeaders(h http.Header) {
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
}
