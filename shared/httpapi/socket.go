package httpapi

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

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

// CloseRevoked is the close code of a socket whose credential was revoked: 4401, in the range
// the WebSocket protocol leaves to applications, after HTTP's 401.
const CloseRevoked websocket.StatusCode = 4401

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

// eventSocket: GET /api/v1/events — the event socket. Every refusal is plain HTTP with a Problem,
// before the upgrade, so nothing is ever sent on a socket that should not be open.
func (s *Server) eventSocket(w http.ResponseWriter, r *http.Request) {
	if err := checkHandshake(w, r); err != nil {
		s.writeError(w, r, err)
		return
	}
	if !s.sameOrigin(r.Header.Get("Origin")) {
		s.writeError(w, r, ask.Errorf(ask.EOriginForbidden, "the event socket only opens to pages of %s", s.PublicURL))
		return
	}
	ticket, token, err := SocketOffer(r.Header)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	cred, err := s.Gate.CheckSocket(r.Context(), gate.SocketAuth{
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
	space := cred.Space
	cfg := s.Socket.withDefaults()

	// Subscribe before reading the snapshot: a change committed after this moment is in the
	// queue, and one committed before it is in the snapshot. Both may hold the same change;
	// Latest drops whatever the client already has.
	sub := s.Hub.Subscribe(space, cfg.Queue)
	snap, err := s.Service.SnapshotWire(r.Context(), space)
	if err != nil {
		sub.Close()
		release()
		s.writeError(w, r, err)
		return
	}
	first, err := events.EncodeSnapshot(snap)
	if err != nil {
		sub.Close()
		release()
		s.writeError(w, r, err)
		return
	}
	latest := events.Latest{}
	latest.AdmitWire(snap)
	snap = nil

	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols: []string{Subprotocol},
		// Origin was checked above, against the deployment's public URL rather than the Host
		// header a proxy may have rewritten.
		InsecureSkipVerify: true,
	})
	if err != nil {
		sub.Close()
		release()
		return // Accept has answered
	}
	// The socket lives on in a goroutine of its own, and this one (with the request, and a stack
	// grown by reading and encoding the snapshot) ends: an idle socket costs little.
	revoked, unwatch := s.Revocations.Watch(cred)
	go s.pump(context.Background(), conn, sub, latest, first, cfg, revoked, func() { unwatch(); release() })
}

// pump sends the snapshot and then every newer change until the client goes, falls behind, its
// credential is revoked, or the server shuts down (CloseSockets).
func (s *Server) pump(ctx context.Context, conn *websocket.Conn, sub *events.Subscription, latest events.Latest, first []byte, cfg SocketConfig, revoked <-chan struct{}, unwatch func()) {
	defer unwatch()
	defer sub.Close()
	defer conn.CloseNow()
	// The client sends nothing; reading handles its pongs and close. Its context ends when the
	// connection does.
	gone := conn.CloseRead(ctx)
	write := func(b []byte) error {
		wctx, cancel := context.WithTimeout(gone, writeTimeout(cfg.WriteTimeout, len(b)))
		defer cancel()
		return conn.Write(wctx, websocket.MessageText, b)
	}
	if err := write(first); err != nil {
		return
	}
	first = nil
	ping := time.NewTicker(cfg.Ping)
	defer ping.Stop()
	for {
		// A dropped subscription has lost a change: stop at once rather than send what is queued.
		select {
		case <-sub.Done():
			conn.Close(websocket.StatusTryAgainLater, closeTooSlow)
			return
		default:
		}
		select {
		case c := <-sub.C():
			if !latest.Admit(c.Ask) {
				continue
			}
			b, err := s.frames.encode(c)
			if err != nil {
				s.Logger.Error("encoding an event", "ask", c.Ask.ID, "err", err)
				conn.Close(websocket.StatusInternalError, "internal error; reconnect")
				return
			}
			if err := write(b); err != nil {
				return
			}
		case <-sub.Done():
			conn.Close(websocket.StatusTryAgainLater, closeTooSlow)
			return
		case <-ping.C:
			pctx, cancel := context.WithTimeout(gone, cfg.Ping)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return
			}
		case <-gone.Done():
			return
		case <-s.closing():
			conn.Close(websocket.StatusGoingAway, closeShuttingDown)
			return
		case <-revoked:
			conn.Close(CloseRevoked, closeRevoked)
			return
		}
	}
}

// sockets is the event sockets' shared state in a Server.
type sockets struct {
	closingInit sync.Once
	closingCh   chan struct{}
	closingDone sync.Once
	frames      frameCache
}

func (s *Server) closing() <-chan struct{} {
	s.closingInit.Do(func() { s.closingCh = make(chan struct{}) })
	return s.closingCh
}

// CloseSockets tells every event socket that the server is going away (close code 1001), so
// clients reconnect elsewhere or later. http.Server.Shutdown does not wait for upgraded
// connections: register this with its RegisterOnShutdown.
func (s *Server) CloseSockets() {
	s.closing()
	s.closingDone.Do(func() { close(s.closingCh) })
}
