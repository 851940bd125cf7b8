package httpapi

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// Tickets: one-time passes onto the event socket, for a client that cannot send headers on a
// WebSocket (a browser). See docs/design/events.md.

// TicketPurpose is what event tickets are stored for; TicketTTL is how long one lasts.
const (
	TicketPurpose = "events"
	TicketTTL     = time.Minute
)

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
	c := gate.CredentialFrom(r.Context())
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

// SocketOffer reads what a socket's handshake offers to authenticate with: a ticket, as the
// subprotocol TicketPrefix+<ticket> (a browser, which cannot send headers), or else a bearer
// token. It refuses a handshake that offers two tickets, or neither a ticket nor a token. The
// local socket and API Gateway's $connect read the handshake alike, then let the gate decide
// (gate.CheckSocket).
func SocketOffer(h http.Header) (ticket, token string, err error) {
	for _, p := range HeaderTokens(h, "Sec-WebSocket-Protocol") {
		t, ok := strings.CutPrefix(p, TicketPrefix)
		if !ok {
			continue
		}
		if ticket != "" {
			return "", "", ask.Errorf(ask.ERequestInvalid, "offer at most one %s<ticket> subprotocol", TicketPrefix)
		}
		ticket = t
	}
	if ticket != "" {
		return ticket, "", nil
	}
	token = gate.BearerToken(h.Get("Authorization"))
	if token == "" {
		return "", "", ask.Errorf(ask.EUnauthorized, "offer a ticket from POST /api/v1/events/tickets as the subprotocol %s<ticket>, or send Authorization: Bearer <token>", TicketPrefix)
	}
	return "", token, nil
}
