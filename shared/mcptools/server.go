// Package mcptools is the agent's side of Loopback: an MCP server (streamable HTTP, mcp-go) whose
// tools ask a person and wait for the reply. The store, not process memory, holds every ask,
// lease and task, so any instance can serve any request and a restart loses nothing.
package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/limit"
	"github.com/loopback-hq/loopback/shared/reqlog"
	"github.com/loopback-hq/loopback/shared/upload"
)

// Config is what the MCP server needs. Service, Gate, Tasks and Waiter are required.
type Config struct {
	Service *ask.Service
	Gate    *gate.Gate
	Tasks   ask.TaskStore
	Waiter  *Waiter

	// PublicURL says where people reach this deployment for a request, such as
	// http://127.0.0.1:8080: inbox and upload links point there, and a browser Origin must be it.
	// One server serves every address a deployment is reached at (a CloudFront domain, an alias).
	PublicURL func(*http.Request) string

	// Uploads issues upload tickets (request_upload); nil where the deployment keeps no uploads,
	// and then the tool says so.
	Uploads *upload.Service

	// TaskPollInterval is what task-augmented calls suggest clients poll at.
	TaskPollInterval time.Duration

	// Waits bounds the calls one credential has waiting at once: blocking tools/call and 2025
	// tasks/result, counted in this process (limit.PerKey) or across instances in the store
	// (limit.SharedWaits), which also carries a client's cancel to the instance that waits.
	// Streams bounds the GET streams one credential holds at once. 429 beyond either; nil, no
	// bound. A task holds nothing between polls, and counts against neither.
	Waits   limit.Waits
	Streams *limit.PerKey

	// OAuth: MCP OAuth is served (shared/oauth): refusals carry its challenge, and an OAuth
	// access token must have been issued for this resource.
	OAuth bool

	// Turns is how many requests are handled at once (turns.go); 0 is one per CPU. A call that
	// waits for the person, or a stream, gives its turn back: this bounds handling, not waiting.
	Turns int

	Logger *slog.Logger
}

// MaxRequestBytes bounds one MCP request: an ask of 256 KiB, as JSON inside JSON-RPC.
const MaxRequestBytes = 2 * ask.MaxInputBytes

// Handler is /mcp: the gate, the Origin check, Loopback's store-backed tasks, then mcp-go.
type Handler struct {
	cfg   Config
	mcp   *server.MCPServer
	http  *server.StreamableHTTPServer
	tools map[string]toolSpec

	parked  parkedCalls // parked waits, for the client's notifications/cancelled (park.go)
	streams streams     // parked GET streams, for their session's DELETE (stream.go)
	turns   *turns      // the requests being handled at once (turns.go)
}

// New builds the MCP server with every tool.
func New(cfg Config) *Handler {
	if cfg.TaskPollInterval == 0 {
		cfg.TaskPollInterval = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.PublicURL == nil {
		cfg.PublicURL = func(*http.Request) string { return "" } // no links; no browser Origin passes
	}
	if cfg.Turns <= 0 {
		cfg.Turns = defaultTurns()
	}
	h := &Handler{cfg: cfg, turns: newTurns(cfg.Turns)}
	hk := hooks()
	hk.AddOnUnregisterSession(h.sessionUnregistered)
	h.mcp = server.NewMCPServer("loopback", "revision "+strconv.Itoa(buildinfo.Revision)+" build "+buildinfo.Build,
		server.WithToolCapabilities(false),
		server.WithTaskCapabilities(true, true, true),
		// No server.WithInputSchemaValidation: its messages print the failed rule as a Go value
		// ("/options: &{Got:1 Want:2}"). The domain checks every rule of the contract and says
		// which field broke which rule, with a stable code; decodeArgs refuses unknown fields.
		server.WithOutputSchemaValidation(),
		server.WithRecovery(),
		server.WithHooks(hk),
		server.WithInstructions(instructions),
	)
	h.addTools()
	h.http = server.NewStreamableHTTPServer(h.mcp,
		server.WithSessionIdManagerResolver(sessionResolver{}),
		// Loopback checks Origin itself against its public URL; mcp-go's check refuses any
		// non-localhost Host, which a hosted deployment always has.
		server.WithDisableLocalhostProtection(true),
		server.WithStreamableHTTPLogger(cfg.Logger),
	)
	return h
}

const instructions = `Loopback reaches the person you work for and brings back their answer. Use it when you need a
decision, an approval, or the person's word before going on: ask_question for a question (with
choices when there are clear options), request_review to put work in front of them for approval,
send_briefing to go through findings or options point by point. Each call waits until the person
answers, which can take minutes or hours; if it returns without a reply, call await_reply with the
askId to keep waiting. Always pass project: the name of the repository's root folder.`

// askedWait reads the person's own bound on a call's wait from the MCP URL (?maxWait=50s, or a
// number of seconds), for a client whose limit Loopback cannot see (Claude Code's
// MCP_TOOL_TIMEOUT). Zero when absent.
func askedWait(r *http.Request) (time.Duration, error) {
	v := r.URL.Query().Get("maxWait")
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		n, nerr := strconv.ParseFloat(v, 64)
		if nerr != nil || math.IsNaN(n) {
			return 0, ask.Errorf(ask.ERequestInvalid, "maxWait=%q in the MCP URL must be a duration such as 50s or 10m, or a number of seconds", v)
		}
		d = time.Duration(min(n, 1e9) * float64(time.Second))
	}
	if d <= 0 {
		return 0, ask.Errorf(ask.ERequestInvalid, "maxWait=%q in the MCP URL must be more than zero", v)
	}
	return d, nil
}

// hooks are what Loopback does inside mcp-go's handling: put on the request's log line (reqlog)
// what only mcp-go sees (the JSON-RPC error it answered with, and whether a tool's result was a
// tool error), and rewrite server/discover's capabilities (discoverHook).
func hooks() *server.Hooks {
	hooks := &server.Hooks{}
	hooks.AddAfterDiscover(discoverHook)
	hooks.AddOnError(func(ctx context.Context, _ any, _ mcp.MCPMethod, _ any, err error) {
		code := mcp.INTERNAL_ERROR
		if e, ok := err.(interface{ ToJSONRPCError() mcp.JSONRPCError }); ok {
			code = e.ToJSONRPCError().Error.Code
		}
		reqlog.From(ctx).Add(slog.Int("rpc_error", code))
	})
	hooks.AddAfterCallTool(func(ctx context.Context, _ any, _ *mcp.CallToolRequest, result any) {
		if isParked(ctx) {
			return // not the answer: that comes when the parked wait ends, through here again
		}
		if clientGone(ctx) {
			// The client cancelled or went away: it gets nothing, and nothing failed.
			reqlog.From(ctx).Add(slog.Bool("client_gone", true))
			return
		}
		if r, ok := result.(*mcp.CallToolResult); ok && r.IsError {
			reqlog.From(ctx).Add(slog.Bool("tool_error", true))
		}
	})
	return hooks
}

// goneKey carries a flag that a call's wait sets when it ended because its client cancelled it
// or went away (a parked wait's answer carries it set).
type goneKey struct{}

// withGoneFlag gives ctx a flag for markGone.
func withGoneFlag(ctx context.Context, gone bool) context.Context {
	f := new(atomic.Bool)
	f.Store(gone)
	return context.WithValue(ctx, goneKey{}, f)
}

// markGone records that the call of ctx ended because its client left.
func markGone(ctx context.Context) {
	if f, ok := ctx.Value(goneKey{}).(*atomic.Bool); ok {
		f.Store(true)
	}
}

// clientGone reports whether the call of ctx ended because its client cancelled it or went away.
func clientGone(ctx context.Context) bool {
	f, _ := ctx.Value(goneKey{}).(*atomic.Bool)
	return (f != nil && f.Load()) || errors.Is(ctx.Err(), context.Canceled)
}

// rpcMessage is the part of a JSON-RPC message Loopback looks at before mcp-go does.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  struct {
		ClientInfo *mcp.Implementation `json:"clientInfo,omitempty"`
		Meta       *mcp.Meta           `json:"_meta,omitempty"`
		Name       string              `json:"name,omitempty"`
		Arguments  json.RawMessage     `json:"arguments,omitempty"`
		Task       json.RawMessage     `json:"task,omitempty"`
		TaskID     string              `json:"taskId,omitempty"`
		RequestID  json.RawMessage     `json:"requestId,omitempty"`
		Cursor     string              `json:"cursor,omitempty"`
	} `json:"params"`

	rawParams json.RawMessage // params as sent, for the header checks
}

// withoutTaskParam drops params.task from a tools/call body, leaving the rest as sent.
func withoutTaskParam(body []byte, msg *rpcMessage) []byte {
	if msg.Method != string(mcp.MethodToolsCall) || len(msg.Params.Task) == 0 {
		return body
	}
	var m map[string]json.RawMessage
	var params map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || json.Unmarshal(m["params"], &params) != nil {
		return body
	}
	delete(params, "task")
	m["params"], _ = json.Marshal(params)
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

// needsSession reports whether the message is a request or notification of the session-based
// protocol (before 2026-07-28), which must carry the session id that initialize returned.
func (m *rpcMessage) needsSession() bool {
	return m.Method != "" && m.Method != string(mcp.MethodInitialize) && !mcp.IsModernProtocol(m.Params.Meta.ProtocolVersion())
}

// maxClientRunes bounds the MCP client's name and version, as an ask records it.
const maxClientRunes = 120

// client is the MCP client's name and version: from initialize, or from a request's _meta (the
// 2026-07-28 revision has no initialize).
func (m *rpcMessage) client() string {
	info := m.Params.ClientInfo
	if info == nil {
		info = m.Params.Meta.ClientInfo()
	}
	if info == nil {
		return ""
	}
	// Shown to the person on every ask: one line, without controls or direction overrides
	// (ask.CleanOneLine: a client's initialize is not refused for its name).
	c := strings.TrimSpace(ask.CleanOneLine(info.Name + " " + info.Version))
	if r := []rune(c); len(r) > maxClientRunes {
		c = string(r[:maxClientRunes]) // at a character boundary, never mid-character
	}
	return strings.ToValidUTF8(c, "")
}

// isJSON reports whether a Content-Type is application/json (any parameters).
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}
