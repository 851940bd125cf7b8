package mcptools

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/server"

	"github.com/loopback-hq/loopback/shared/gate"
)

// Session ids carry the client's name and version from initialize, so that any instance (another
// Lambda, a restarted binary) knows which client asks without keeping sessions anywhere. The name
// is what the client declared about itself; it is shown, never trusted for access.
//
// A session id is also bound to the credential that began it: it carries a digest of the
// credential's id, and a request whose credential is another is refused (checkSessionOwner) as
// a session this server does not know, 404, so that an agent that learned another's session id
// cannot cancel or answer for that session's calls. Nothing needs to be kept or signed: a forged
// id bound to the forger's own credential names a different session.
//
//	lb2.<base64url("claude-code 2.1.0")>.<16 hex of SHA-256 of the credential id>.<128 random bits, hex>
const sessionPrefix = "lb2."

type clientKey struct{}

// withClient records the client's name and version in a request's context.
func withClient(ctx context.Context, client string) context.Context {
	return context.WithValue(ctx, clientKey{}, client)
}

// clientFrom returns the client's name and version, or "".
func clientFrom(ctx context.Context) string {
	c, _ := ctx.Value(clientKey{}).(string)
	return c
}

// sessionBinding is what a session id carries of its credential.
func sessionBinding(credentialID string) string {
	h := sha256.Sum256([]byte("loopback mcp session\x00" + credentialID))
	return hex.EncodeToString(h[:8])
}

// newSessionID mints a session id that carries the client and is bound to a credential.
func newSessionID(client, credentialID string) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return sessionPrefix + base64.RawURLEncoding.EncodeToString([]byte(client)) + "." + sessionBinding(credentialID) + "." + hex.EncodeToString(b[:])
}

// parseSessionID reads the client and the credential binding back out of a session id.
func parseSessionID(id string) (client, binding string, err error) {
	rest, ok := strings.CutPrefix(id, sessionPrefix)
	if !ok {
		return "", "", errors.New("not a Loopback session id")
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 || len(parts[1]) != 16 || len(parts[2]) != 32 {
		return "", "", errors.New("malformed session id")
	}
	for _, h := range parts[1:] {
		if _, err := hex.DecodeString(h); err != nil {
			return "", "", errors.New("malformed session id")
		}
	}
	c, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil || len(c) > 200 {
		return "", "", errors.New("malformed session id")
	}
	return string(c), parts[1], nil
}

// clientFromSessionID reads the client back out of a session id.
func clientFromSessionID(id string) (string, error) {
	c, _, err := parseSessionID(id)
	return c, err
}

// validSessionID reports whether id is one newSessionID could have made.
func validSessionID(id string) bool {
	_, err := clientFromSessionID(id)
	return err == nil
}

// sessionOwnedBy reports whether a well-formed session id was begun with this credential.
func sessionOwnedBy(id, credentialID string) bool {
	_, binding, err := parseSessionID(id)
	return err == nil && subtle.ConstantTimeCompare([]byte(binding), []byte(sessionBinding(credentialID))) == 1
}

// sessionIDs is mcp-go's session id manager for one request: it mints ids carrying the client
// of an initialize and bound to its credential, and accepts any well-formed id, so sessions work
// across instances.
type sessionIDs struct{ client, credential string }

func (m sessionIDs) Generate() string { return newSessionID(m.client, m.credential) }

// Validate accepts any well-formed id: that it belongs to the request's credential is checked
// before mcp-go sees the request (Handler.serve), with a Problem of its own.
func (m sessionIDs) Validate(id string) (bool, error) {
	_, err := clientFromSessionID(id)
	return false, err
}

func (m sessionIDs) Terminate(string) (bool, error) { return false, nil }

// sessionResolver hands mcp-go a manager that knows the client of the request at hand.
type sessionResolver struct{}

func (sessionResolver) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	if r == nil {
		return sessionIDs{}
	}
	m := sessionIDs{client: clientFrom(r.Context())}
	if c := gate.CredentialFrom(r.Context()); c != nil {
		m.credential = c.ID
	}
	return m
}
