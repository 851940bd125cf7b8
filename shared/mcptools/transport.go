package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/limit"
	"github.com/loopback-hq/loopback/shared/oauth"
	"github.com/loopback-hq/loopback/shared/reqlog"
)

// The transport: /mcp is MCP's streamable HTTP, served by mcp-go behind a list of admission
// steps. Each step looks at one thing, in the order of the list (admission); the first that
// answers the request ends it, and a request no step answered goes to mcp-go. Steps run in this
// order because each relies on the ones before: nothing is read before the caller is known,
// nothing is logged of a body before it is read and checked, and nothing waits before its wait
// is bounded and counted.
//
// Loopback answers some requests itself, in front of mcp-go, where mcp-go lacks what Loopback
// needs. Each such seam is one step (or one hook), and its comment names the upstream feature
// that would let it go:
//
//   - a keepalive on a POST's stream (keepalive.go): startKeepalive;
//   - strict decoding of a message: refuseDuplicateKeys;
//   - sessions bound to a credential (session.go): checkSessionOwner;
//   - 2025-11-25 tasks kept in the store (tasks.go): serveStoredTasks;
//   - 2026-07-28's Tasks extension (extension.go): serveTasksExtension, and discoverHook;
//   - cancelling a parked call or one another instance waits on: forwardCancel;
//   - parking a blocking call's wait off its goroutine (park.go): holdBlockingCall;
//   - parking a 2025 session's GET stream off its goroutines (stream.go): parkStream.

// request is one /mcp request as the admission steps see it: what the steps before found out,
// for the steps after and for mcp-go.
type request struct {
	w    http.ResponseWriter // the keepalive's writer once keepalive has run
	r    *http.Request       // as net/http gave it; r.Context() is the request's
	ctx  context.Context     // what mcp-go gets: the credential, the client, the wait's bound
	line *reqlog.Line

	public string          // the deployment's public URL for this request
	cred   *ask.Credential // the caller, once checkCredential has run
	ka     *keepalive      // nil where the request takes no keepalive

	body []byte     // a POST's body, as read (and as mcp-go gets it, but for withoutTaskParam)
	msg  rpcMessage // what Loopback reads of the JSON-RPC message before mcp-go

	stream   func() // gives back a GET stream's place among its credential's (holdStream)
	call     string // the call among its credential's waits and parked calls
	onCancel func() // ends the call's wait, from wherever its client cancels it

	ends []func() // run when the request ends, last first
}

// atEnd runs f when the request ends.
func (q *request) atEnd(f func()) { q.ends = append(q.ends, f) }

// refuse answers the request with err as the API's Problem.
func (h *Handler) refuse(q *request, err error) { h.errors().Write(q.w, q.r, err) }

// An admissionStep looks at a request, and answers it (returning false) or lets it through.
type admissionStep func(h *Handler, q *request) (next bool)

// admission is every step a request passes before mcp-go serves it, in order.
var admission = []admissionStep{
	(*Handler).checkMethod,
	(*Handler).checkOrigin,
	(*Handler).checkCredential,
	(*Handler).checkMediaType,
	(*Handler).checkSessionOwner,
	(*Handler).holdStream,
	(*Handler).parkStream,
	(*Handler).startKeepalive,
	(*Handler).readBody,
	(*Handler).takeTurn,
	(*Handler).refuseDuplicateKeys,
	(*Handler).checkSession,
	(*Handler).logMessage,
	(*Handler).forwardCancel,
	(*Handler).boundWait,
	(*Handler).holdTaskResult,
	(*Handler).serveTasksExtension,
	(*Handler).serveStoredTasks,
	(*Handler).holdBlockingCall,
}

// ServeHTTP implements http.Handler: every request is logged (reqlog), one line each.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reqlog.Middleware(h.cfg.Logger, "mcp", http.HandlerFunc(h.serve)).ServeHTTP(w, r)
}

// serve runs the admission steps, then hands what they let through to mcp-go.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	q := &request{w: w, r: r, ctx: r.Context(), line: reqlog.From(r.Context())}
	defer func() {
		for i := len(q.ends) - 1; i >= 0; i-- {
			q.ends[i]()
		}
	}()
	for _, step := range admission {
		if !step(h, q) {
			return
		}
	}
	h.toMCPGo(q)
}

// errors writes every refusal of /mcp: the API's Problems, with a 500 logged on the MCP logger.
func (h *Handler) errors() httpapi.Errors { return httpapi.Errors{Logger: h.cfg.Logger} }

// checkMethod: the streamable HTTP transport is POST, GET (the server's stream) and DELETE (the
// end of a 2025 session); anything else gets a Problem, not a plain-text 404.
func (h *Handler) checkMethod(q *request) bool {
	switch q.r.Method {
	case http.MethodPost, http.MethodGet, http.MethodDelete:
		return true
	}
	q.w.Header().Set("Allow", "GET, POST, DELETE")
	h.refuse(q, ask.Errorf(httpapi.EMethodNotAllowed, "%s is not part of MCP's streamable HTTP transport: POST a JSON-RPC message", q.r.Method))
	return false
}

// checkOrigin is the transport's DNS-rebinding rule: a request from a browser page must come
// from this deployment's own origin. Clients that are not browsers send no Origin. (mcp-go's
// own check refuses any non-localhost Host, which a hosted deployment always has, so it is off.)
func (h *Handler) checkOrigin(q *request) bool {
	q.public = h.cfg.PublicURL(q.r)
	if !httpapi.SameOrigin(q.public, q.r.Header.Get("Origin")) {
		h.refuse(q, ask.Errorf(httpapi.EOriginForbidden, "this Origin may not use this MCP server"))
		return false
	}
	return true
}

// checkCredential is the gate: an agent's bearer token, or a 401/403 Problem. The credential
// and the public URL go on the context, and the credential on the log line. Where MCP OAuth is
// on (Config.OAuth), an OAuth access token must have been issued for this resource with the mcp
// scope, and every 401 and 403 carries the challenge that starts a client's sign-in
// (WWW-Authenticate with resource_metadata and scope; insufficient_scope on a 403).
func (h *Handler) checkCredential(q *request) bool {
	cred, err := h.cfg.Gate.Check(gate.FromRequest(q.r), gate.BearerToken(q.r.Header.Get("Authorization")))
	if err == nil && h.cfg.OAuth {
		err = oauth.CheckAudience(q.public, cred.Grant)
	}
	if err != nil {
		f := h.errors().Refusal(q.r.Context(), err, "method", q.r.Method)
		if h.cfg.OAuth && (f.Status == http.StatusUnauthorized || f.Status == http.StatusForbidden) {
			msg := ""
			if gate.BearerToken(q.r.Header.Get("Authorization")) != "" {
				msg = ask.ErrorMessage(err)
			}
			f.Header.Set("WWW-Authenticate", oauth.Challenge(q.public, f.Status, msg))
		}
		f.Write(q.w)
		return false
	}
	q.cred = cred
	q.ctx = withGoneFlag(withPublicURL(gate.WithCredential(q.ctx, cred), q.public), false)
	q.line.Credential(cred.ID)
	return true
}

// checkMediaType: a POST is a JSON-RPC message, sent as application/json.
func (h *Handler) checkMediaType(q *request) bool {
	if q.r.Method == http.MethodPost && !isJSON(q.r.Header.Get("Content-Type")) {
		h.refuse(q, ask.Errorf(httpapi.EMediaType, "an MCP message is JSON: send Content-Type: application/json"))
		return false
	}
	return true
}

// checkSessionOwner refuses another credential's session (session.go) as unknown to this
// credential, so its holder starts its own with initialize and never reaches the other's calls.
//
// Seam: mcp-go's sessions are not bound to who opened them; it goes when a SessionIdManager can
// see the request (and so the credential) that validates an id.
func (h *Handler) checkSessionOwner(q *request) bool {
	if id := q.r.Header.Get(mcp.HeaderSessionID); id != "" && validSessionID(id) && !sessionOwnedBy(id, q.cred.ID) {
		h.refuse(q, ask.Errorf(httpapi.ESessionNotFound,
			"this Mcp-Session-Id was not issued to this credential (a session belongs to the token that sent initialize); send initialize to start a session of your own"))
		return false
	}
	return true
}

// holdStream bounds the GET streams one credential holds at once (Config.Streams): 429 beyond.
func (h *Handler) holdStream(q *request) bool {
	if q.r.Method != http.MethodGet {
		return true
	}
	release, ok := h.cfg.Streams.Acquire(q.cred.ID)
	if !ok {
		h.errors().TooMany(q.w, q.r, "MCP streams", h.cfg.Streams.Max)
		return false
	}
	q.stream = release
	q.atEnd(func() {
		if q.stream != nil { // nil: a parked stream gives it back when it ends (stream.go)
			q.stream()
		}
	})
	return true
}

// startKeepalive puts a POST's writer under the keepalive (keepalive.go): a wait with nothing to
// report streams comment lines, so that no proxy between takes the quiet for a dead call.
//
// Seam: mcp-go's heartbeat (WithHeartbeatInterval) beats only the GET stream; this goes when it
// beats a POST's response stream while a tool runs.
func (h *Handler) startKeepalive(q *request) bool {
	if q.r.Method != http.MethodPost {
		return true
	}
	if ka := newKeepalive(q.w, q.r); ka != nil {
		q.ka, q.w = ka, ka
		q.ctx = context.WithValue(q.ctx, keepaliveKey{}, ka)
		q.atEnd(ka.finish)
	}
	return true
}

// readBody reads a POST's message, at most MaxRequestBytes (413 beyond), and what Loopback looks
// at of it. Malformed JSON-RPC is mcp-go's to answer.
func (h *Handler) readBody(q *request) bool {
	if q.r.Method != http.MethodPost {
		return true
	}
	body, err := io.ReadAll(http.MaxBytesReader(q.w, q.r.Body, MaxRequestBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		h.refuse(q, ask.Errorf(ask.ETooLarge, "an MCP request may be at most %d KiB", MaxRequestBytes>>10))
		return false
	} else if err != nil {
		h.refuse(q, ask.Errorf(ask.ERequestInvalid, "reading the request: %v", err))
		return false
	}
	q.body = body
	_ = json.Unmarshal(body, &q.msg)
	var raw struct {
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &raw) == nil {
		q.msg.rawParams = raw.Params
	}
	return true
}

// refuseDuplicateKeys: a message with a key twice is invalid. mcp-go would keep one of the two
// values (encoding/json keeps the last), and the agent meant one of them.
//
// Seam: it goes when mcp-go decodes messages strictly.
func (h *Handler) refuseDuplicateKeys(q *request) bool {
	if q.r.Method != http.MethodPost {
		return true
	}
	if err := ask.NoDuplicateKeys(q.body); err != nil {
		writeRPC(q.w, q.msg.ID, nil, &rpcError{Code: mcp.INVALID_REQUEST, Message: "the message is not valid: " + err.Error()})
		return false
	}
	return true
}

// checkSession: a message of the session-based protocol (before 2026-07-28) other than
// initialize carries a session id this server issued. Without one the transport says 400 (a 404
// would tell the client its session expired); an id this server did not issue is 404, which
// sends the client back to initialize.
func (h *Handler) checkSession(q *request) bool {
	if q.r.Method != http.MethodPost || !q.msg.needsSession() || mcp.IsModernProtocol(q.r.Header.Get(mcp.HeaderProtocolVersion)) {
		return true
	}
	switch id := q.r.Header.Get(mcp.HeaderSessionID); {
	case id == "":
		h.refuse(q, ask.Errorf(ask.ERequestInvalid,
			"missing Mcp-Session-Id header: send initialize first, then carry the session id it returned on every request"))
		return false
	case !validSessionID(id):
		h.refuse(q, ask.Errorf(httpapi.ESessionNotFound,
			"unknown Mcp-Session-Id: this server did not issue it; send initialize to start a new session"))
		return false
	}
	return true
}

// logMessage puts the message's method, protocol, client, tool and task on the request's log
// line, and the client on the context (an ask records it).
func (h *Handler) logMessage(q *request) bool {
	if q.r.Method != http.MethodPost {
		return true
	}
	msg := &q.msg
	client := msg.client()
	if client == "" {
		if id := q.r.Header.Get(mcp.HeaderSessionID); id != "" {
			client, _ = clientFromSessionID(id)
		}
	}
	protocol := msg.Params.Meta.ProtocolVersion()
	if protocol == "" {
		protocol = q.r.Header.Get(mcp.HeaderProtocolVersion)
	}
	q.line.Add(slog.String("rpc", msg.Method), slog.String("protocol", protocol), slog.String("client", client))
	if msg.Method == string(mcp.MethodToolsCall) {
		q.line.Add(slog.String("tool", msg.Params.Name))
	}
	if msg.Params.TaskID != "" {
		q.line.Add(slog.String("task", msg.Params.TaskID))
	}
	q.ctx = withClient(q.ctx, client)
	return true
}

// forwardCancel passes a client's notifications/cancelled to the calls mcp-go no longer runs:
// a parked one, and one another instance waits on (Waits carries the cancel there). mcp-go
// cancels the calls it still runs itself, as the notification goes on to it.
//
// Seam: it goes with parking (park.go), and when mcp-go's cancellation reaches calls across
// instances.
func (h *Handler) forwardCancel(q *request) bool {
	if q.r.Method != http.MethodPost || q.msg.Method != string(mcp.MethodNotificationCancelled) {
		return true
	}
	call := parkedKey(q.cred.ID, q.r, q.msg.Params.RequestID)
	h.parked.cancel(call)
	if h.cfg.Waits != nil {
		h.cfg.Waits.Cancel(q.ctx, q.cred.ID, call)
	}
	return true
}

// boundWait sets how long a call waits before "no reply yet": what the person asked for on the
// URL (askedWait), or what its client is known to take (Waiter.Limit). The call's wait ends
// when its client cancels it, from wherever (onCancel).
func (h *Handler) boundWait(q *request) bool {
	if q.r.Method != http.MethodPost {
		return true
	}
	asked, err := askedWait(q.r)
	if err != nil {
		h.refuse(q, err)
		return false
	}
	q.ctx = withLimit(q.ctx, h.cfg.Waiter.Limit(Caller{Client: clientFrom(q.ctx), Asked: asked,
		ProgressToken: q.msg.Params.Meta != nil && q.msg.Params.Meta.ProgressToken != nil}))
	var cancelWait context.CancelFunc
	q.ctx, cancelWait = context.WithCancel(q.ctx)
	q.atEnd(cancelWait)
	q.call = parkedKey(q.cred.ID, q.r, q.msg.ID)
	// onCancel may be kept for as long as the call waits (Waits.Take): it holds what it needs,
	// not the request (whose writer holds the connection's buffers).
	line, call := q.line, q.call
	q.onCancel = func() {
		line.Add(slog.Bool("cancel_reached", true))
		cancelWait()
		h.parked.cancel(call)
	}
	return true
}

// holdTaskResult: a 2025 tasks/result waits for the person like a blocking call, so it holds a
// place among its credential's waits (Config.Waits): 429 beyond.
func (h *Handler) holdTaskResult(q *request) bool {
	if q.r.Method != http.MethodPost || q.msg.Method != "tasks/result" || modern(q.r, &q.msg) {
		return true
	}
	release, ok := h.holdWait(q.w, q.r, q.cred.ID, q.call, q.onCancel)
	if ok {
		q.atEnd(release)
	}
	return ok
}

// serveTasksExtension answers what Loopback serves of 2026-07-28 itself (extension.go): the
// Tasks extension's task-augmented calls and tasks/*. A blocking call of a client that did not
// declare the extension blocks, whatever it sent: 2026-07-28 has no `task` parameter (mcp-go
// would make an in-memory 2025 task of it), so it is dropped from the body mcp-go gets.
//
// Seam: it goes when mcp-go serves the Tasks extension (io.modelcontextprotocol/tasks) with a
// task store of the application's.
func (h *Handler) serveTasksExtension(q *request) bool {
	if q.r.Method != http.MethodPost || !modern(q.r, &q.msg) {
		return true
	}
	if h.serveModern(q.w, q.r.WithContext(q.ctx), &q.msg) {
		return false
	}
	q.body = withoutTaskParam(q.body, &q.msg)
	return true
}

// serveStoredTasks answers 2025-11-25's task-augmented calls and tasks/* from the store
// (tasks.go), so any instance, or a restarted binary, answers for a task.
//
// Seam: it goes when mcp-go takes a task store of the application's (its tasks live in a map of
// one process today).
func (h *Handler) serveStoredTasks(q *request) bool {
	if q.r.Method != http.MethodPost || modern(q.r, &q.msg) {
		return true
	}
	return !h.serveTask(q.w, q.r.WithContext(q.ctx), &q.msg)
}

// holdBlockingCall: a blocking tools/call holds a place among its credential's waits while it
// waits (Config.Waits, 429 beyond); where the connection allows, its wait is parked (park.go),
// holding no goroutine, and then gives its place back when it ends.
//
// Seam (parking): it goes when mcp-go can end a handler's goroutine and answer the request later
// (an asynchronous tool result), or when a goroutine per waiting call is cheap enough.
func (h *Handler) holdBlockingCall(q *request) bool {
	if q.r.Method != http.MethodPost || q.msg.Method != string(mcp.MethodToolsCall) {
		return true
	}
	if tool, ok := h.tools[q.msg.Params.Name]; !ok || !tool.blocking() {
		return true
	}
	release, ok := h.holdWait(q.w, q.r, q.cred.ID, q.call, q.onCancel)
	if !ok {
		return false
	}
	if p := h.newParking(q.r, q.cred.ID, q.ka, &q.msg, release); p != nil {
		q.ctx = context.WithValue(q.ctx, parkingKey{}, p)
		q.atEnd(p.releaseUnlessParked)
	} else {
		q.atEnd(release)
	}
	return true
}

// toMCPGo hands the request to mcp-go, with the context the steps built and the body they read.
func (h *Handler) toMCPGo(q *request) {
	r := q.r.WithContext(q.ctx)
	if q.r.Method == http.MethodGet {
		giveBackTurn(q.ctx) // a stream mcp-go serves (one that could not be parked) lasts
	}
	if q.r.Method == http.MethodPost {
		r.Body = io.NopCloser(bytes.NewReader(q.body))
		r.ContentLength = int64(len(q.body))
	}
	h.http.ServeHTTP(q.w, r)
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
