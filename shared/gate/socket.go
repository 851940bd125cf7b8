package gate

import (
	"context"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// SocketAuth is what a socket's handshake offers the gate: a one-time ticket (a browser, which
// cannot send headers on a WebSocket) or else a bearer token, as httpapi.SocketOffer reads them.
type SocketAuth struct {
	Tickets ask.TicketStore // where the tickets are kept; nil, none are issued
	Purpose string          // what the tickets were issued for
	Ticket  string          // the ticket offered, or ""
	Token   string          // the bearer token, when no ticket is offered
	Now     time.Time       // the tickets' clock
}

// CheckSocket decides which person credential a socket follows a space for: the ticket's
// (consumed here so it never works twice, and worth nothing once its credential is revoked), or
// else the bearer token's. A socket serves the person: an agent's credential is refused. The
// local event socket and API Gateway's $connect both let sockets in through it.
func (g *Gate) CheckSocket(ctx context.Context, a SocketAuth) (*ask.Credential, error) {
	if a.Ticket != "" {
		return g.CheckTicket(ctx, a.Tickets, a.Purpose, a.Ticket, a.Now)
	}
	return g.CheckPerson(ctx, a.Token)
}

type credentialKey struct{}

// CredentialFrom returns the credential the gate let in (WithCredential), or nil.
func CredentialFrom(ctx context.Context) *ask.Credential {
	c, _ := ctx.Value(credentialKey{}).(*ask.Credential)
	return c
}

// WithCredential hands the credential the gate let in to what serves the request: the API's
// handlers, and the transports behind the same gate, such as MCP.
func WithCredential(ctx context.Context, c *ask.Credential) context.Context {
	return context.WithValue(ctx, credentialKey{}, c)
}
