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

	// ChangeAsk is the one way an ask changes: it reads the ask, applies fn and writes the
	// result so that no other writer comes between the read and the write. Each store does that
	// its own way (SQLite in one write transaction; DynamoDB with a conditional write, reading
	// again and calling fn again when another writer got there first). The Service holds every
	// rule: fn is the change, and must not block or call the store; it may be called more than
	// once, each time on a fresh read.
	//
	// An error from fn comes back as it is, with the ask as read, and nothing is written.
	// ErrNotFound: the space holds no such ask (fn is not called). ErrVersionConflict: the ask
	// kept changing under the store for longer than it tries. Otherwise ChangeAsk returns the
	// ask as written (a.Version moved on by one) and the contract JSON it stored: byte for byte
	// json.Marshal of the returned ask. When the change closes the ask, the store may move
	// a.ClosedAt (and a.UpdatedAt with it) forward by microseconds so that no two asks of a
	// space share a close time; history pages rely on that.
	ChangeAsk(ctx context.Context, space, id string, fn func(*Ask) error) (*Ask, json.RawMessage, error)

	// AskWaiting reports the stored ask's waiting flag without reading it whole, or ErrNotFound.
	// Settling after a wait ends asks only that, and the reply that closed the ask has usually
	// cleared the flag already (a closed ask has no one waiting): the answer is then "nothing to
	// do", for one small read instead of decoding the ask.
	AskWaiting(ctx context.Context, space, id string) (bool, error)

	// OpenAsks returns every open ask of a space, newest first, decoded: for the domain to decide
	// on fields the contract JSON does not all carry (list_open_asks and the search for an open
	// approval filter by the credential that raised each ask; SettleWaiting reads the waiting
	// flag). A snapshot takes OpenAsksWire instead.
	OpenAsks(ctx context.Context, space string) ([]*Ask, error)

	// ClosedAsksBy returns up to limit asks of a space raised with the credential credentialID
	// that closed at or after since, most recently closed first, however many other asks of the
	// space closed meanwhile: both stores keep an index by credential and close time for it.
	ClosedAsksBy(ctx context.Context, space, credentialID string, since time.Time, limit int) ([]*Ask, error)

	// OpenAsksWire (every open ask of a space, newest first) and ClosedAsksWire (up to limit
	// closed asks of a space that closed strictly before `before`, most recently closed first)
	// hand over the asks' contract JSON as the store keeps it (its rows hold that JSON), without
	// decoding them, so that a snapshot or a history page is spliced rather than decoded and
	// encoded again. A row the store cannot hand over as it is (written by another revision) it
	// decodes and encodes again itself.
	OpenAsksWire(ctx context.Context, space string) ([]WireAsk, error)
	ClosedAsksWire(ctx context.Context, space string, before time.Time, limit int) ([]WireAsk, error)

	// OpenUsage counts a space's open asks, and those raised with credentialID, from what the
	// store keeps beside them (SQLite from its rows, DynamoDB from the space's open markers): the
	// open-ask budgets (Bounds) are checked against it.
	OpenUsage(ctx context.Context, space, credentialID string) (OpenUsage, error)

	// DueAsks returns up to limit asks of any space that are due (Ask.DueAt) at or before until,
	// soonest first: both stores keep every open ask's due time beside it, written with the ask
	// on every change, in an index (SQLite: a column and index; DynamoDB: a sparse index). The
	// deadline clock reads it (Service.SweepDue, NextDue).
	DueAsks(ctx context.Context, until time.Time, limit int) ([]DueAsk, error)

	// SearchAsks finds a space's asks, open and closed (revision 6, search.go): those whose
	// title or text has, for each of q.Terms, a word it begins (case folded), that pass q's
	// filters, newest first by creation time then id descending, after q.After, at most q.Limit.
	// Next is set when there may be more. A row's Text is the ask's SearchDoc text when q has
	// terms. Both stores keep what it reads in step with every write of the ask: SQLite an FTS5
	// index, DynamoDB an item of words per ask under the space's partition (docs/design/search.md).
	SearchAsks(ctx context.Context, space string, q SearchQuery) (SearchResult, error)
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
	// Client is the OAuth client an agent credential was made for, when a person connected it
	// through the consent page (its client_id: a metadata document's URL or a registered id);
	// "" for a credential made any other way.
	Client string
	// Grant is set by the gate, never stored, when the credential was opened by an OAuth access
	// token: what that token was issued for (its audience and scope).
	Grant *Grant
}

// Grant is what an OAuth access token was issued for: the transport that serves the resource
// checks the audience and the scope against its own.
type Grant struct {
	Resource string
	Scope    string
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
