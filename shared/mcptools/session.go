package mcptools

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/server"
)

// Session ids carry the client's name and version from initialize, so that any instance (another
// Lambda, a restarted binary) knows which client asks without keeping sessions anywhere. The name
// is what the client declared about itself; it is shown, never trusted for access.
//
//	lb1.<base64url("claude-code 2.1.0")>.<128 random bits, hex>
const sessionPrefix = "lb1."

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

// newSessionID mints a session id that carries the client.
func newSessionID(client string) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return sessionPrefix + base64.RawURLEncoding.EncodeToString([]byte(client)) + "." + hex.EncodeToString(b[:])
}

// clientFromSessionID reads the client back out of a session id.
func clientFromSessionID(id string) (string, error) {
	rest, ok := strings.CutPrefix(id, sessionPrefix)
	if !ok {
		return "", errors.New("not a Loopback session id")
	}
	enc, random, ok := strings.Cut(rest, ".")
	if !ok || len(random) != 32 {
		return "", errors.New("malformed session id")
	}
	if _, err := hex.DecodeString(random); err != nil {
		return "", errors.New("malformed session id")
	}
	client, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(client) > 200 {
		return "", errors.New("malformed session id")
	}
	return string(client), nil
}

// validSessionID reports whether id is one newSessionID could have made.
func validSessionID(id string) bool {
	_, err := clientFromSessionID(id)
	return err == nil
}

// sessionIDs is mcp-go's session id manager for one request: it mints ids carrying the client
// of an initialize, and accepts any well-formed id, so sessions work across instances.
type sessionIDs struct{ client string }

func (m sessionIDs) Generate() string { return newSessionID(m.client) }

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
	return sessionIDs{client: clientFrom(r.Context())}
}
