package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Client is a client as one request names it.
type Client struct {
	ID           string
	Name         string
	RedirectURIs []string
	// Host is the host its metadata document was fetched from; "" for a registered client,
	// which the consent page calls unverified (anyone may register any name).
	Host string
}

// errUnknownClient is a client_id that names nothing this server knows.
var errUnknownClient = errors.New("unknown client")

// client resolves a client_id: a metadata document's URL, or a registered id.
func (s *Server) client(ctx context.Context, id string) (*Client, error) {
	if id == "" || len(id) > MaxParamBytes {
		return nil, errUnknownClient
	}
	if IsDocumentURL(id) {
		doc, err := s.cfg.Documents.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		u, _ := url.Parse(id)
		return &Client{ID: id, Name: doc.ClientName, RedirectURIs: doc.RedirectURIs, Host: u.Hostname()}, nil
	}
	c, err := s.cfg.Store.OAuthClientByID(ctx, id)
	if errors.Is(err, ask.ErrNotFound) {
		return nil, errUnknownClient
	} else if err != nil {
		return nil, err
	}
	return &Client{ID: c.ID, Name: c.Name, RedirectURIs: c.RedirectURIs}, nil
}

// checkRedirectURI is what a redirect URI may be: https; http only to a loopback address (a
// native client's listener, RFC 8252 §7.3); or a private-use scheme of a native app (RFC 8252
// §7.1, such as cursor://). Never a scheme that runs or reads something in the browser.
func checkRedirectURI(raw string) error {
	if raw == "" || len(raw) > MaxParamBytes {
		return fmt.Errorf("a redirect URI is empty or longer than %d bytes", MaxParamBytes)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return fmt.Errorf("redirect URI %q is not an absolute URI", raw)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("redirect URI %q has a fragment", raw)
	}
	switch scheme := strings.ToLower(u.Scheme); scheme {
	case "https":
		if u.Host == "" {
			return fmt.Errorf("redirect URI %q has no host", raw)
		}
	case "http":
		if !isLoopback(u.Hostname()) {
			return fmt.Errorf("redirect URI %q: http only to a loopback address (127.0.0.1, [::1], localhost); use https", raw)
		}
	case "javascript", "data", "file", "blob", "about", "vbscript", "ftp", "ws", "wss":
		return fmt.Errorf("redirect URI %q: the %s scheme is not allowed", raw, scheme)
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// matchRedirect finds the registered URI a redirect_uri matches: exactly; or, for a loopback
// URI, with any port (VS Code falls back to a random one; Claude Code's document lists none),
// any loopback name for another (Codex registers 127.0.0.1 and may send localhost), and one
// more path segment after the registered path (Codex's /callback/<id>).
func matchRedirect(registered []string, got string) bool {
	if checkRedirectURI(got) != nil {
		return false
	}
	g, _ := url.Parse(got)
	for _, r := range registered {
		if r == got {
			return true
		}
		u, err := url.Parse(r)
		if err != nil || !strings.EqualFold(u.Scheme, "http") || !strings.EqualFold(g.Scheme, "http") ||
			!isLoopback(u.Hostname()) || !isLoopback(g.Hostname()) || u.RawQuery != g.RawQuery {
			continue
		}
		rp, gp := strings.TrimSuffix(u.EscapedPath(), "/"), strings.TrimSuffix(g.EscapedPath(), "/")
		if rp == gp {
			return true
		}
		if rest, ok := strings.CutPrefix(gp, rp+"/"); ok && rp != "" && rest != "" && !strings.Contains(rest, "/") && rest != "." && rest != ".." {
			return true
		}
	}
	return false
}

// redirectHost is how the consent page names where the code goes: the host (and port) of an
// https or loopback URI, or a native app's scheme.
func redirectHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u.Host
	}
	if u.Host != "" {
		return u.Scheme + "://" + u.Host
	}
	return u.Scheme + ":"
}

// registration is RFC 7591's client metadata, as far as Loopback reads it.
type registration struct {
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	Scope                   string   `json:"scope"`
}

// register: Dynamic Client Registration (RFC 7591), kept for the clients that still use it
// (Cursor, Claude Desktop, older Codex; deprecated by MCP 2026-07-28 in favour of metadata
// documents). Every client is public: the answer's token_endpoint_auth_method is none whatever
// was asked (RFC 7591 §3.2.1 lets the server choose), and no secret is issued. Each redirect URI
// is checked on its own and all must pass (Cursor sends three at once and gives up if any is
// refused, so none of its usual kinds is refused).
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxFormBytes))
	if err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", fmt.Sprintf("the registration is larger than %d bytes", MaxFormBytes))
		return
	}
	var reg registration
	if err := json.Unmarshal(body, &reg); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "the registration is not a JSON object: "+err.Error())
		return
	}
	if len(reg.RedirectURIs) == 0 || len(reg.RedirectURIs) > MaxRedirectURIs {
		oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", fmt.Sprintf("register between 1 and %d redirect_uris", MaxRedirectURIs))
		return
	}
	for _, u := range reg.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", err.Error())
			return
		}
	}
	for _, g := range reg.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			oauthError(w, http.StatusBadRequest, "invalid_client_metadata", fmt.Sprintf("grant type %q is not supported: authorization_code and refresh_token are", g))
			return
		}
	}
	for _, t := range reg.ResponseTypes {
		if t != "code" {
			oauthError(w, http.StatusBadRequest, "invalid_client_metadata", fmt.Sprintf("response type %q is not supported: code is", t))
			return
		}
	}
	if len(reg.ClientName) > MaxParamBytes {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "client_name is too long")
		return
	}
	if wait, over := s.overStarts(r); over {
		retryAfter(w, wait)
		oauthError(w, http.StatusTooManyRequests, "temporarily_unavailable", fmt.Sprintf("this address registered %d clients within a minute; try again later", MaxStartsPerMinute))
		return
	}
	now := s.cfg.Now()
	c := &ask.OAuthClient{ID: "client_" + ask.NewID(), Name: reg.ClientName, RedirectURIs: reg.RedirectURIs, CreatedAt: now}
	if err := s.cfg.Store.CreateOAuthClient(r.Context(), c); err != nil {
		s.serverError(w, "registering a client", err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id":                  c.ID,
		"client_id_issued_at":        now.Unix(),
		"client_name":                c.Name,
		"redirect_uris":              c.RedirectURIs,
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
		"scope":                      Scope,
	}, "")
}

// serverError answers 500 in OAuth's form, and logs err once.
func (s *Server) serverError(w http.ResponseWriter, doing string, err error) {
	s.cfg.Logger.Error("oauth: "+doing, "err", err)
	oauthError(w, http.StatusInternalServerError, "server_error", "something went wrong on our side; it has been logged")
}
