// Package oauth is Loopback's own OAuth 2.1 authorization server for MCP clients, and the
// resource server's half of the MCP authorization spec (2025-11-25 and 2026-07-28): an agent's
// client is given the MCP URL alone, finds this server through RFC 9728 protected-resource
// metadata and RFC 8414 authorization-server metadata, names itself by a Client ID Metadata
// Document (or registers, RFC 7591), sends the person's browser to /oauth/authorize, and
// redeems the code for opaque tokens once a person approved in the inbox.
//
// What it issues opens an AGENT credential owned by the person who approved (gate.Connect):
// the client can ask, never answer. Tokens are opaque random strings stored as hashes, so that
// revoking the credential ends them at once (the gate reads the credential on every request).
// Why purpose-built rather than a library: docs/design/oauth.md.
//
// The endpoints are OAuth's wire formats (RFCs 6749, 7009, 7591, 8414, 8707, 9207, 9728), not
// the contract's: they answer OAuth's error objects, not Problems. The consent page's API (read
// a request, decide it) is the contract's (revision 5), served by shared/httpapi with Consent.
package oauth

import (
	"cmp"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/limit"
)

// The bounds of the authorization server (docs/limits.md).
const (
	// Scope is the one scope: call Loopback's MCP tools as an agent (ask, never answer).
	Scope = "mcp"
	// AccessTTL is how long an access token opens /mcp.
	AccessTTL = time.Hour
	// RefreshTTL is how long a refresh token may be used; each use gives a new one.
	RefreshTTL = 30 * 24 * time.Hour
	// RefreshGrace is how long a rotated refresh token still works: a client whose processes
	// refresh at once (Claude Code) gets a pair for each, not a refusal.
	RefreshGrace = time.Minute
	// RequestTTL is how long a request to connect waits for a person.
	RequestTTL = 10 * time.Minute
	// CodeTTL is how long an authorization code may be redeemed after its browser took it.
	CodeTTL = time.Minute
	// MaxRedirectURIs bounds a registration's redirect URIs.
	MaxRedirectURIs = 10
	// MaxParamBytes bounds any one parameter (state, a URI, a client's name).
	MaxParamBytes = 2048
	// MaxFormBytes bounds a token, revocation or registration request's body.
	MaxFormBytes = 16 << 10
	// MaxStartsPerMinute bounds what one client address may start a minute: registrations and
	// requests to connect, each a row kept until it expires (429 beyond), counted apart from the
	// address's other starts without a credential (gate.StartKey).
	MaxStartsPerMinute = gate.MaxStartsPerMinute
)

// Paths of the endpoints, under the deployment's public URL (the issuer).
const (
	PathResourceMetadata     = "/.well-known/oauth-protected-resource"
	PathResourceMetadataMCP  = "/.well-known/oauth-protected-resource/mcp"
	PathServerMetadata       = "/.well-known/oauth-authorization-server"
	PathAuthorize            = "/oauth/authorize"
	PathContinue             = "/oauth/continue"
	PathToken                = "/oauth/token"
	PathRegister             = "/oauth/register"
	PathRevoke               = "/oauth/revoke"
	PathConsentPage          = "/connect/" // + the request's id: the inbox's consent page
	browserCookie            = "lb_oauth"
	browserCookiePath        = "/oauth/"
	mcpPath                  = "/mcp"
	maxCachedClientDocuments = 256
)

// Config is what the authorization server needs.
type Config struct {
	Store       ask.OAuthStore
	Credentials ask.CredentialStore
	// PublicURL is the deployment's address for a request (app.App.PublicURL): the issuer, and
	// the resource /mcp is under.
	PublicURL func(*http.Request) string
	// Documents fetches Client ID Metadata Documents; nil: a Fetcher with the defaults.
	Documents *Fetcher
	Now       func() time.Time
	Logger    *slog.Logger
	// Starts counts registrations and requests to connect per client address (gate.ClientAddr);
	// nil: a window of MaxStartsPerMinute a minute in this process.
	Starts gate.Throttle
}

// Server is the authorization server.
type Server struct {
	cfg Config
}

// New makes a Server.
func New(cfg Config) *Server {
	if cfg.Documents == nil {
		cfg.Documents = &Fetcher{}
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return ask.Truncate(time.Now()) }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Starts == nil {
		cfg.Starts = &limit.Failures{Max: gate.MaxStartsPerMinute, Window: time.Minute}
	}
	return &Server{cfg: cfg}
}

// overStarts counts one registration or request to connect from r's address, and says how long
// to wait when the address is over its budget.
func (s *Server) overStarts(r *http.Request) (time.Duration, bool) {
	wait, over, err := s.cfg.Starts.Fail(r.Context(), gate.StartKey("oauth", gate.RemoteHost(r)))
	if err != nil {
		s.cfg.Logger.Warn("oauth: counting a start", "err", err)
		return 0, false
	}
	return wait, over
}

func retryAfter(w http.ResponseWriter, d time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(int((d+time.Second-1)/time.Second)))
}

// Handler serves the OAuth endpoints (and nothing else: 404 for any other path).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathResourceMetadata, s.resourceMetadata)
	mux.HandleFunc("GET "+PathResourceMetadataMCP, s.resourceMetadata)
	mux.HandleFunc("GET "+PathServerMetadata, s.serverMetadata)
	mux.HandleFunc("GET "+PathAuthorize, s.authorize)
	mux.HandleFunc("GET "+PathContinue, s.continueFlow)
	mux.HandleFunc("POST "+PathToken, s.token)
	mux.HandleFunc("POST "+PathRegister, s.register)
	mux.HandleFunc("POST "+PathRevoke, s.revoke)
	// Metadata and the token endpoints are read by browsers' JavaScript too (web clients such
	// as the MCP Inspector): CORS for them, never for the authorization endpoint.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == PathAuthorize || r.URL.Path == PathContinue {
			// Their redirects (a code for one browser, a cookie) are never kept by a cache on
			// the way, CloudFront's included.
			w.Header().Set("Cache-Control", "no-store")
		} else {
			w.Header().Set("Access-Control-Allow-Origin", "*")
			if r.Method == http.MethodOptions {
				w.Header().Set("Access-Control-Allow-Methods", "GET, POST")
				w.Header().Set("Access-Control-Allow-Headers", "Content-Type, Authorization, MCP-Protocol-Version")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		mux.ServeHTTP(w, r)
	})
}

// Paths lists the paths Handler serves, for the deployment's mux.
func Paths() []string {
	return []string{PathResourceMetadata, PathResourceMetadataMCP, PathServerMetadata, PathAuthorize, PathContinue,
		PathToken, PathRegister, PathRevoke}
}

// issuer is the deployment's public URL for r, without a trailing slash.
func (s *Server) issuer(r *http.Request) string { return strings.TrimRight(s.cfg.PublicURL(r), "/") }

// Resource is the resource identifier of /mcp at a deployment's public URL (RFC 8707).
func Resource(public string) string { return strings.TrimRight(public, "/") + mcpPath }

// ResourceMetadataURL is where the protected-resource metadata of /mcp is (RFC 9728's
// path-inserted form): what a 401's WWW-Authenticate names.
func ResourceMetadataURL(public string) string {
	return strings.TrimRight(public, "/") + PathResourceMetadataMCP
}

// canonicalResource is a resource indicator as compared: no trailing slash (Claude Code adds
// one), scheme and host in lower case, no fragment.
func canonicalResource(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Scheme == "" || u.Host == "" || u.Fragment != "" || u.User != nil {
		return "", false
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u.String(), true
}

// ourResources are the resource identifiers tokens of this deployment may be issued for: /mcp,
// and the origin (the root metadata's resource, which names the same server).
func ourResources(public string) []string {
	origin, _ := canonicalResource(public)
	mcp, _ := canonicalResource(Resource(public))
	return []string{mcp, origin}
}

// CheckAudience says whether an access token's grant opens /mcp at this public URL: issued for
// this resource (or the origin), with the mcp scope. The error is what the 401 or 403 says.
func CheckAudience(public string, g *ask.Grant) error {
	if g == nil {
		return nil // a pasted credential, not an OAuth token
	}
	got, ok := canonicalResource(g.Resource)
	if !ok || (got != ourResources(public)[0] && got != ourResources(public)[1]) {
		return ask.Errorf(ask.EUnauthorized, "this access token was issued for another resource (%s), not %s", g.Resource, Resource(public))
	}
	if !hasScope(g.Scope, Scope) {
		return ask.Errorf(ask.EForbidden, "this access token lacks the %q scope", Scope)
	}
	return nil
}

func hasScope(scopes, want string) bool {
	for _, s := range strings.Fields(scopes) {
		if s == want {
			return true
		}
	}
	return false
}

// Challenge is the WWW-Authenticate value of a refusal at /mcp (MCP authorization, RFC 6750 §3,
// RFC 9728 §5.1): every 401 names the metadata and the scope; a 403 is insufficient_scope.
func Challenge(public string, status int, message string) string {
	var b strings.Builder
	b.WriteString(`Bearer resource_metadata="` + ResourceMetadataURL(public) + `", scope="` + Scope + `"`)
	switch status {
	case http.StatusForbidden:
		b.WriteString(`, error="insufficient_scope"`)
	case http.StatusUnauthorized:
		if message != "" {
			b.WriteString(`, error="invalid_token"`)
		}
	}
	if message != "" {
		b.WriteString(`, error_description="` + quoteSafe(message) + `"`)
	}
	return b.String()
}

// quoteSafe keeps a description inside its quotes: RFC 6750 allows %x20-21 / %x23-5B / %x5D-7E.
func quoteSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return ' '
		}
		return r
	}, s)
}

// resourceMetadata: RFC 9728 protected-resource metadata, path-inserted (/mcp) and root.
func (s *Server) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	public := s.issuer(r)
	if public == "" {
		http.NotFound(w, r)
		return
	}
	resource := Resource(public)
	if r.URL.Path == PathResourceMetadata {
		resource = public
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"resource":                 resource,
		"resource_name":            "Loopback",
		"authorization_servers":    []string{public},
		"scopes_supported":         []string{Scope},
		"bearer_methods_supported": []string{"header"},
	}, "public, max-age=300")
}

// serverMetadata: RFC 8414 authorization-server metadata. No OpenID Connect discovery document:
// this server issues no ID tokens.
func (s *Server) serverMetadata(w http.ResponseWriter, r *http.Request) {
	public := s.issuer(r)
	if public == "" {
		http.NotFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                         public,
		"authorization_endpoint":                         public + PathAuthorize,
		"token_endpoint":                                 public + PathToken,
		"registration_endpoint":                          public + PathRegister,
		"revocation_endpoint":                            public + PathRevoke,
		"scopes_supported":                               []string{Scope},
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"none"},
		"revocation_endpoint_auth_methods_supported":     []string{"none"},
		"authorization_response_iss_parameter_supported": true,
		"client_id_metadata_document_supported":          true,
	}, "public, max-age=300")
}

// writeJSON writes v with a status; cache is the Cache-Control ("" is no-store).
func writeJSON(w http.ResponseWriter, status int, v any, cache string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", cmp.Or(cache, "no-store"))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// oauthError is RFC 6749 §5.2's error response.
func oauthError(w http.ResponseWriter, status int, code, description string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="loopback"`)
	}
	writeJSON(w, status, map[string]string{"error": code, "error_description": description}, "")
}
