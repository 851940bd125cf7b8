package ask

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Single sign-on (issue 28 item 4): a person signs in to the inbox through the team's OpenID
// Connect provider (shared/sso). This file is what the stores keep for it: the sign-ins under way
// at the provider, and which identity at the provider is which person of the space. The
// protocol's rules are shared/sso's; the credential a sign-in ends with is the gate's (gate.Issue).

// SSOLogin is one sign-in under way at the provider, from /auth/oidc/start until its callback.
type SSOLogin struct {
	// StateHash is the SHA-256 of the OAuth `state` the browser carries (and holds in a cookie);
	// the state itself is not stored.
	StateHash []byte
	// Nonce is the OpenID Connect nonce the ID token must carry.
	Nonce string
	// Verifier is the PKCE code verifier (S256) the code is redeemed with.
	Verifier  string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// SSOLink says that an identity at the provider (its issuer and subject) is a person of a space.
type SSOLink struct {
	ID      string
	Space   string
	Issuer  string
	Subject string
	// Email is the verified address the identity first signed in with ("" if none).
	Email string
	// Person is the person of the space the identity signs in as; Role is the role of the
	// credentials its sign-ins get (RoleOwner or RolePerson).
	Person       Actor
	Role         Role
	CreatedAt    time.Time
	LastSignInAt *time.Time
}

// SSOLinkID is the id of the link of an identity (issuer and subject): one identity has one id,
// so both stores find a link by its identity with a read by id.
func SSOLinkID(issuer, subject string) string {
	h := sha256.Sum256([]byte(issuer + "\x00" + subject))
	return "sso_" + hex.EncodeToString(h[:10])
}

// SSOLoginTTL is how long a sign-in may stay at the provider.
const SSOLoginTTL = 10 * time.Minute

// SSOStore keeps single sign-on's state. SQLite keeps it in tables (migration 018); DynamoDB in
// the one table, with TTLs (docs/design/dynamodb.md).
type SSOStore interface {
	// CreateSSOLogin stores a sign-in under way; a state hash already stored is ErrAlreadyStored.
	CreateSSOLogin(ctx context.Context, l *SSOLogin) error
	// TakeSSOLogin removes and returns the sign-in with this state hash, in one atomic step: of
	// two callbacks with one state, one gets it. ErrNotFound when there is none, or it expired.
	TakeSSOLogin(ctx context.Context, stateHash []byte, now time.Time) (*SSOLogin, error)

	// CreateSSOLink links an identity; l.ID is SSOLinkID(l.Issuer, l.Subject). One the space
	// links already is ErrAlreadyStored.
	CreateSSOLink(ctx context.Context, l *SSOLink) error
	// SSOLinkBySubject returns the space's link of this identity, or ErrNotFound.
	SSOLinkBySubject(ctx context.Context, space, issuer, subject string) (*SSOLink, error)
	// SSOLinks lists a space's links, oldest first.
	SSOLinks(ctx context.Context, space string) ([]*SSOLink, error)
	// TouchSSOLink records a sign-in through the link; ErrNotFound when it is gone.
	TouchSSOLink(ctx context.Context, space, id string, at time.Time) error
	// DeleteSSOLink unlinks; ErrNotFound when the space has no such link.
	DeleteSSOLink(ctx context.Context, space, id string) error
	// ReapSSO deletes sign-ins past their expiry (DynamoDB's TTL does it there).
	ReapSSO(ctx context.Context, now time.Time) error
}
