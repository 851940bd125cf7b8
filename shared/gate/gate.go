// Package gate decides who a request is: bearer credentials, each opening exactly one space.
// Tokens are random (256 bits), shown once, and stored only as SHA-256 hashes; a fast hash is
// right here because the tokens are long random strings, not passwords.
package gate

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"strings"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// TokenPrefix marks Loopback tokens, so that secret scanners and people can recognise one.
const TokenPrefix = "lb_"

// NewToken returns a fresh random token and its hash.
func NewToken() (token string, hash []byte) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	token = TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return token, Hash(token)
}

// Hash is how a token is stored and looked up.
func Hash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// Gate checks bearer credentials against a credential store.
type Gate struct {
	Credentials ask.CredentialStore

	// Now is the clock for last-used times; nil is time.Now.
	Now func() time.Time

	// Throttle counts failed sign-ins per client address (ClientAddr of the context); nil
	// counts none. See refuse.
	Throttle Throttle
	// Starts counts what a client with no credential starts that the store keeps until it expires
	// (a passkey sign-in's challenge, a single sign-on's state, MCP OAuth's registrations and
	// requests to connect), per client address; nil counts none. See CountStart.
	Starts Throttle

	// OAuth finds the access tokens of MCP OAuth (connect.go); nil where none are issued.
	OAuth OAuthTokens
}

func (g *Gate) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return ask.Truncate(time.Now())
}

// BearerToken extracts the token from an Authorization header value, or "" if there is none.
func BearerToken(header string) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// Check returns the live credential a token belongs to, or an *ask.Error with EUnauthorized.
func (g *Gate) Check(ctx context.Context, token string) (*ask.Credential, error) {
	if token == "" {
		return nil, ask.Errorf(ask.EUnauthorized, "send your Loopback token as Authorization: Bearer <token>")
	}
	if g.OAuth != nil && strings.HasPrefix(token, AccessTokenPrefix) {
		return g.checkAccessToken(ctx, token)
	}
	// The credential is looked up before any throttle: a live one opens its space from any
	// address; only a presented credential that opens nothing counts as a failed sign-in.
	hash := Hash(token)
	c, err := g.Credentials.CredentialByTokenHash(ctx, hash)
	if err != nil {
		if ask.ErrorCode(err) == ask.EUnauthorized {
			return nil, g.refuse(ctx, ask.Errorf(ask.EUnauthorized, "this token is not valid"))
		}
		return nil, err
	}
	// The lookup was by hash; compare in constant time anyway so a store that matched loosely
	// can never open a space.
	if subtle.ConstantTimeCompare(c.TokenHash, hash) != 1 {
		return nil, g.refuse(ctx, ask.Errorf(ask.EUnauthorized, "this token is not valid"))
	}
	if c.RevokedAt != nil {
		// Not counted as a failed sign-in: a revoked token was issued, not guessed (a device
		// that still holds one keeps asking), and it opens nothing.
		return nil, ask.Errorf(ask.EUnauthorized, "this token was revoked")
	}
	g.touch(ctx, c)
	return c, nil
}

// CheckPerson is Check for what serves the person (the inbox's API, the event socket): a live
// agent credential is refused with EForbidden.
func (g *Gate) CheckPerson(ctx context.Context, token string) (*ask.Credential, error) {
	c, err := g.Check(ctx, token)
	if err != nil {
		return nil, err
	}
	if err := c.ForPerson(); err != nil {
		return nil, err
	}
	return c, nil
}

// touch records that c was used, at most once per ask.LastUsedEvery: `loopback token list` shows
// it, so an unused credential can be found and revoked. A failure to record it refuses nothing.
func (g *Gate) touch(ctx context.Context, c *ask.Credential) {
	now := g.now()
	if c.LastUsedAt != nil && now.Sub(*c.LastUsedAt) < ask.LastUsedEvery {
		return
	}
	if err := g.Credentials.TouchCredential(ctx, c.Space, c.ID, now); err == nil {
		c.LastUsedAt = &now
	}
}

// Live returns the credential with this id if it still opens its space: what a credential opened
// earlier (a ticket, a socket, a wait) is worth no more than the credential itself. A revoked or
// unknown credential is an *ask.Error with EUnauthorized.
func (g *Gate) Live(ctx context.Context, space, id string) (*ask.Credential, error) {
	if id == "" {
		return nil, ask.Errorf(ask.EUnauthorized, "this pass names no credential")
	}
	c, err := g.Credentials.CredentialByID(ctx, space, id)
	if ask.ErrorCode(err) == ask.ENotFound {
		return nil, ask.Errorf(ask.EUnauthorized, "the credential this was issued to no longer exists")
	} else if err != nil {
		return nil, err
	}
	if !c.Live() {
		return nil, ask.Errorf(ask.EUnauthorized, "the credential this was issued to was revoked")
	}
	return c, nil
}

// CheckTicket consumes a one-time ticket of this purpose and returns the person credential it was
// issued to, if that is still live: a ticket issued before a revocation opens nothing after it.
func (g *Gate) CheckTicket(ctx context.Context, tickets ask.TicketStore, purpose, ticket string, now time.Time) (*ask.Credential, error) {
	if tickets == nil {
		return nil, ask.Errorf(ask.EUnauthorized, "this deployment issues no tickets")
	}
	t, err := tickets.ConsumeTicket(ctx, purpose, Hash(ticket), now)
	if err != nil {
		return nil, err
	}
	c, err := g.Live(ctx, t.Space, t.CredentialID)
	if err != nil {
		return nil, err
	}
	if err := c.ForPerson(); err != nil {
		return nil, err
	}
	return c, nil
}

// Issue creates a credential for an actor of a space and returns its token, which is never
// stored and cannot be shown again.
func Issue(ctx context.Context, store ask.CredentialStore, c ask.Credential) (string, *ask.Credential, error) {
	token, hash := NewToken()
	prepare(&c, hash)
	if err := store.CreateCredential(ctx, &c); err != nil {
		return "", nil, err
	}
	return token, &c, nil
}

// Adopt makes a token the caller chose (LOOPBACK_TOKEN) a credential, unless it already is one.
func Adopt(ctx context.Context, store ask.CredentialStore, token string, c ask.Credential) (*ask.Credential, error) {
	existing, err := store.CredentialByTokenHash(ctx, Hash(token))
	if err == nil {
		return existing, nil
	}
	if ask.ErrorCode(err) != ask.EUnauthorized {
		return nil, err
	}
	prepare(&c, Hash(token))
	return &c, store.CreateCredential(ctx, &c)
}

// prepare fills in what every new credential needs: its hash, an id and when it was made.
func prepare(c *ask.Credential, hash []byte) {
	c.TokenHash = hash
	if c.ID == "" {
		c.ID = "cred_" + ask.NewID()[:16]
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = ask.Truncate(time.Now())
	}
}
