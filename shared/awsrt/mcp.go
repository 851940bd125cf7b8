package awsrt

import (
	"net/http"
	"strings"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/httpapi"
)

// MCP is the mcp function's handler: /mcp (and Claude Code's hooks, /hooks/claude-code, which wait
// as its calls do) on a Lambda function URL with response streaming
// (lambdaurl), the same MCP server as the local binary (shared/mcptools) with three Lambda
// differences:
//
//   - Its writer gets a Flush. lambdaurl's writer has none, and mcp-go streams a call's progress
//     as SSE only through a flusher; lambdaurl already sends every write on at once.
//   - A waiting call learns of the person's reply by polling its ask's head (dynamo.HeadWatcher,
//     wired in New): no hub reaches a Lambda instance. After each call, the wait's bookkeeping (lease released, waiting
//     cleared) is written before the invocation ends, since Lambda freezes an instance between
//     invocations.
//   - GET (the standalone SSE stream) is refused with 405, which the transport allows: it would
//     keep an instance running, and billed, for 15 minutes per client doing nothing.
func (rt *Runtime) MCP() http.Handler { return &mcpHandler{rt: rt} }

type mcpHandler struct{ rt *Runtime }

func (h *mcpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/hooks/") {
		// Claude Code's hooks: a PermissionRequest waits for the person as an MCP call does.
		h.rt.App.Hooks.ServeHTTP(flusher{w}, r)
		h.rt.App.Waiter.Drain()
		return
	}
	if r.URL.Path != "/mcp" {
		httpapi.Errors{Logger: h.rt.Logger}.Write(w, r, ask.Errorf(httpapi.ERouteNotFound, "no such endpoint: %s %s; MCP is at /mcp", r.Method, r.URL.Path))
		return
	}
	if r.Method == http.MethodGet {
		w.Header().Set("Allow", "POST, DELETE")
		httpapi.Errors{Logger: h.rt.Logger}.Write(w, r, ask.Errorf(httpapi.EMethodNotAllowed, "this MCP server offers no standalone SSE stream; send requests with POST"))
		return
	}
	h.rt.App.MCP.ServeHTTP(flusher{w}, r)
	h.rt.App.Waiter.Drain()
}

// flusher gives lambdaurl's writer the Flush that mcp-go looks for. Its writes already reach
// the client as they are made (an unbuffered pipe to the runtime's streaming response), so
// there is nothing to flush.
type flusher struct{ http.ResponseWriter }

func (flusher) Flush() {}
