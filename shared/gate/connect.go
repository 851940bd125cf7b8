package gate

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// MCP OAuth's rules about credentials (issue 28): who may connect an agent's client, what
// credential the client then holds, who may see and revoke it. The protocol is shared/oauth's.

// Prefixes of the OAuth tokens: an access token opens /mcp for an hour, a refresh token gets
// the next pair, an authorization code gets the first. They start with TokenPrefix like every
// Loopback token, so secret scanners recognise them too.
const (
	AccessTokenPrefix  = TokenPrefix + "at_"
	RefreshTokenPrefix = TokenPrefix + "rt_"
	CodePrefix         = TokenPrefix + "ac_"
)

// NewSecret returns a fresh random secret (256 bits) with this prefix, and its hash.
func NewSecret(prefix string) (secret string, hash []byte) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	secret = prefix + base64.RawURLEncoding.EncodeToString(b[:])
	return secret, Hash(secret)
}

// MaxClientNameRunes bounds the name a connected agent's credential takes from its client.
const MaxClientNameRunes = 80

// Connect makes the credential a client gets when person `by` approves it: an AGENT credential
// of by's space, owned by by (its asks are raised by them), named after the client. An agent can
// ask and never answer; only a person may connect one, so a credential that is not a person's
// is refused. The credential's own token is never shown: the client reaches it only through the
// OAuth tokens issued for it, and revoking it ends those.
func Connect(ctx context.Context, store ask.CredentialStore, by *ask.Credential, clientID, clientName string, now time.Time) (*ask.Credential, error) {
	if by == nil {
		return nil, ask.Errorf(ask.EUnauthorized, "sign in to the inbox to connect an agent")
	}
	if err := by.ForPerson(); err != nil {
		return nil, err
	}
	owner := by.Person
	if owner.ID == "" {
		owner = by.Actor
	}
	name := ClientName(clientName, clientID)
	c := ask.Credential{
		Space:     by.Space,
		Role:      ask.RoleAgent,
		Actor:     ask.Actor{ID: "agent_" + ask.NewID()[:16], Name: name},
		Person:    owner,
		Client:    clientID,
		CreatedAt: now,
	}
	_, cred, err := Issue(ctx, store, c)
	return cred, err
}

// ClientName is the name a client goes by on the consent page and in its credential: the name it
// gave, trimmed and bounded, or else its id.
func ClientName(name, id string) string {
	name = strings.Join(strings.Fields(name), " ")
	if name == "" {
		name = id
	}
	if r := []rune(name); len(r) > MaxClientNameRunes {
		name = string(r[:MaxClientNameRunes-1]) + "…"
	}
	return name
}

// ConnectedAgents lists the agent credentials person `by` may see and revoke: the owner sees
// every agent of the space, a teammate their own. Persons' credentials are not listed.
func ConnectedAgents(ctx context.Context, store ask.CredentialStore, by *ask.Credential) ([]*ask.Credential, error) {
	if err := by.ForPerson(); err != nil {
		return nil, err
	}
	all, err := store.Credentials(ctx, by.Space)
	if err != nil {
		return nil, err
	}
	var out []*ask.Credential
	for _, c := range all {
		if c.Role == ask.RoleAgent && mayManage(by, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// CheckDisconnect says whether person `by` may revoke agent credential id of their space: the
// owner any agent's, a teammate only their own agents'. Any other is not found (a teammate
// learns nothing of another's agents).
func CheckDisconnect(ctx context.Context, store ask.CredentialStore, by *ask.Credential, id string) (*ask.Credential, error) {
	if err := by.ForPerson(); err != nil {
		return nil, err
	}
	c, err := store.CredentialByID(ctx, by.Space, id)
	if err != nil {
		return nil, err
	}
	if c.Role != ask.RoleAgent || !mayManage(by, c) {
		return nil, ask.Errorf(ask.ENotFound, "there is no connected agent %s", id)
	}
	return c, nil
}

func mayManage(by, agent *ask.Credential) bool {
	if by.Role == ask.RoleOwner {
		return true
	}
	me := by.Person
	if me.ID == "" {
		me = by.Actor
	}
	return agent.Person.ID == me.ID
}

// OnlyMCP refuses an OAuth access token anywhere but /mcp: the token was issued for that
// resource (its audience, RFC 8707), and Loopback's API and hooks are not it. A credential
// presented by its own token (pasted) passes.
func OnlyMCP(c *ask.Credential) error {
	if c != nil && c.Grant != nil {
		return ask.Errorf(ask.EUnauthorized, "this OAuth access token opens %s only (the resource it was issued for); use a credential made for this endpoint", "/mcp")
	}
	return nil
}

// OAuthTokens is where the gate finds OAuth access tokens (shared/oauth issues them).
type OAuthTokens interface {
	OAuthTokenByHash(ctx context.Context, hash []byte) (*ask.OAuthToken, error)
}

// checkAccessToken opens the credential an OAuth access token was issued for, with the token's
// grant (audience, scope) on it for the transport to check.
func (g *Gate) checkAccessToken(ctx context.Context, token string) (*ask.Credential, error) {
	t, err := g.OAuth.OAuthTokenByHash(ctx, Hash(token))
	switch {
	case errors.Is(err, ask.ErrNotFound) || (err == nil && t.Kind != ask.AccessToken):
		return nil, g.refuse(ctx, ask.Errorf(ask.EUnauthorized, "this token is not valid"))
	case err != nil:
		return nil, err
	}
	if ask.Expired(t.ExpiresAt, g.now()) {
		return nil, ask.Errorf(ask.EUnauthorized, "this access token has expired: refresh it")
	}
	c, err := g.Live(ctx, t.Space, t.CredentialID)
	if err != nil {
		return nil, ask.Errorf(ask.EUnauthorized, "this token was revoked")
	}
	c.Grant = &ask.Grant{Resource: t.Resource, Scope: t.Scope}
	g.touch(ctx, c)
	return c, nil
}
