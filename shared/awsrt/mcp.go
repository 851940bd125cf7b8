package awsrt

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/dynamo"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/mcptools"
	"github.com/loopback-hq/loopback/shared/wsapi"
)

// MCP is the mcp function's handler: /mcp on a Lambda function URL with response streaming
// (lambdaurl), the same MCP server as the local binary (shared/mcptools) with three Lambda
// differences:
//
//   - Its writer gets a Flush. lambdaurl's writer has none, and mcp-go streams a call's progress
//     as SSE only through a flusher; lambdaurl already sends every write on at once.
//   - A waiting call learns of the person's reply by polling its ask's head (HeadWatcher): no hub
//     reaches a Lambda instance. After each call, the wait's bookkeeping (lease released, waiting
//     cleared) is written before the invocation ends, since Lambda freezes an instance between
//     invocations.
//   - GET (the standalone SSE stream) is refused with 405, which the transport allows: it would
//     keep an instance running, and billed, for 15 minutes per client doing nothing.
func (rt *Runtime) MCP() http.Handler {
	waiter := &mcptools.Waiter{
		Service: rt.Service, Watcher: HeadWatcher{Heads: rt.Store, Interval: rt.Env.Poll},
		Progress: rt.Env.Progress, MaxWait: rt.Env.MaxWait, QuietMaxWait: rt.Env.QuietMaxWait,
		// One strongly consistent read per second per credential that has calls waiting here.
		Revocations: &gate.Revocations{Credentials: rt.Store, Logger: rt.Logger},
	}
	return &mcpHandler{rt: rt, waiter: waiter, servers: map[string]*mcptools.Handler{}}
}

type mcpHandler struct {
	rt     *Runtime
	waiter *mcptools.Waiter

	mu      sync.Mutex
	servers map[string]*mcptools.Handler // by public URL: links in tool results point there
}

// maxServers bounds the MCP servers kept, one per public URL the deployment is reached at (the
// CloudFront domain, an alias): a header cannot make this grow without bound.
const maxServers = 4

func (h *mcpHandler) server(publicURL string) *mcptools.Handler {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.servers[publicURL]; s != nil {
		return s
	}
	if len(h.servers) >= maxServers {
		publicURL = h.rt.Env.PublicURL
		if s := h.servers[publicURL]; s != nil {
			return s
		}
	}
	s := mcptools.New(mcptools.Config{
		Service: h.rt.Service, Gate: h.rt.Gate, Tasks: h.rt.Store, Waiter: h.waiter,
		PublicURL: publicURL, Uploads: h.rt.Uploads, Logger: h.rt.Logger,
	})
	h.servers[publicURL] = s
	return s
}

func (h *mcpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/mcp" {
		httpapi.WriteError(w, r, ask.Errorf(ask.ERouteNotFound, "no such endpoint: %s %s; MCP is at /mcp", r.Method, r.URL.Path))
		return
	}
	if r.Method == http.MethodGet {
		w.Header().Set("Allow", "POST, DELETE")
		httpapi.WriteError(w, r, ask.Errorf(ask.EMethodNotAllowed, "this MCP server offers no standalone SSE stream; send requests with POST"))
		return
	}
	public := wsapi.PublicURL(h.rt.Env.PublicURL, r.Header.Get(wsapi.HostHeader))
	h.server(public).ServeHTTP(flusher{w}, r)
	h.waiter.Drain()
}

// flusher gives lambdaurl's writer the Flush that mcp-go looks for. Its writes already reach
// the client as they are made (an unbuffered pipe to the runtime's streaming response), so
// there is nothing to flush.
type flusher struct{ http.ResponseWriter }

func (flusher) Flush() {}

// Heads reads the small head of an ask (dynamo.Store.Head).
type Heads interface {
	Head(ctx context.Context, space, id string) (*dynamo.Head, error)
}

// HeadWatcher is mcptools.Watcher for Lambda: every Interval it reads the ask's head (status and
// version, from the table's head index: half a read unit however large the ask), and wakes the
// waiter when the version moved. The waiter then reads the whole ask once. The first read always
// wakes it: a change between the waiter's own first read and this one must not be taken as the
// starting point.
type HeadWatcher struct {
	Heads    Heads
	Interval time.Duration
}

// Watch implements mcptools.Watcher.
func (w HeadWatcher) Watch(space, askID string) (<-chan ask.Change, func()) {
	c := make(chan ask.Change, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		t := time.NewTicker(w.Interval)
		defer t.Stop()
		last := -1
		for {
			select {
			case <-t.C:
				h, err := w.Heads.Head(ctx, space, askID)
				if err != nil || h.Version == last {
					continue // not indexed yet, or a failed read: the next tick tries again
				}
				last = h.Version
				select {
				case c <- ask.Change{}:
				default:
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return c, cancel
}
