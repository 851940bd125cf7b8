package mcptools

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// A 2025-11-25 client opens its session's standalone GET stream after initialize and keeps it
// open as long as the session lives, whether or not a call waits. Served by mcp-go, that stream
// is a goroutine of net/http's (its stack grown through the handling), mcp-go's forwarder of the
// session's notifications, net/http's connection buffers and the session's channels: with the
// agent's waiting call, about 97 KiB per agent (docs/benchmarks.md). So the stream is parked as
// a waiting call is (park.go): it takes the connection from net/http, sends the SSE head itself,
// and lets net/http's handling end. What is left while the session lives is the connection,
// watched for the client leaving (hangup.go), a timer, and the session as mcp-go
// knows it (streamSession, in place of what mcp-go kept since initialize: forgetSession), through
// which whatever mcp-go sends to the session's client reaches the stream.
//
// The stream carries, as mcp-go's did, every notification mcp-go sends to the session (a
// broadcast, or one sent to this session), as a `message` event; and a comment line every
// Waiter.Progress, which every SSE reader skips, so that no proxy between takes the quiet for a
// dead stream (mcp-go's heartbeat was off). It ends, with the chunked body's end and the
// connection closed, when the client leaves or a write to it fails, when the session is deleted
// (DELETE /mcp), when the credential is revoked, and when the server shuts down.
//
// Over HTTP/2, or a GET that is not a 2025 session's (no session id, an unknown protocol
// version), mcp-go serves the stream as before. On AWS there is no GET stream (405).

// streamComment is the comment line a parked stream sends every Waiter.Progress.
const streamComment = ": keepalive\n\n"

// notesQueued is how many notifications to a session may wait for their delivery; mcp-go drops
// one sent while that many wait. Loopback sends a session's stream nothing of its own (progress
// goes on the call's stream), so the room is for what mcp-go broadcasts, a few at a time; each
// place costs every connected session about 70 bytes (16 places were 1.1 KiB of a 2025-11-25
// agent's 7.3 KiB of live heap, docs/benchmarks.md).
const notesQueued = 4

// streamSession is a parked GET stream, and its session as mcp-go knows it
// (server.ClientSession): mcp-go sends the session's notifications on its channel, and says so
// first (UpgradeToSSEWhenReceiveNotification), which starts the delivery of that one
// notification. No goroutine waits on the channel in between.
type streamSession struct {
	h       *Handler
	id      string // the session's id
	s       *rawStream
	notes   chan mcp.JSONRPCNotification
	release func() // the stream's place among its credential's (Config.Streams)
	endLine func(sent int64)

	deliver sync.Mutex // one delivery at a time, so events go out in the order they were sent
	done    chan struct{}

	mu         sync.Mutex
	over       bool
	registered bool // with mcp-go, as the session's stream
	tick       *time.Timer
	stops      []func()
	stopHangup func() // stops hearing the client leave (hangup.go); nil until heard from
}

// Initialize implements server.ClientSession.
func (ss *streamSession) Initialize() {}

// Initialized implements server.ClientSession: the session was initialized before its stream.
func (ss *streamSession) Initialized() bool { return true }

// SessionID implements server.ClientSession.
func (ss *streamSession) SessionID() string { return ss.id }

// NotificationChannel implements server.ClientSession.
func (ss *streamSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return ss.notes }

// UpgradeToSSEWhenReceiveNotification implements server.SessionWithStreamableHTTPConfig: mcp-go
// calls it just before it sends a notification on the channel, which this delivery takes.
func (ss *streamSession) UpgradeToSSEWhenReceiveNotification() { go ss.deliverOne() }

// deliverOne writes the next notification sent on the channel as a `message` event. If the send
// it was started for did not happen (the channel was full: mcp-go drops the notification), it
// takes the next one, or ends with the stream.
func (ss *streamSession) deliverOne() {
	ss.deliver.Lock()
	defer ss.deliver.Unlock()
	select {
	case n := <-ss.notes:
		b, err := json.Marshal(n)
		if err != nil {
			return
		}
		if _, err := ss.s.Write(sseMessage(b)); err != nil {
			ss.end()
		}
	case <-ss.done:
	}
}

// streams are the parked GET streams by session id: a session's DELETE ends its streams.
type streams struct {
	mu sync.Mutex
	by map[string]map[*streamSession]struct{}
}

// add puts ss among the streams, and has register make it the session's stream as mcp-go knows
// it unless another stream of the session is (mcp-go gave each notification to one stream).
func (st *streams) add(ss *streamSession, register func() bool) (registered bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.by == nil {
		st.by = map[string]map[*streamSession]struct{}{}
	}
	if st.by[ss.id] == nil {
		st.by[ss.id] = map[*streamSession]struct{}{}
	}
	first := true
	for other := range st.by[ss.id] {
		other.mu.Lock()
		first = first && !other.registered
		other.mu.Unlock()
	}
	st.by[ss.id][ss] = struct{}{}
	return first && register()
}

func (st *streams) remove(ss *streamSession) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.by[ss.id], ss)
	if len(st.by[ss.id]) == 0 {
		delete(st.by, ss.id)
	}
}

// endSession ends the parked streams of session id.
func (st *streams) endSession(id string) {
	st.mu.Lock()
	var ended []*streamSession
	for ss := range st.by[id] {
		ended = append(ended, ss)
	}
	st.mu.Unlock()
	for _, ss := range ended {
		ss.end()
	}
}

// sessionUnregistered is mcp-go's OnUnregisterSession hook: a session mcp-go lets go of while
// its stream is open (DELETE /mcp) has its parked streams ended.
func (h *Handler) sessionUnregistered(_ context.Context, session server.ClientSession) {
	ss, ok := session.(*streamSession)
	if !ok {
		return
	}
	ss.mu.Lock()
	ss.registered = false
	over := ss.over // a stream that ended lets go of its session itself (end)
	ss.mu.Unlock()
	if !over {
		h.streams.endSession(ss.id)
	}
}

// canParkStream reports whether a GET is a 2025 session's standalone stream on a connection that
// can be taken: HTTP/1.1, a well-formed session id, a protocol version mcp-go would serve a
// stream for. Every other GET is mcp-go's to answer, as before.
func canParkStream(r *http.Request) bool {
	version := r.Header.Get(mcp.HeaderProtocolVersion)
	return r.ProtoMajor == 1 && r.ProtoAtLeast(1, 1) &&
		validSessionID(r.Header.Get(mcp.HeaderSessionID)) &&
		!mcp.IsModernProtocol(version) && (version == "" || mcp.IsValidProtocolVersion(version))
}

// parkStream parks a 2025 session's GET stream (see above); a GET it cannot park goes on to
// mcp-go.
//
// Seam: it goes when mcp-go serves a GET stream without a goroutine of its own per stream, or
// when a goroutine per connected session is cheap enough.
func (h *Handler) parkStream(q *request) bool {
	if q.r.Method != http.MethodGet || !canParkStream(q.r) {
		return true
	}
	conn, _, err := http.NewResponseController(q.w).Hijack()
	if err != nil {
		return true // mcp-go serves it, as over HTTP/2
	}
	_ = conn.SetDeadline(time.Time{})
	ss := &streamSession{h: h, id: q.r.Header.Get(mcp.HeaderSessionID), s: &rawStream{conn: conn},
		notes: make(chan mcp.JSONRPCNotification, notesQueued), release: q.stream, done: make(chan struct{})}
	q.stream = nil // the stream gives its place back when it ends
	ss.endLine = q.line.Hold()
	// A head that cannot be written closes the connection: the hangup below hears it.
	_ = ss.s.head(q.w.Header())
	// mcp-go knows the stream as the session's, as it knew its own: what it sends to the
	// session's client comes here. It registered the session at initialize; it lets go of that
	// (forgetSession), and the stream takes the session's place.
	ctx := context.WithoutCancel(q.r.Context())
	registered := h.streams.add(ss, func() bool {
		h.forgetSession(ctx, ss.id)
		return h.mcp.RegisterSession(ctx, ss) == nil
	})

	w := h.cfg.Waiter
	ss.mu.Lock()
	if ss.over { // the session's DELETE came meanwhile
		ss.mu.Unlock()
		if registered {
			h.mcp.UnregisterSession(ctx, ss.id)
		}
		return false
	}
	ss.registered = registered
	ss.stops = append(ss.stops,
		w.Revocations.OnRevoke(q.cred, ss.end),
		afterFunc(w.quitting(), ss.end),
	)
	if w.Progress > 0 {
		ss.tick = time.AfterFunc(w.Progress, ss.beat)
	}
	ss.mu.Unlock()
	// The client leaving: heard from until the stream ends (end stops it before the connection
	// closes; a hangup that comes first ends the stream).
	stop := onHangup(conn, ss.end)
	ss.mu.Lock()
	if ss.over {
		ss.mu.Unlock()
		stop()
	} else {
		ss.stopHangup = stop
		ss.mu.Unlock()
	}
	return false
}

// forgetSession has mcp-go let go of what it keeps of session id since its initialize: the
// session it made then (its four channels, about 9.5 KiB) and its per-session tables, as a
// DELETE of the session would. Loopback's sessions keep nothing (the id carries the client and
// the credential), so mcp-go then serves each of the session's POSTs with a session of that
// request's own, as it serves every 2026-07-28 request; what mcp-go sends to the session's client
// reaches the parked stream, which takes the session's place.
//
// Seam: it goes when mcp-go keeps no state for a session whose ids the application manages, or
// lets the application drop it.
func (h *Handler) forgetSession(ctx context.Context, id string) {
	r, err := http.NewRequestWithContext(ctx, http.MethodDelete, "/mcp", nil)
	if err != nil {
		return
	}
	r.Header.Set(mcp.HeaderSessionID, id)
	h.http.ServeHTTP(discardWriter{}, r)
}

// discardWriter is an http.ResponseWriter that writes nothing: what mcp-go answers a DELETE of
// its own (forgetSession) goes to no client.
type discardWriter struct{}

func (discardWriter) Header() http.Header         { return http.Header{} }
func (discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (discardWriter) WriteHeader(int)             {}

// beat sends a comment line every Waiter.Progress; a write that fails ends the stream.
func (ss *streamSession) beat() {
	if _, err := ss.s.Write([]byte(streamComment)); err != nil {
		ss.end()
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !ss.over {
		ss.tick.Reset(ss.h.cfg.Waiter.Progress)
	}
}

// end ends the stream once: mcp-go lets go of the session's stream, the body ends and the
// connection closes, the stream's place is given back and its log line written.
func (ss *streamSession) end() {
	ss.mu.Lock()
	if ss.over {
		ss.mu.Unlock()
		return
	}
	ss.over = true
	if ss.tick != nil {
		ss.tick.Stop()
	}
	stops, registered := ss.stops, ss.registered
	if ss.stopHangup != nil {
		stops = append(stops, ss.stopHangup) // before the connection closes, below
	}
	ss.stops = nil
	ss.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	if registered { // and not let go of by mcp-go already (sessionUnregistered)
		ss.h.mcp.UnregisterSession(context.Background(), ss.id)
	}
	ss.h.streams.remove(ss)
	close(ss.done)
	ss.s.end()
	ss.release()
	ss.endLine(ss.s.sentBytes())
}
