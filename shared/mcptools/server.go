// Package mcptools is the agent's side of Loopback: an MCP server (streamable HTTP, mcp-go) whose
// tools ask a person and wait for the reply. The store, not process memory, holds every ask,
// lease and task, so any instance can serve any request and a restart loses nothing.
package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
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
	"github.com/loopback-hq/loopback/shared/httpapi"
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

	Logger *slog.Logger
}

// MaxRequestBytes bounds one MCP request: an ask of 256 KiB, as JSON inside JSON-RPC.
const MaxRequestBytes = 2 * ask.MaxInputBytes

// Handler is /mcp: the gate, the Origin check, Loopback's store-backed tasks, then mcp-go.
type Handler struct {
	cfg   Config
	mcp   *server.MCPServer
	http  *server.StreamableHTTPServer
	tools map[string]blockingSpec

	parked parkedCalls // parked waits, for the client's notifications/cancelled (park.go)
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
	h := &Handler{cfg: cfg}
	h.mcp = server.NewMCPServer("loopback", "revision "+strconv.Itoa(buildinfo.Revision)+" build "+buildinfo.Build,
		server.WithToolCapabilities(false),
		server.WithTaskCapabilities(true, true, true),
		// No server.WithInputSchemaValidation: its messages print the failed rule as a Go value
		// ("/options: &{Got:1 Want:2}"). The domain checks every rule of the contract and says
		// which field broke which rule, with a stable code; decodeArgs refuses unknown fields.
		server.WithOutputSchemaValidation(),
		server.WithRecovery(),
		server.WithHooks(requestLogHooks()),
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

// ServeHTTP implements http.Handler: every request is logged (reqlog), one line each.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reqlog.Middleware(h.cfg.Logger, "mcp", http.HandlerFunc(h.serve)).ServeHTTP(w, r)
}

// errors writes every refusal of /mcp: the API's Problems, with a 500 logged on the MCP logger.
func (h *Handler) errors() httpapi.Errors { return httpapi.Errors{Logger: h.cfg.Logger} }

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	line := reqlog.From(r.Context())
	switch r.Method {
	case http.MethodPost, http.MethodGet, http.MethodDelete:
	default:
		// The streamable HTTP transport is POST, GET (the server's stream) and DELETE (the end
		// of a 2025 session); anything else gets a Problem, not a plain-text 404.
		w.Header().Set("Allow", "GET, POST, DELETE")
		h.errors().Write(w, r, ask.Errorf(httpapi.EMethodNotAllowed, "%s is not part of MCP's streamable HTTP transport: POST a JSON-RPC message", r.Method))
		return
	}
	// The transport's DNS-rebinding rule: a request from a browser page must come from this
	// deployment's own origin. Clients that are not browsers send no Origin.
	public := h.cfg.PublicURL(r)
	if !httpapi.SameOrigin(public, r.Header.Get("Origin")) {
		h.errors().Write(w, r, ask.Errorf(httpapi.EOriginForbidden, "this Origin may not use this MCP server"))
		return
	}
	cred, err := h.cfg.Gate.Check(gate.FromRequest(r), gate.BearerToken(r.Header.Get("Authorization")))
	if err != nil {
		h.errors().Write(w, r, err)
		return
	}
	if r.Method == http.MethodPost && !isJSON(r.Header.Get("Content-Type")) {
		h.errors().Write(w, r, ask.Errorf(httpapi.EMediaType, "an MCP message is JSON: send Content-Type: application/json"))
		return
	}
	ctx := withGoneFlag(withPublicURL(gate.WithCredential(r.Context(), cred), public), false)
	line.Credential(cred.ID)
	if id := r.Header.Get(mcp.HeaderSessionID); id != "" && validSessionID(id) && !sessionOwnedBy(id, cred.ID) {
		// Another credential's session (session.go): refused as unknown to this credential, so
		// its holder starts its own with initialize and never reaches the other's calls.
		h.errors().Write(w, r, ask.Errorf(httpapi.ESessionNotFound,
			"this Mcp-Session-Id was not issued to this credential (a session belongs to the token that sent initialize); send initialize to start a session of your own"))
		return
	}
	if r.Method == http.MethodGet {
		release, ok := h.cfg.Streams.Acquire(cred.ID)
		if !ok {
			h.errors().TooMany(w, r, "MCP streams", h.cfg.Streams.Max)
			return
		}
		defer release()
	}

	if r.Method == http.MethodPost {
		// A wait with nothing to report streams keepalives (keepalive.go).
		ka := newKeepalive(w, r)
		if ka != nil {
			ctx = context.WithValue(ctx, keepaliveKey{}, ka)
			w = ka
			defer ka.finish()
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.errors().Write(w, r, ask.Errorf(ask.ETooLarge, "an MCP request may be at most %d KiB", MaxRequestBytes>>10))
			return
		} else if err != nil {
			h.errors().Write(w, r, ask.Errorf(ask.ERequestInvalid, "reading the request: %v", err))
			return
		}
		var msg rpcMessage
		_ = json.Unmarshal(body, &msg) // mcp-go answers malformed JSON-RPC itself
		if err := ask.NoDuplicateKeys(body); err != nil {
			// mcp-go would keep one of the two values, and the agent meant one of them.
			writeRPC(w, msg.ID, nil, &rpcError{Code: mcp.INVALID_REQUEST, Message: "the message is not valid: " + err.Error()})
			return
		}
		var raw struct {
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(body, &raw) == nil {
			msg.rawParams = raw.Params
		}
		if msg.needsSession() && !mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
			switch id := r.Header.Get(mcp.HeaderSessionID); {
			case id == "":
				// The transport says 400 here; a 404 would tell the client its session expired.
				h.errors().Write(w, r, ask.Errorf(ask.ERequestInvalid,
					"missing Mcp-Session-Id header: send initialize first, then carry the session id it returned on every request"))
				return
			case !validSessionID(id):
				// 404 sends the client back to initialize, as the transport says.
				h.errors().Write(w, r, ask.Errorf(httpapi.ESessionNotFound,
					"unknown Mcp-Session-Id: this server did not issue it; send initialize to start a new session"))
				return
			}
		}
		client := msg.client()
		if client == "" {
			if id := r.Header.Get("Mcp-Session-Id"); id != "" {
				client, _ = clientFromSessionID(id)
			}
		}
		protocol := msg.Params.Meta.ProtocolVersion()
		if protocol == "" {
			protocol = r.Header.Get(mcp.HeaderProtocolVersion)
		}
		line.Add(slog.String("rpc", msg.Method), slog.String("protocol", protocol), slog.String("client", client))
		if msg.Method == string(mcp.MethodToolsCall) {
			line.Add(slog.String("tool", msg.Params.Name))
		}
		if msg.Params.TaskID != "" {
			line.Add(slog.String("task", msg.Params.TaskID))
		}
		ctx = withClient(ctx, client)
		if msg.Method == string(mcp.MethodNotificationCancelled) {
			// mcp-go cancels the calls it still runs; a parked one is Loopback's to end, and so is
			// one another instance runs (Waits carries the cancel there).
			call := parkedKey(cred.ID, r, msg.Params.RequestID)
			h.parked.cancel(call)
			if h.cfg.Waits != nil {
				h.cfg.Waits.Cancel(ctx, cred.ID, call)
			}
		}
		// How long a call waits before "no reply yet": what the person asked for on the URL, or
		// what its client is known to take (Waiter.Limit).
		asked, err := askedWait(r)
		if err != nil {
			h.errors().Write(w, r, err)
			return
		}
		ctx = withLimit(ctx, h.cfg.Waiter.Limit(Caller{Client: client, Asked: asked,
			ProgressToken: msg.Params.Meta != nil && msg.Params.Meta.ProgressToken != nil}))
		// A call that waits holds its place among its credential's waits while it waits, and
		// ends when its client cancels it from wherever.
		var cancelWait context.CancelFunc
		ctx, cancelWait = context.WithCancel(ctx)
		defer cancelWait()
		call := parkedKey(cred.ID, r, msg.ID)
		onCancel := func() {
			line.Add(slog.Bool("cancel_reached", true))
			cancelWait()
			h.parked.cancel(call)
		}
		if msg.Method == "tasks/result" && !modern(r, &msg) {
			release, ok := h.holdWait(w, r, cred.ID, call, onCancel)
			if !ok {
				return
			}
			defer release()
		}
		if modern(r, &msg) {
			if h.serveModern(w, r.WithContext(ctx), &msg, body) {
				return
			}
			// 2026-07-28 has no `task` parameter: a blocking call of a client that did not
			// declare the Tasks extension blocks, whatever it sent (mcp-go would make an
			// in-memory 2025 task of it).
			body = withoutTaskParam(body, &msg)
		} else if h.serveTask(w, r.WithContext(ctx), &msg) {
			return
		}
		if _, blocking := h.tools[msg.Params.Name]; blocking && msg.Method == string(mcp.MethodToolsCall) {
			release, ok := h.holdWait(w, r, cred.ID, call, onCancel)
			if !ok {
				return
			}
			// The wait may be parked, holding no goroutine (park.go); then it gives its place back.
			if p := h.newParking(r, cred.ID, ka, &msg, release); p != nil {
				ctx = context.WithValue(ctx, parkingKey{}, p)
				defer p.releaseUnlessParked()
			} else {
				defer release()
			}
		}
		r = r.WithContext(ctx)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	} else {
		r = r.WithContext(ctx)
	}
	h.http.ServeHTTP(w, r)
}

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

// holdWait takes a waiting call's place among its credential's waits; false when it answered the
// request instead (429 when the credential holds its most).
func (h *Handler) holdWait(w http.ResponseWriter, r *http.Request, credential, call string, cancel func()) (func(), bool) {
	if h.cfg.Waits == nil {
		return func() {}, true
	}
	release, err := h.cfg.Waits.Take(r.Context(), credential, call, cancel)
	switch {
	case errors.Is(err, limit.ErrFull):
		h.errors().TooMany(w, r, "waiting calls", h.cfg.Waits.Cap())
		return nil, false
	case err != nil:
		h.errors().Write(w, r, err)
		return nil, false
	}
	return release, true
}

// requestLogHooks put on the request's log line (reqlog) what only mcp-go sees: the JSON-RPC
// error it answered with, and whether a tool's result was a tool error.
func requestLogHooks() *server.Hooks {
	hooks := &server.Hooks{}
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

func readCloser(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }

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
