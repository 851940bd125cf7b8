package httpapi

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/gate"
)

// The event socket, GET /api/v1/events, where this process holds the sockets (the local binary).
// See docs/design/events.md.

// SocketConfig tunes the event socket. Zero values take the defaults.
type SocketConfig struct {
	// Queue is how many changes may wait for one socket; a socket whose queue fills is closed
	// (its client reconnects and starts again from a fresh snapshot). Default 256.
	Queue int
	// Ping is how often the server pings an idle client, and how long it waits for the pong.
	// Default 30 s.
	Ping time.Duration
	// WriteTimeout bounds each frame's write, plus a second for every 64 KiB of the frame (a
	// large snapshot to a phone on a slow network must not be cut off); a peer that takes longer
	// is disconnected. Default 10 s.
	WriteTimeout time.Duration
}

// Defaults of SocketConfig.
const (
	DefaultSocketQueue        = 256
	DefaultSocketPing         = 30 * time.Second
	DefaultSocketWriteTimeout = 10 * time.Second
)

// Close reasons a client can act on.
const (
	closeTooSlow      = "too slow; reconnect for a fresh snapshot"
	closeShuttingDown = "Loopback is shutting down; reconnect for a fresh snapshot"
	closeRevoked      = "the credential that opened this socket was revoked; sign in again"
)

// Close codes the socket sends (RFC 6455 section 7.4). CloseRevoked is a socket whose credential
// was revoked: 4401, in the range the protocol leaves to applications, after HTTP's 401.
const (
	closeGoingAway     = websocket.CloseGoingAway         // 1001: the server is shutting down
	closeInternal      = websocket.CloseInternalServerErr // 1011
	closeTryAgainLater = websocket.CloseTryAgainLater     // 1013: too slow
	CloseRevoked       = 4401
)

// closeWriteLimit is how long a close frame may take to write.
const closeWriteLimit = time.Second

func (c SocketConfig) withDefaults() SocketConfig {
	if c.Queue <= 0 {
		c.Queue = DefaultSocketQueue
	}
	if c.Ping <= 0 {
		c.Ping = DefaultSocketPing
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultSocketWriteTimeout
	}
	return c
}

// upgrader upgrades the event socket with buffers sized for what it does: the client sends control
// frames and now and then a reply (a small read buffer; a reply is read through it into a message
// of its own), and the server writes now and then (a write buffer borrowed from a pool for each
// message, so an idle socket holds none).
var upgrader = websocket.Upgrader{
	ReadBufferSize:  512,
	WriteBufferSize: 32 << 10,
	WriteBufferPool: &sync.Pool{},
	Subprotocols:    []string{Subprotocol},
	// Origin was checked before, against the deployment's public URL rather than the Host header
	// a proxy may have rewritten.
	CheckOrigin: func(*http.Request) bool { return true },
	// permessage-deflate (RFC 7692) when the client offers it, as browsers do: a snapshot of 500
	// open asks is about 300 KB of JSON and about a tenth of that deflated. gorilla/websocket
	// negotiates it without context takeover only, so an idle socket holds no compressor: each
	// message is deflated on its own with a flate writer borrowed from a pool, and a change going
	// to many sockets is deflated once (PreparedMessage keeps the compressed frame beside the
	// plain one). Messages under compressMin go out as they are (see write).
	EnableCompression: true,
}

// compressMin is the smallest message deflated: below it, deflating costs more CPU than the bytes
// it saves (an ask.updated frame of a small question is about 600 bytes, and deflate's own framing
// and a fresh dictionary save little on it).
const compressMin = 1 << 10

// eventSocket: GET /api/v1/events — the event socket. Every refusal is plain HTTP with a Problem,
// before the upgrade, so nothing is ever sent on a socket that should not be open.
func (s *Server) eventSocket(w http.ResponseWriter, r *http.Request) {
	if err := checkHandshake(w, r); err != nil {
		s.writeError(w, r, err)
		return
	}
	if !s.sameOrigin(r.Header.Get("Origin")) {
		s.writeError(w, r, ask.Errorf(EOriginForbidden, "the event socket only opens to pages of %s", s.PublicURL))
		return
	}
	ticket, token, err := SocketOffer(r.Header)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// The newest updatedAt the client holds, when it reconnects (contract revision 6): it gets a
	// delta. Checked before the ticket is used, so a malformed one does not spend it.
	since, err := ask.ParseSince(r.URL.Query().Get("since"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	cred, err := s.Gate.CheckSocket(gate.FromRequest(r), gate.SocketAuth{
		Tickets: s.Tickets, Purpose: TicketPurpose, Ticket: ticket, Token: token, Now: s.now(),
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	release, ok := s.SocketLimit.Acquire(cred.ID)
	if !ok {
		s.errors().TooMany(w, r, "event sockets", s.SocketLimit.Max)
		return
	}
	k := &socket{srv: s, cfg: s.Socket.withDefaults(), release: release, writing: true, latest: events.Latest{}, space: cred.Space, credential: cred.ID}

	// Subscribe before reading the snapshot: a change committed after this moment is in the
	// queue, and one committed before it is in the snapshot. Both may hold the same change;
	// Latest drops whatever the client already has. Until the snapshot is sent, changes only
	// queue (writing is true).
	k.sub = s.Hub.SubscribeFunc(cred.Space, k.enqueue)
	// The person's own marks (contract revision 7): theirs only, never another person's.
	k.marks.Store(s.Hub.SubscribeMarks(cred.Space, cred.Person.ID, k.enqueueMark))
	snap, err := s.Service.SnapshotSince(r.Context(), cred.Space, since)
	if err != nil {
		k.end()
		s.writeError(w, r, err)
		return
	}
	first, err := events.EncodeSnapshot(snap)
	if err != nil {
		k.end()
		s.writeError(w, r, err)
		return
	}
	k.latest.AdmitSnapshot(snap)
	snap = nil

	conn, err := upgrader.Upgrade(hijackable{w}, r, nil)
	if err != nil {
		k.end()
		return // Upgrade has answered
	}
	k.conn = conn
	if err := k.write(websocket.TextMessage, first, nil); err != nil {
		k.end()
		return
	}
	first = nil
	if !s.register(k) { // shutting down: close it at once (this goroutine is still its writer)
		k.shut(closeGoingAway, closeShuttingDown)
		k.flush()
		return
	}
	conn.SetReadLimit(events.MaxClientFrame)
	conn.SetPongHandler(k.pong)
	k.mu.Lock()
	k.unwatch = s.Revocations.OnRevoke(cred, func() { k.shut(CloseRevoked, closeRevoked) })
	k.ping = time.AfterFunc(k.cfg.Ping, k.sendPing)
	k.mu.Unlock()
	// The socket lives on with one goroutine, its reader, whose stack stays small; this one (with
	// the request, and a stack grown by reading and encoding the snapshot) sends what queued
	// meanwhile and ends. Changes are written by a goroutine started for them (flush).
	go k.read()
	k.flush()
}

// hijackable lets the upgrader take the connection through whatever wraps the ResponseWriter
// (the request log's status recorder): http.ResponseController follows their Unwrap.
type hijackable struct{ http.ResponseWriter }

func (h hijackable) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(h.ResponseWriter).Hijack()
}

// socket is one open event socket. While idle it holds one goroutine (its reader, blocked in a
// read that only control frames end), no write buffer and no queue: a change starts a writer
// goroutine that sends what is queued and ends.
type socket struct {
	srv        *Server
	space      string // the space it follows, and the person credential that opened it
	credential string
	cfg        SocketConfig
	conn       *websocket.Conn
	sub        *events.Subscription
	marks      atomic.Pointer[events.Subscription] // the person's marks; set once, just after sub
	release    func()
	unwatch    func()
	ping       *time.Timer

	mu      sync.Mutex
	queue   []queued
	writing bool // a goroutine is writing (or the snapshot is not sent yet): it will see the queue
	closing bool // shut was called: nothing more is written but the close
	pongDue bool // a ping is unanswered
	code    int
	reason  string
	ended   bool

	latest events.Latest // only the writer touches it
}

// queued is a change waiting for a socket's writer, with its frame; or a frame of this socket's
// own (raw: a "mark.updated" frame, which no other person's socket shares).
type queued struct {
	change ask.Change
	frame  *encodedFrame
	err    error
	raw    []byte
}

// enqueue takes a change from the hub (under its lock: it must not block).
func (k *socket) enqueue(c ask.Change) bool {
	return k.push(func() queued {
		// Framed here, as the hub hands the change out: the first socket's call encodes it for
		// all, so that a thousand writers do not wait on the first one's encoding.
		f, err := k.srv.frames.encode(c)
		return queued{change: c, frame: f, err: err}
	})
}

// enqueueMark takes one of the person's own marks from the hub (under its lock: it must not
// block), as enqueue takes a change.
func (k *socket) enqueueMark(m ask.Mark) bool {
	b, err := events.Encode(events.MarkFrame(m))
	return k.push(func() queued { return queued{raw: b, err: err} })
}

// push queues what item makes and starts the writer if none runs. A socket whose queue is full
// is dropped: its client reconnects for a fresh snapshot rather than miss a change.
func (k *socket) push(item func() queued) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closing {
		return true
	}
	if len(k.queue) >= k.cfg.Queue {
		k.startClosing(closeTryAgainLater, closeTooSlow)
		return false
	}
	k.queue = append(k.queue, item())
	if !k.writing {
		k.writing = true
		go k.flush()
	}
	return true
}

// flush writes what is queued, until the queue is empty or the socket is closing. Only one flush
// runs at a time (writing).
func (k *socket) flush() {
	for {
		k.mu.Lock()
		if k.closing {
			k.mu.Unlock()
			k.finish()
			return
		}
		if len(k.queue) == 0 {
			k.queue = nil // an idle socket keeps no queue
			k.writing = false
			k.mu.Unlock()
			return
		}
		q := k.queue[0]
		k.queue[0] = queued{}
		k.queue = k.queue[1:]
		k.mu.Unlock()

		if q.raw != nil || q.err != nil && q.change.Ask == nil {
			if q.err != nil {
				k.srv.Logger.Error("encoding a mark event", "err", q.err)
				k.shut(closeInternal, "internal error; reconnect")
				continue
			}
			if err := k.write(websocket.TextMessage, q.raw, nil); err != nil {
				k.end()
				return
			}
			continue
		}
		c, f, err := q.change, q.frame, q.err
		if !k.latest.Admit(c.Ask) {
			continue
		}
		if err != nil {
			k.srv.Logger.Error("encoding an event", "ask", c.Ask.ID, "err", err)
			k.shut(closeInternal, "internal error; reconnect")
			continue
		}
		if err := k.write(0, f.b, f.prepared); err != nil {
			k.end()
			return
		}
	}
}

// write sends one message, within the write timeout for its size.
func (k *socket) write(kind int, b []byte, prepared *websocket.PreparedMessage) error {
	if err := k.conn.SetWriteDeadline(time.Now().Add(writeTimeout(k.cfg.WriteTimeout, len(b)))); err != nil {
		return err
	}
	k.conn.EnableWriteCompression(len(b) >= compressMin) // a no-op unless the client negotiated it
	if prepared != nil {
		return k.conn.WritePreparedMessage(prepared)
	}
	return k.conn.WriteMessage(kind, b)
}

// read handles the client's frames until the connection ends: its control frames (pongs, its
// close), and its requests (contract revision 8: a reply), each answered in turn on this socket
// (SocketReplies). A frame over events.MaxClientFrame ends the socket (1009), as on AWS.
func (k *socket) read() {
	replies := k.srv.socketReplies()
	for {
		kind, msg, err := k.conn.ReadMessage()
		if errors.Is(err, websocket.ErrReadLimit) {
			// The close (1009) is sent; the client may still be writing the frame, and closing
			// under it would reset the connection before it reads why. Read it out first.
			raw := k.conn.UnderlyingConn()
			raw.SetReadDeadline(time.Now().Add(closeWriteLimit))
			io.Copy(io.Discard, raw)
		}
		if err != nil {
			k.end()
			return
		}
		// A refusal goes back as a frame; a revoked credential's socket is closed by its watcher.
		out, _ := replies.Answer(context.Background(), k.space, k.credential, kind == websocket.TextMessage, msg)
		k.push(func() queued { return queued{raw: out} })
	}
}

// sendPing pings the client every Ping. A client that has not answered the last ping by the time
// of the next is disconnected.
func (k *socket) sendPing() {
	k.mu.Lock()
	gone := k.pongDue || k.ended
	k.pongDue = true
	k.mu.Unlock()
	if gone {
		k.end()
		return
	}
	if err := k.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(k.cfg.Ping)); err != nil {
		k.end()
		return
	}
	k.mu.Lock()
	if !k.ended {
		k.ping.Reset(k.cfg.Ping)
	}
	k.mu.Unlock()
}

// pong notes the client's answer to a ping (called by the reader).
func (k *socket) pong(string) error {
	k.mu.Lock()
	k.pongDue = false
	k.mu.Unlock()
	return nil
}

// shut closes the socket with a code and a reason, once what is being written now is written.
func (k *socket) shut(code int, reason string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.startClosing(code, reason)
}

func (k *socket) startClosing(code int, reason string) {
	if k.closing {
		return
	}
	k.closing, k.code, k.reason = true, code, reason
	k.queue = nil
	// Nothing more is sent: the marks' subscription goes now, as the hub drops the asks' one
	// (not here: this may run under the hub's lock, from a delivery).
	if m := k.marks.Load(); m != nil {
		go m.Close()
	}
	if !k.writing {
		k.writing = true // the closer is now the writer
		go k.finish()
	}
}

// finish sends the close frame (the writer's last message) and ends the socket.
func (k *socket) finish() {
	k.mu.Lock()
	code, reason := k.code, k.reason
	k.mu.Unlock()
	msg := websocket.FormatCloseMessage(code, reason)
	k.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(closeWriteLimit))
	k.end()
}

// end releases everything the socket holds; the first call does it, later ones nothing.
func (k *socket) end() {
	k.mu.Lock()
	if k.ended {
		k.mu.Unlock()
		return
	}
	k.ended, k.closing, k.queue = true, true, nil
	ping, unwatch := k.ping, k.unwatch
	k.mu.Unlock()
	k.sub.Close()
	if m := k.marks.Load(); m != nil {
		m.Close()
	}
	if ping != nil {
		ping.Stop()
	}
	if unwatch != nil {
		unwatch()
	}
	if k.conn != nil {
		k.conn.Close()
		k.srv.unregister(k)
	}
	k.release()
}

// sockets is the event sockets' shared state in a Server.
type sockets struct {
	socketsMu sync.Mutex
	open      map[*socket]struct{}
	shutDown  bool
	frames    frameCache
}

// register records an open socket, so that CloseSockets reaches it; false once shutting down.
func (s *Server) register(k *socket) bool {
	s.socketsMu.Lock()
	defer s.socketsMu.Unlock()
	if s.shutDown {
		return false
	}
	if s.open == nil {
		s.open = map[*socket]struct{}{}
	}
	s.open[k] = struct{}{}
	return true
}

func (s *Server) unregister(k *socket) {
	s.socketsMu.Lock()
	delete(s.open, k)
	s.socketsMu.Unlock()
}

// CloseSockets tells every event socket that the server is going away (close code 1001), so
// clients reconnect elsewhere or later. http.Server.Shutdown does not wait for upgraded
// connections: register this with its RegisterOnShutdown.
func (s *Server) CloseSockets() {
	s.socketsMu.Lock()
	s.shutDown = true
	open := make([]*socket, 0, len(s.open))
	for k := range s.open {
		open = append(open, k)
	}
	s.socketsMu.Unlock()
	for _, k := range open {
		k.shut(closeGoingAway, closeShuttingDown)
	}
}
