package ask

import (
	"context"
	"encoding/json"
	"time"
)

// Store keeps asks. Adapters: sqlite (local) and dynamo (DynamoDB, on AWS). Every adapter passes the
// conformance suite in ask/asktest, so the rules hold the same way wherever Loopback runs.
type Store interface {
	// CreateAsk stores a new ask and sets a.Version to 1. An id already stored in the space is
	// refused with an error wrapping ErrAlreadyStored.
	CreateAsk(ctx context.Context, a *Ask) error

	// FindAsk returns the ask with this id in this space, or ErrNotFound: a fact for the Service
	// to word (AskNotFound), not a message. An ask of another space is not found: ids never open
	// across spaces.
	FindAsk(ctx context.Context, space, id string) (*Ask, error)

	// UpdateAsk writes a changed ask if and only if the stored version is still a.Version, and then
	// increments a.Version. Otherwise it returns ErrVersionConflict (ErrNotFound when no such ask
	// is stored) and writes nothing. When the change closes the ask, the store may move a.ClosedAt
	// (and a.UpdatedAt with it) forward by microseconds so that no two asks of a space share a
	// close time; history pages rely on that.
	UpdateAsk(ctx context.Context, a *Ask) error

	// OpenAsks returns every open ask of a space, newest first.
	OpenAsks(ctx context.Context, space string) ([]*Ask, error)

	// ClosedAsks returns up to limit closed asks of a space that closed strictly before `before`,
	// most recently closed first.
	ClosedAsks(ctx context.Context, space string, before time.Time, limit int) ([]*Ask, error)

	// ClosedAsksBy returns up to limit asks of a space raised with the credential credentialID
	// that closed at or after since, most recently closed first, however many other asks of the
	// space closed meanwhile: both stores keep an index by credential and close time for it.
	ClosedAsksBy(ctx context.Context, space, credentialID string, since time.Time, limit int) ([]*Ask, error)
}

// TxStore is a Store that reads, changes and writes an ask in one transaction, so that no other
// writer can come between the read and the write (there is no conflict to retry) and the read
// costs the writer nothing it does not touch anyway. The Service still holds every rule: fn is
// the change, and must not block or call the store. ChangeAsk returns fn's error as it is,
// writing nothing, with the ask as read; ErrNotFound for an ask not stored. Otherwise it returns
// the ask as written (a.Version moved on) and the contract JSON it stored: Ask.MarshalJSON's
// output for the ask as written, byte for byte what json.Marshal(a) gives.
type TxStore interface {
	ChangeAsk(ctx context.Context, space, id string, fn func(*Ask) error) (*Ask, json.RawMessage, error)
}

// Role says what a credential is for. A person decides: only person credentials (owner and
// person) may read the inbox's API and reply; an agent credential opens /mcp and nothing else.
type Role string

const (
	// RoleOwner is the person who set the space up (the local binary's inbox link, or the AWS
	// bootstrap's first credential). There is one live owner credential per space; rotating it
	// retires the old one.
	RoleOwner Role = "owner"
	// RolePerson is a teammate: a person who shares the space and answers like the owner.
	RolePerson Role = "person"
	// RoleAgent is a credential a person hands to an agent; its asks are raised by that person,
	// and it can never answer them.
	RoleAgent Role = "agent"
)

// IsPerson reports whether the role is a person's (owner or teammate), who may answer.
func (r Role) IsPerson() bool { return r == RoleOwner || r == RolePerson }

// ForPerson refuses a credential that is not a person's: the inbox's API and the event socket
// serve the person, and an agent reading or answering there would decide in the person's place.
func (c *Credential) ForPerson() error {
	if c.Role.IsPerson() {
		return nil
	}
	return Errorf(EForbidden, "this is an agent's credential (%s): it may only call Loopback's MCP tools at /mcp; reading the inbox and replying take a person's credential", c.ID)
}

// Live reports whether the credential still opens its space at now.
func (c *Credential) Live() bool { return c.RevokedAt == nil }

// LastUsedEvery is how stale a credential's LastUsedAt may get: the gate writes it at most this
// often per credential, so a busy agent costs one write a minute, not one per request.
const LastUsedEvery = time.Minute

// Credential is a bearer credential: it opens exactly one space and names who holds it. Only a
// hash of its token is ever stored.
type Credential struct {
	ID        string
	Space     string
	TokenHash []byte
	Role      Role
	// Actor is who holds the credential: the person, or the agent they authorised.
	Actor Actor
	// Person is whom the credential belongs to; for an owner it is Actor itself. It becomes
	// raisedBy on the asks an agent raises with it.
	Person    Actor
	CreatedAt time.Time
	RevokedAt *time.Time
	// LastUsedAt is when the gate last let the credential in, to within LastUsedEvery; nil if never.
	LastUsedAt *time.Time
}

// CredentialStore keeps credentials.
type CredentialStore interface {
	// CreateCredential stores a new credential; a token hash already stored is refused with an
	// error wrapping ErrAlreadyStored.
	CreateCredential(ctx context.Context, c *Credential) error
	// CredentialByTokenHash returns the credential with this token hash, revoked or not, or
	// UnknownToken (EUnauthorized).
	CredentialByTokenHash(ctx context.Context, hash []byte) (*Credential, error)
	// Credentials lists a space's credentials, oldest first.
	Credentials(ctx context.Context, space string) ([]*Credential, error)
	// CredentialByID returns a credential of a space by its id, revoked or not, or an *Error with
	// ENotFound. What a credential opened (a socket, a wait) is checked against it by id.
	CredentialByID(ctx context.Context, space, id string) (*Credential, error)
	// RevokeCredential marks a credential revoked; an unknown id is an *Error with ENotFound.
	RevokeCredential(ctx context.Context, space, id string, at time.Time) error
	// TouchCredential records that a credential was used at `at`. An unknown id is not an error.
	TouchCredential(ctx context.Context, space, id string, at time.Time) error
}

// Ticket is a one-time pass, such as onto the event socket. Only a hash of it is stored.
type Ticket struct {
	Hash    []byte
	Purpose string
	Space   string
	Actor   Actor
	// CredentialID is the credential the ticket was issued to: a ticket is worth no more than
	// it, so once that credential is revoked the ticket opens nothing.
	CredentialID string
	ExpiresAt    time.Time
}

// TicketStore keeps one-time tickets.
type TicketStore interface {
	CreateTicket(ctx context.Context, t *Ticket) error
	// ConsumeTicket removes and returns the ticket with this hash and purpose if now is before its
	// ExpiresAt (CheckTicket). A ticket is consumed at most once even when two callers race; a
	// missing or used ticket is TicketNotValid, an expired one TicketExpired (both EUnauthorized).
	ConsumeTicket(ctx context.Context, purpose string, hash []byte, now time.Time) (*Ticket, error)
}
