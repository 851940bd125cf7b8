package mcptools

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
)

// A blocking call whose client sent no progress token has nothing to report while the person
// thinks, and a response that sends nothing is cut by whatever idles out first: CloudFront after
// its 60-second origin read timeout, a corporate proxy, a load balancer. So such a wait answers
// as an SSE stream (which the streamable HTTP transport allows for any POST whose client accepts
// text/event-stream) and sends an SSE comment line every Waiter.Progress, which every SSE reader
// skips; the JSON-RPC response is the stream's one event at the end.
//
// keepalive wraps the response writer mcp-go (or Loopback's own task answers) write to. Until
// start is called it passes everything through. After start, it has sent the SSE headers itself;
// a plain JSON response written after that is held and sent at finish as one `message` event,
// and a response mcp-go writes as SSE goes through as it is.

type keepaliveKey struct{}

// keepaliveFrom returns the request's keepalive, or nil where its client takes no SSE.
func keepaliveFrom(ctx context.Context) *keepalive {
	k, _ := ctx.Value(keepaliveKey{}).(*keepalive)
	return k
}

type keepalive struct {
	w http.ResponseWriter

	mu        sync.Mutex
	streaming bool // SSE headers sent by start
	done      bool // the response has begun: no more comment lines
	held      bool // a JSON response is being held for finish
	parked    bool // the connection was taken for a parked wait (park.go): write nothing here
	buf       bytes.Buffer
	failed    error // the first write that failed: the client is gone
}

// writeErr returns the first write to the client that failed (whoever wrote it: mcp-go's
// progress notifications go through Write), or nil.
func (k *keepalive) writeErr() error {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.failed
}

// wrote records a write's error.
func (k *keepalive) wrote(n int, err error) (int, error) {
	if err != nil && k.failed == nil {
		k.failed = err
	}
	return n, err
}

// newKeepalive wraps w for a request whose client accepts SSE; otherwise it returns nil.
func newKeepalive(w http.ResponseWriter, r *http.Request) *keepalive {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		return nil
	}
	return &keepalive{w: w}
}

// start turns the response into an SSE stream and sends a first comment line. It reports
// whether it did: not when something was written already.
func (k *keepalive) start() bool {
	if k == nil {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.done || k.streaming || k.parked {
		return k.streaming && !k.done
	}
	h := k.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	k.w.WriteHeader(http.StatusOK)
	k.streaming = true
	k.comment()
	return true
}

// event sends one SSE `message` event (a notification), unless the response has begun. An error
// says the client can no longer be written to.
func (k *keepalive) event(data []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.streaming && !k.done {
		if _, err := k.wrote(k.w.Write(sseMessage(data))); err != nil {
			return err
		}
		if f, ok := k.w.(http.Flusher); ok {
			f.Flush()
		}
	}
	return nil
}

// sseMessage is data as one SSE `message` event, as mcp-go writes its events.
func sseMessage(data []byte) []byte {
	return append(append([]byte("event: message\ndata: "), data...), "\n\n"...)
}

// park stops this writer writing anything, for a wait that takes the connection (park.go); false
// if something was written already, and then nothing changes.
func (k *keepalive) park() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.done || k.streaming {
		return false
	}
	k.parked = true
	return true
}

// unpark undoes park, for a wait that could not take the connection after all.
func (k *keepalive) unpark() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.parked = false
}

// beat sends a comment line, unless the response has begun. An error says the client can no
// longer be written to: the wait it keeps alive should end.
func (k *keepalive) beat() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.streaming && !k.done {
		return k.comment()
	}
	return nil
}

func (k *keepalive) comment() error {
	if _, err := k.wrote(k.w.Write([]byte(": waiting for the person\n\n"))); err != nil {
		return err
	}
	if f, ok := k.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// Header implements http.ResponseWriter.
func (k *keepalive) Header() http.Header { return k.w.Header() }

// WriteHeader implements http.ResponseWriter. After start, the status is already sent; what the
// response's own Content-Type says decides whether it is held (JSON) or passed on (SSE).
func (k *keepalive) WriteHeader(status int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.parked {
		return
	}
	if !k.streaming {
		k.done = true
		k.w.WriteHeader(status)
		return
	}
	if !k.done {
		k.done = true
		k.held = !strings.HasPrefix(k.w.Header().Get("Content-Type"), "text/event-stream")
		k.w.Header().Set("Content-Type", "text/event-stream")
	}
}

// Write implements http.ResponseWriter.
func (k *keepalive) Write(b []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.parked {
		return len(b), nil
	}
	if !k.streaming {
		k.done = true
		return k.wrote(k.w.Write(b))
	}
	if !k.done {
		k.done, k.held = true, true
	}
	if k.held {
		return k.buf.Write(b)
	}
	return k.wrote(k.w.Write(b))
}

// Flush implements http.Flusher, as mcp-go needs to stream.
func (k *keepalive) Flush() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.held || k.parked {
		return
	}
	if f, ok := k.w.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap returns the writer underneath (reqlog.LineOf, http.ResponseController).
func (k *keepalive) Unwrap() http.ResponseWriter { return k.w }

// finish sends a held JSON response as the stream's one event.
func (k *keepalive) finish() {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.held {
		return
	}
	k.w.Write(sseMessage(bytes.TrimRight(k.buf.Bytes(), "\n")))
	if f, ok := k.w.(http.Flusher); ok {
		f.Flush()
	}
	k.held = false
	k.buf = bytes.Buffer{}
}
