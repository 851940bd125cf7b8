package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/reqlog"
)

// A blocking call waits minutes or hours for the person. Held the ordinary way, that wait is a
// net/http goroutine whose stack sits under mcp-go's and net/http's frames (32 KiB once grown),
// plus the connection's buffers, plus mcp-go's notification forwarder: about 73 KiB a call. So a
// wait is parked instead, when the connection allows it (HTTP/1.1 that can be hijacked, a client
// that takes SSE, nothing written yet): the call takes the connection from net/http, sends the
// SSE stream's headers itself, and lets mcp-go's handling and net/http's goroutine end. What is
// left while the person thinks is the connection, watched for the client leaving (hangup.go: on
// Linux one poller for every parked connection, elsewhere a goroutine reading it) and the wait's
// callbacks (Waiter.Begin). When the wait ends, the answer is made
// by mcp-go as always: the request is handled again with the outcome in hand, and what mcp-go
// writes goes onto the stream as its one `message` event; then the stream ends and the
// connection closes.
//
// On Lambda (no hijacking), over HTTP/2, or for a client that takes only JSON, calls wait as
// before.

// parking is what serve keeps of a blocking tools/call so that its wait can be parked.
type parking struct {
	h       *Handler
	w       http.ResponseWriter // net/http's writer, under the keepalive
	ka      *keepalive
	release func() // the call's place among its credential's waits (limit.PerKey)

	// What the answer's request needs: mcp-go handles it again, with the outcome in hand.
	header http.Header // as sent, without credentials
	path   string
	id     json.RawMessage
	name   string
	meta   json.RawMessage

	key     string // among the parked calls, for notifications/cancelled
	removed bool   // its wait ended: it is no longer among them (guarded by parkedCalls.mu)
	// cancelledEarly: its client cancelled before its wait began (guarded by parkedCalls.mu).
	cancelledEarly bool

	mu     sync.Mutex
	parked bool
}

// parkedCalls are the waits parked now, by credential, session and request id: a client that
// gives up on a call sends notifications/cancelled with its id, and mcp-go, whose handling of the
// call has ended, no longer knows it.
type parkedCalls struct {
	mu    sync.Mutex
	calls map[string]map[*parking]func(error) // a key is not unique: 2026-07-28 has no sessions
}

// parkedKey names a call among the parked ones: only its own credential and session may cancel
// it.
func parkedKey(credential string, r *http.Request, id json.RawMessage) string {
	return credential + "\x00" + r.Header.Get(mcp.HeaderSessionID) + "\x00" + string(bytes.TrimSpace(id))
}

// reserve puts p among the parked calls before its wait begins, with no way to end it yet: a
// cancel that arrives meanwhile (its client saw the ask waiting and gave up at once) is kept for
// it, and add ends the wait as soon as there is one.
func (c *parkedCalls) reserve(p *parking) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set(p, nil)
}

// add gives p's place among the parked calls the way to end its wait, unless the wait has ended
// already (remove came first); a cancel kept for it ends the wait now.
func (c *parkedCalls) add(p *parking, cancel func(error)) {
	c.mu.Lock()
	if p.removed {
		c.mu.Unlock()
		return
	}
	c.set(p, cancel)
	early := p.cancelledEarly
	c.mu.Unlock()
	if early {
		cancel(context.Canceled)
	}
}

// set puts p's way to end its wait (nil: none yet) under its key; c.mu is held.
func (c *parkedCalls) set(p *parking, cancel func(error)) {
	if c.calls == nil {
		c.calls = map[string]map[*parking]func(error){}
	}
	if c.calls[p.key] == nil {
		c.calls[p.key] = map[*parking]func(error){}
	}
	c.calls[p.key][p] = cancel
}

func (c *parkedCalls) remove(p *parking) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p.removed = true
	delete(c.calls[p.key], p)
	if len(c.calls[p.key]) == 0 {
		delete(c.calls, p.key)
	}
}

// cancel ends the parked calls of key, as their client asked.
func (c *parkedCalls) cancel(key string) {
	c.mu.Lock()
	var cancels []func(error)
	for p, cancel := range c.calls[key] {
		if cancel == nil {
			p.cancelledEarly = true // reserved: its wait has not begun (add ends it)
			continue
		}
		cancels = append(cancels, cancel)
	}
	c.mu.Unlock()
	for _, cancel := range cancels {
		cancel(context.Canceled)
	}
}

type parkingKey struct{}

func parkingFrom(ctx context.Context) *parking {
	p, _ := ctx.Value(parkingKey{}).(*parking)
	return p
}

// isParked reports whether the request of ctx was parked: its handler's result is not the answer.
func isParked(ctx context.Context) bool {
	p := parkingFrom(ctx)
	return p != nil && p.isParked()
}

func (p *parking) isParked() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.parked
}

// newParking returns the parking of a blocking call that may park, or nil.
func (h *Handler) newParking(r *http.Request, credential string, ka *keepalive, msg *rpcMessage, release func()) *parking {
	if ka == nil || !r.ProtoAtLeast(1, 1) || r.ProtoMajor != 1 || len(msg.ID) == 0 {
		return nil
	}
	header := r.Header.Clone()
	header.Del("Authorization")
	header.Del("Cookie")
	var meta json.RawMessage
	if msg.Params.Meta != nil {
		var p struct {
			Meta json.RawMessage `json:"_meta"`
		}
		if json.Unmarshal(msg.rawParams, &p) == nil {
			meta = p.Meta
		}
	}
	return &parking{h: h, w: ka.w, ka: ka, release: release, header: header, path: r.URL.Path,
		id: msg.ID, name: msg.Params.Name, meta: meta, key: parkedKey(credential, r, msg.ID)}
}

// releaseUnlessParked gives back the call's place among its credential's waits, unless the wait
// was parked and gives it back when it ends.
func (p *parking) releaseUnlessParked() {
	if !p.isParked() {
		p.release()
	}
}

// parkedResult is what a parked call's handler returns to mcp-go, which writes it nowhere. A new
// one each time: mcp-go writes into a result it is handed (its _meta), so one shared value would
// be written by every parked call at once.
func parkedResult() *mcp.CallToolResult { return &mcp.CallToolResult{IsError: true} }

// park parks the wait of a blocking call, and reports whether it did; then the handler returns
// parkedResult. Otherwise nothing has changed and the call waits as before.
func (p *parking) park(ctx context.Context, askID string, followed *ask.Follow, token mcp.ProgressToken) bool {
	if !p.ka.park() {
		return false
	}
	// net/http's buffers go with its goroutine: nothing more is read but the client leaving.
	conn, _, err := http.NewResponseController(p.w).Hijack()
	if err != nil {
		p.ka.unpark()
		return false
	}
	_ = conn.SetDeadline(time.Time{})
	s := &rawStream{conn: conn}
	// A head that cannot be written closes the connection (rawStream.write): the reader below
	// hears it, and the wait ends as for a client that left.
	_ = s.head(p.w.Header())
	p.mu.Lock()
	p.parked = true
	p.w, p.ka = nil, nil // what the wait keeps must not keep net/http's response and buffers
	p.mu.Unlock()

	line := reqlog.From(ctx)
	endLine := line.Hold()
	// What the wait keeps must not keep the request's context either: through its values (the
	// keepalive, mcp-go's session and request headers) it holds net/http's response, and so the
	// connection's buffers, the request and mcp-go's per-request state, about 14 KiB a call that
	// the hijack let go of otherwise (docs/benchmarks.md). The answer gets the log line only.
	answerCtx := reqlog.WithLine(context.Background(), line)
	ka := &keepalive{w: s, streaming: true}
	ka.comment()
	progress := func(time.Duration) error { return ka.beat() }
	if token != nil {
		n := 0
		progress = func(waited time.Duration) error {
			n++
			b, _ := json.Marshal(mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
				Method: "notifications/progress",
				Params: mcp.NotificationParams{AdditionalFields: progressParams(token, askID, n, waited)},
			}})
			return ka.event(b)
		}
	}
	w := p.h.cfg.Waiter
	done := w.Track()
	limit := w.limitOf(ctx)
	p.h.parked.reserve(p)
	// The client leaving is the one thing the connection can say now: nothing more is read. It
	// is heard from before the wait begins (the connection is closed once the wait ends, and its
	// descriptor may be another's then), and ends the wait once there is one.
	var hung hangupOnce
	stopHangup := onHangup(conn, hung.hear)
	cancel := w.Begin(ctx, gate.CredentialFrom(ctx), askID, followed, progress, func(reply *ask.Reply, err error) {
		defer done()
		defer p.release()
		stopHangup()
		p.h.parked.remove(p)
		p.answer(line, ka, s, p.h.outcome(answerCtx, askID, reply, err, limit), errors.Is(err, context.Canceled))
		endLine(s.sent)
	})
	p.h.parked.add(p, cancel) // nothing, if the wait already ended inside Begin
	hung.set(func() { cancel(context.Canceled) })
	return true
}

// answer has mcp-go answer the call with result, as it answers any tools/call, onto the stream.
// ka writes onto s; the stream ends after the answer.
func (p *parking) answer(line *reqlog.Line, ka *keepalive, s *rawStream, result *mcp.CallToolResult, gone bool) {
	params := map[string]json.RawMessage{"name": mustJSON(p.name), "arguments": json.RawMessage("{}")}
	if len(p.meta) > 0 {
		params["_meta"] = p.meta
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": p.id, "method": "tools/call", "params": params})
	ctx := context.WithValue(reqlog.WithLine(context.Background(), line), resumedKey{}, result)
	ctx = withGoneFlag(ctx, gone)
	defer s.end()
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, p.path, bytes.NewReader(body))
	if err != nil {
		return
	}
	r.Header = p.header
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	s.hold() // the answer and the stream's end go out as one write
	p.h.http.ServeHTTP(ka, r)
	ka.finish()
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// resumedKey carries the outcome of a parked wait into mcp-go's second handling of its call.
type resumedKey struct{}

// resumed returns the outcome a parked wait came back with, if ctx is its answer's.
func resumed(ctx context.Context) (*mcp.CallToolResult, bool) {
	r, ok := ctx.Value(resumedKey{}).(*mcp.CallToolResult)
	return r, ok
}

// writeTimeout bounds one write to a parked call's connection: a client that stops reading is
// cut, not waited for.
const writeTimeout = 10 * time.Second

// rawStream is the response of a parked call, written on the connection taken from net/http:
// HTTP/1.1, chunked, closed at the end.
type rawStream struct {
	conn    net.Conn
	header  http.Header
	mu      sync.Mutex
	sent    int64
	failed  bool
	held    bool   // chunks wait in pending for end
	pending []byte // chunks held
}

// hold keeps the chunks written from now on until end, which sends them with the last one.
func (s *rawStream) hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = true
}

// head writes the status line and headers: those set on the response so far (h), and the SSE
// stream's.
func (s *rawStream) head(h http.Header) error {
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 200 OK\r\n")
	h = h.Clone()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "close")
	h.Set("Transfer-Encoding", "chunked")
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	h.Del("Content-Length")
	_ = h.Write(&b)
	b.WriteString("\r\n")
	return s.write(b.Bytes())
}

func (s *rawStream) write(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed {
		return net.ErrClosed
	}
	_ = s.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	n, err := s.conn.Write(b)
	s.sent += int64(n)
	if err != nil {
		s.failed = true
		s.conn.Close() // the client is gone or stuck: the reader hears it, and the wait ends
	}
	return err
}

// Header implements http.ResponseWriter; the headers went out with head.
func (s *rawStream) Header() http.Header {
	if s.header == nil {
		s.header = http.Header{}
	}
	return s.header
}

// WriteHeader implements http.ResponseWriter; the status went out with head.
func (s *rawStream) WriteHeader(int) {}

// Write implements http.ResponseWriter: one chunk.
func (s *rawStream) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	s.mu.Lock()
	held := s.held
	if held {
		s.pending = appendChunk(s.pending, b)
	}
	s.mu.Unlock()
	if held {
		return len(b), nil
	}
	if err := s.write(appendChunk(make([]byte, 0, len(b)+20), b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// appendChunk appends b to dst as one chunk of a chunked body.
func appendChunk(dst, b []byte) []byte {
	dst = strconv.AppendInt(dst, int64(len(b)), 16)
	dst = append(dst, "\r\n"...)
	dst = append(dst, b...)
	return append(dst, "\r\n"...)
}

// Flush implements http.Flusher: every Write is sent at once.
func (s *rawStream) Flush() {}

// sentBytes is how much was written to the connection.
func (s *rawStream) sentBytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}

// end ends the stream (the last chunk) and closes the connection.
func (s *rawStream) end() {
	s.mu.Lock()
	last := append(s.pending, "0\r\n\r\n"...)
	s.pending, s.held = nil, false
	s.mu.Unlock()
	_ = s.write(last)
	s.conn.Close()
}
