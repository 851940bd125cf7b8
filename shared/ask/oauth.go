package ask

import (
	"context"
	"time"
)

// MCP OAuth (issue 28): an agent's client signs in with the MCP URL alone. Loopback is both the
// OAuth 2.1 resource server of /mcp and a small authorization server of its own (shared/oauth):
// the client is sent to the inbox, a person of a space approves, and the client gets opaque
// tokens that open an agent credential owned by that person (gate.Connect). This file is what
// the stores keep for it; the protocol's rules are shared/oauth's, and who may consent and what
// credential results are the gate's (shared/gate/connect.go).

// OAuthClient is a client registered by Dynamic Client Registration (RFC 7591). Clients that
// name themselves by a Client ID Metadata Document are not stored: their document is.
type OAuthClient struct {
	ID           string
	Name         string
	RedirectURIs []string
	CreatedAt    time.Time
}

// OAuthClientIdle is how long a registered client is kept with nothing of it live: no request
// to connect and no token (SQLite's ReapOAuth), or since its registration, its last request or
// its last refresh token (DynamoDB's time to live). A client whose registration was reaped
// registers again, as MCP clients do when theirs is refused; its tokens never depended on it.
const OAuthClientIdle = 90 * 24 * time.Hour

// ConsentStatus is where a request to connect stands.
type ConsentStatus string

const (
	ConsentPending  ConsentStatus = "pending"  // waiting for a person
	ConsentApproved ConsentStatus = "approved" // a person approved; its code is not yet redeemed
	ConsentRefused  ConsentStatus = "refused"  // a person refused
	ConsentUsed     ConsentStatus = "used"     // the code was redeemed (or the refusal delivered)
)

// AuthRequest is one authorization request (the authorization code flow) from the moment the
// client sends the browser to /oauth/authorize until its code is redeemed.
type AuthRequest struct {
	ID string
	// The client as the consent page names it: its id (a metadata document's URL, or a
	// registered id), its name, and the host of its metadata document ("" for a registered,
	// unverified client).
	ClientID   string
	ClientName string
	ClientHost string

	RedirectURI   string
	State         string
	CodeChallenge string // PKCE S256
	Resource      string // RFC 8707, canonical (no trailing slash)
	Scope         string

	// BrowserHash is the hash of the secret the starting browser holds (a cookie): only that
	// browser receives the code, wherever the person approved.
	BrowserHash []byte
	// MatchCode is shown by the starting browser and by the consent page: the person approves
	// only a request whose code they see on the device they started from.
	MatchCode string

	CreatedAt time.Time
	ExpiresAt time.Time // until then a person may decide, and the code be redeemed

	Status ConsentStatus
	// Set when a person decides: whose space, the agent credential it made, who decided.
	Space        string
	CredentialID string
	DecidedBy    Actor
	DecidedAt    *time.Time

	// CodeHash is the authorization code's hash once the starting browser took it.
	CodeHash []byte

	Version int
}

// OAuthTokenKind tells an access token from a refresh token.
type OAuthTokenKind string

const (
	AccessToken  OAuthTokenKind = "access"
	RefreshToken OAuthTokenKind = "refresh"
)

// OAuthToken is an opaque token the authorization server issued; only its hash is stored. It
// opens the agent credential CredentialID of Space, and nothing once that is revoked.
type OAuthToken struct {
	Hash         []byte
	Kind         OAuthTokenKind
	Space        string
	CredentialID string
	ClientID     string
	Resource     string
	Scope        string
	CreatedAt    time.Time
	ExpiresAt    time.Time
	// RotatedAt is when a refresh token was exchanged for a new one: it still works for a short
	// grace after (several processes of one client refresh at once), never again after that.
	RotatedAt *time.Time
}

// OAuthStore keeps the authorization server's state. SQLite keeps it in tables (migration 015);
// on DynamoDB it is items with a TTL (docs/design/oauth.md).
type OAuthStore interface {
	// CreateOAuthClient stores a registered client.
	CreateOAuthClient(ctx context.Context, c *OAuthClient) error
	// OAuthClientByID returns a registered client, or ErrNotFound.
	OAuthClientByID(ctx context.Context, id string) (*OAuthClient, error)

	// CreateAuthRequest stores a new request to connect (Version 1).
	CreateAuthRequest(ctx context.Context, r *AuthRequest) error
	// AuthRequestByID returns a request, or ErrNotFound.
	AuthRequestByID(ctx context.Context, id string) (*AuthRequest, error)
	// ChangeAuthRequest reads a request, applies fn and writes the result with no other writer
	// between (as ChangeAsk): a decision, the code's issue and its redemption each happen once.
	// fn's error comes back as it is and nothing is written; ErrNotFound when there is none.
	ChangeAuthRequest(ctx context.Context, id string, fn func(*AuthRequest) error) (*AuthRequest, error)
	// AuthRequestByCode returns the request whose code has this hash, or ErrNotFound.
	AuthRequestByCode(ctx context.Context, codeHash []byte) (*AuthRequest, error)

	// CreateOAuthToken stores a token.
	CreateOAuthToken(ctx context.Context, t *OAuthToken) error
	// OAuthTokenByHash returns a token, expired or not, or ErrNotFound.
	OAuthTokenByHash(ctx context.Context, hash []byte) (*OAuthToken, error)
	// RotateRefreshToken marks a refresh token rotated at `at` unless it was already, and
	// returns it as it was before (RotatedAt nil: this call rotated it), or ErrNotFound.
	RotateRefreshToken(ctx context.Context, hash []byte, at time.Time) (*OAuthToken, error)
	// DeleteOAuthToken deletes one token; an unknown hash is not an error.
	DeleteOAuthToken(ctx context.Context, hash []byte) error
	// DeleteOAuthTokens deletes every token of a credential of kind (a refresh token family
	// replayed after its grace; a revoked credential's).
	DeleteOAuthTokens(ctx context.Context, space, credentialID string, kind OAuthTokenKind) error
	// ReapOAuth deletes what expired before now: requests, tokens, and registered clients idle
	// for OAuthClientIdle. (DynamoDB's TTL does it there.)
	ReapOAuth(ctx context.Context, now time.Time) error
}
