package ask

import (
	"context"
	"errors"
	"time"
)

// Signing a person in without a pasted token (issue 28 item 4): a phone pairs with a code a
// signed-in laptop shows, and a teammate joins with an invite link the owner made. Both are a
// Pass: a one-time code, stored only as its hash, that mints ONE new person credential when it
// is redeemed (gate.Passes; the rules are there). This file is what the stores keep.

// PassKind tells a pairing code from an invite.
type PassKind string

const (
	// PassPairing is a short code (5 minutes) a signed-in person makes for another device of
	// theirs: it mints a credential for the same person, role and space.
	PassPairing PassKind = "pairing"
	// PassInvite is a link (7 days) the space's owner makes for a teammate: it mints a teammate's
	// (RolePerson) credential for a new person of the space.
	PassInvite PassKind = "invite"
)

// Pass is one pairing code or invite.
type Pass struct {
	ID       string
	Kind     PassKind
	Space    string
	CodeHash []byte // SHA-256 of the code; the code itself is shown once and never stored

	// By is who made it, with the credential they made it with: a pass is worth no more than
	// that credential (revoked, the pass opens nothing).
	By           Actor
	ByCredential string

	// What the minted credential is: its role, who holds it and whom it belongs to.
	Role   Role
	Actor  Actor
	Person Actor
	Email  string // an invite's optional address (shown to the owner; nothing is sent)

	CreatedAt time.Time
	ExpiresAt time.Time

	// Set once, atomically, when the pass is redeemed: when, by what device (as the device
	// named itself), and the credential it minted.
	UsedAt       *time.Time
	Device       string
	CredentialID string

	// RevokedAt is set when its maker took it back before it was used.
	RevokedAt *time.Time
}

// Why a pass can no longer be redeemed (UsePass, RevokePass). A pass that does not exist is
// ErrNotFound.
var (
	ErrPassUsed    = errors.New("ask: pass used")
	ErrPassExpired = errors.New("ask: pass expired")
	ErrPassRevoked = errors.New("ask: pass revoked")
)

// PassState is the rule every store applies before it marks a pass used: nil when p may be
// redeemed at now, else the sentinel saying why not (revoked, then used, then expired).
func PassState(p *Pass, now time.Time) error {
	switch {
	case p.RevokedAt != nil:
		return ErrPassRevoked
	case p.UsedAt != nil:
		return ErrPassUsed
	case Expired(p.ExpiresAt, now):
		return ErrPassExpired
	}
	return nil
}

// PassGrace is how long after its expiry a pass stays listed (the inbox shows an invite as
// expired for a day) before DynamoDB's TTL or SQLite's reap deletes it.
const PassGrace = 24 * time.Hour

// PassStore keeps pairing codes and invites. SQLite keeps them in a table (migration 017);
// DynamoDB as an item per pass and one per code hash, with a TTL.
type PassStore interface {
	// CreatePass stores a new pass; an id or code hash already stored is refused with an error
	// wrapping ErrAlreadyStored.
	CreatePass(ctx context.Context, p *Pass) error
	// PassByID returns a pass of a space, in any state, or ErrNotFound.
	PassByID(ctx context.Context, space, id string) (*Pass, error)
	// PassByCode returns the pass of this kind whose code has this hash, in any state, or
	// ErrNotFound.
	PassByCode(ctx context.Context, kind PassKind, codeHash []byte) (*Pass, error)
	// Passes lists a space's passes of a kind, oldest first, in any state (until reaped).
	Passes(ctx context.Context, space string, kind PassKind) ([]*Pass, error)
	// UsePass marks the pass of this kind whose code has this hash used at `at` by device,
	// recording the credential it mints, if PassState allows it at `at`; of two racing callers
	// exactly one succeeds. It returns the pass as written, or ErrNotFound, ErrPassRevoked,
	// ErrPassUsed, ErrPassExpired.
	UsePass(ctx context.Context, kind PassKind, codeHash []byte, at time.Time, device, credentialID string) (*Pass, error)
	// RevokePass marks a pass revoked at `at` unless it was used already (ErrPassUsed); revoking
	// one revoked already changes nothing. ErrNotFound when the space holds no such pass.
	RevokePass(ctx context.Context, space, id string, at time.Time) error
	// ReapPasses deletes the passes that expired before `before`. (DynamoDB's TTL does it there.)
	ReapPasses(ctx context.Context, before time.Time) error
}
