package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/gate"
)

// The event socket, GET /api/v1/events, and its tickets. See docs/design/events.md.

// Subprotocols of the event socket. A client offers Subprotocol, and, when it cannot send headers
// (a browser), TicketPrefix+<ticket> beside it. The server only ever selects Subprotocol.
const (
	Subprotocol  = "loopback.v1"
	TicketPrefix = "loopback.ticket."
)

// TicketPurpose is what event tickets are stored for; TicketTTL is how long one lasts.
const (
	TicketPurpose = "events"
	TicketTTL     = time.Minute
)

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

// EventTicket is the contract's EventTicket.
type EventTicket struct {
	Ticket    string
	ExpiresAt time.Time
}

// MarshalJSON writes the ticket with the contract's time format.
func (t EventTicket) MarshalJSON() ([]byte, error) {
	return []byte(`{"ticket":"` + t.Ticket + `","expiresAt":"` + ask.FormatTime(t.ExpiresAt) + `"}`), nil
}

// issueTicket: POST /api/v1/events/tickets — a one-time pass onto the event socket, for this
// credential's space and actor, good for a minute. Only its hash is stored.
func (s *Server) issueTicket(w http.ResponseWriter, r *http.Request) {
	c := CredentialFrom(r.Context())
	ticket, hash := newTicket()
	t := &ask.Ticket{
		Hash: hash, Purpose: TicketPurpose, Space: c.Space, Actor: c.Actor, CredentialID: c.ID,
		ExpiresAt: s.now().Add(TicketTTL),
	}
	if err := s.Tickets.CreateTicket(r.Context(), t); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusCreated, EventTicket{Ticket: ticket, ExpiresAt: t.ExpiresAt})
}

// newTicket returns 256 random bits, base64url (all of it valid in a subprotocol name), and the
// hash the store keeps.
func newTicket() (ticket string, hash []byte) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	ticket = base64.RawURLEncoding.EncodeToString(b[:])
	return ticket, gate.Hash(ticket)
}

func (s *Server) now() time.Time {
	if s.Service != nil && s.Service.Now != nil {
		return s.Service.Now()
	}
	return time.Now()
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
	ticket, err := OfferedTicket(r.Header)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	cred, err := AuthenticateSocket(r.Context(), s.Gate, s.Tickets, r.Header, ticket, s.now())
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
	snap, err := s.Service.Snapshot(r.Context(), space)
	if err != nil {
		sub.Close()
		release()
		s.writeError(w, r, err)
		return
	}
	first, err := events.Encode(events.SnapshotFrame(snap))
	if err != nil {
		sub.Close()
		release()
		s.writeError(w, r, err)
		return
	}
	latest := events.Latest{}
	latest.AdmitSnapshot(snap)
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

// frameCache encodes each change once for all the sockets it goes to: the hub hands every
// subscriber the same *ask.Ask for one change, so it is the key. It remembers the last few
// changes only; a socket further behind encodes its own copy.
type frameCache struct {
	mu   sync.Mutex
	m    map[*ask.Ask]*encodedFrame
	ring [16]*ask.Ask
	next int
}

type encodedFrame struct {
	once sync.Once
	b    []byte
	err  error
}

func (c *frameCache) encode(ch ask.Change) ([]byte, error) {
	c.mu.Lock()
	e := c.m[ch.Ask]
	if e == nil {
		if c.m == nil {
			c.m = map[*ask.Ask]*encodedFrame{}
		}
		delete(c.m, c.ring[c.next])
		c.ring[c.next] = ch.Ask
		c.next = (c.next + 1) % len(c.ring)
		e = &encodedFrame{}
		c.m[ch.Ask] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.b, e.err = events.Encode(events.Frame(ch)) })
	return e.b, e.err
}

// minWriteRate is the slowest a client may take frames: below it, a write times out.
const minWriteRate = 64 << 10 // bytes per second

// writeTimeout is how long a frame of n bytes may take to write.
func writeTimeout(base time.Duration, n int) time.Duration {
	return base + time.Duration(n)*time.Second/minWriteRate
}

// checkHandshake refuses, with a Problem, a request that is not a WebSocket handshake the socket
// can accept.
func checkHandshake(w http.ResponseWriter, r *http.Request) error {
	if !HeaderHasToken(r.Header, "Connection", "upgrade") || !HeaderHasToken(r.Header, "Upgrade", "websocket") {
		w.Header().Set("Upgrade", "websocket")
		return ask.Errorf(ask.ERequestInvalid, "this is the event socket: open it as a WebSocket with the subprotocol %s", Subprotocol)
	}
	if r.Header.Get("Sec-WebSocket-Version") != "13" {
		w.Header().Set("Sec-WebSocket-Version", "13")
		return ask.Errorf(ask.ERequestInvalid, "the event socket speaks WebSocket version 13 only")
	}
	if keys := r.Header.Values("Sec-WebSocket-Key"); len(keys) != 1 {
		return ask.Errorf(ask.ERequestInvalid, "a WebSocket handshake needs exactly one Sec-WebSocket-Key")
	} else if k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(keys[0])); err != nil || len(k) != 16 {
		return ask.Errorf(ask.ERequestInvalid, "Sec-WebSocket-Key must be 16 bytes in base64")
	}
	if !HeaderHasToken(r.Header, "Sec-WebSocket-Protocol", Subprotocol) {
		return ask.Errorf(ask.ERequestInvalid, "offer the subprotocol %s", Subprotocol)
	}
	return nil
}

// OfferedTicket returns the ticket offered as a subprotocol, or "" when there is none. The local
// socket and API Gateway's $connect read the handshake alike.
func OfferedTicket(h http.Header) (string, error) {
	ticket := ""
	for _, p := range HeaderTokens(h, "Sec-WebSocket-Protocol") {
		t, ok := strings.CutPrefix(p, TicketPrefix)
		if !ok {
			continue
		}
		if ticket != "" {
			return "", ask.Errorf(ask.ERequestInvalid, "offer at most one %s<ticket> subprotocol", TicketPrefix)
		}
		ticket = t
	}
	return ticket, nil
}

// AuthenticateSocket decides which person credential an event socket follows a space for: the
// ticket's (consumed here so it never works twice, and worth nothing once its credential is
// revoked), or else the bearer credential's. The socket serves the person: an agent's credential
// is refused. The local socket and API Gateway's $connect both call it.
func AuthenticateSocket(ctx context.Context, g *gate.Gate, tickets ask.TicketStore, h http.Header, ticket string, now time.Time) (*ask.Credential, error) {
	if ticket != "" {
		return g.CheckTicket(ctx, tickets, TicketPurpose, ticket, now)
	}
	token := gate.BearerToken(h.Get("Authorization"))
	if token == "" {
		return nil, ask.Errorf(ask.EUnauthorized, "offer a ticket from POST /api/v1/events/tickets as the subprotocol %s<ticket>, or send Authorization: Bearer <token>", TicketPrefix)
	}
	return g.CheckPerson(ctx, token)
}

// sameOrigin reports whether a browser's Origin is this deployment's own. Clients that are not
// browsers send none. Without a PublicURL, no browser origin is accepted.
func (s *Server) sameOrigin(origin string) bool { return SameOrigin(s.PublicURL, origin) }

// SameOrigin reports whether a request's Origin is the deployment's own (the rule the MCP
// transport and the event socket share against DNS rebinding): no Origin at all (not a browser),
// or scheme and host of publicURL. On a loopback address, 127.0.0.1, localhost and [::1] with the
// same port are one origin, so an inbox opened at either name works.
func SameOrigin(publicURL, origin string) bool {
	if origin == "" {
		return true
	}
	want, ok := originOf(publicURL)
	if !ok {
		return false
	}
	got, ok := originOf(origin)
	return ok && (got == want || loopbackAlias(got) == loopbackAlias(want))
}

// loopbackAlias names every loopback host alike: http://localhost:8080 → http://loopback:8080.
func loopbackAlias(origin string) string {
	for _, h := range []string{"127.0.0.1", "localhost", "[::1]"} {
		if rest, ok := strings.CutPrefix(origin, "http://"+h); ok && (rest == "" || rest[0] == ':') {
			return "http://loopback" + rest
		}
	}
	return origin
}

// originOf is scheme://host[:port] of a URL, lower case, without a default port.
func originOf(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", false
	}
	host := strings.ToLower(u.Host)
	if port := u.Port(); (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		host = strings.TrimSuffix(host, ":"+port)
	}
	return u.Scheme + "://" + host, true
}

// headerTokens splits a comma-separated header, over all of its lines.
func HeaderTokens(h http.Header, key string) []string {
	var tokens []string
	for _, v := range h.Values(key) {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				tokens = append(tokens, t)
			}
		}
	}
	return tokens
}

// HeaderHasToken reports whether a comma-separated header holds token, in any case.
func HeaderHasToken(h http.Header, key, token string) bool {
	for _, t := range HeaderTokens(h, key) {
		if strings.EqualFold(t, token) {
			return true
		}
	}
	return false
}
