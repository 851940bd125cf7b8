package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// tokenForm reads a token or revocation request's form (application/x-www-form-urlencoded, at
// most MaxFormBytes, each parameter once). A client_id may come in the form or as HTTP Basic's
// user name (a public client's empty password).
func tokenForm(w http.ResponseWriter, r *http.Request) (map[string]string, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body must be a form (application/x-www-form-urlencoded) under 16 KiB")
		return nil, false
	}
	out := map[string]string{}
	for k, vs := range r.PostForm {
		if len(vs) > 1 {
			oauthError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("the parameter %s is given twice", k))
			return nil, false
		}
		out[k] = vs[0]
	}
	if out["client_id"] == "" {
		if user, _, ok := r.BasicAuth(); ok {
			out["client_id"] = user
		}
	}
	return out, true
}

// token: the token endpoint (RFC 6749 §3.2, OAuth 2.1): the authorization code grant with PKCE,
// and the refresh token grant with rotation.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	form, ok := tokenForm(w, r)
	if !ok {
		return
	}
	switch form["grant_type"] {
	case "authorization_code":
		s.redeemCode(w, r, form)
	case "refresh_token":
		s.refresh(w, r, form)
	case "":
		oauthError(w, http.StatusBadRequest, "invalid_request", "grant_type is required")
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
	}
}

// grantError is a refusal of the token endpoint.
type grantError struct{ code, description string }

func (e *grantError) Error() string { return e.code + ": " + e.description }

func invalidGrant(format string, args ...any) *grantError {
	return &grantError{"invalid_grant", fmt.Sprintf(format, args...)}
}

// s256 is PKCE's S256 transform of a verifier.
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for _, c := range v {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune("-._~", c)) {
			return false
		}
	}
	return true
}

// redeemCode exchanges an authorization code, once. A code shown a second time is a replay:
// the tokens the first exchange issued are deleted too (RFC 6749 §4.1.2).
func (s *Server) redeemCode(w http.ResponseWriter, r *http.Request, form map[string]string) {
	ctx := r.Context()
	now := s.cfg.Now()
	req, err := s.cfg.Store.AuthRequestByCode(ctx, gate.Hash(form["code"]))
	if errors.Is(err, ask.ErrNotFound) || form["code"] == "" {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the code is not valid, or expired")
		return
	} else if err != nil {
		s.serverError(w, "finding a code", err)
		return
	}
	replayed := false
	req, err = s.cfg.Store.ChangeAuthRequest(ctx, req.ID, func(x *ask.AuthRequest) error {
		switch {
		case x.Status == ask.ConsentUsed:
			replayed = true
			return invalidGrant("the code was used already")
		case x.Status != ask.ConsentApproved || len(x.CodeHash) == 0 || subtle.ConstantTimeCompare(x.CodeHash, gate.Hash(form["code"])) != 1:
			return invalidGrant("the code is not valid")
		case ask.Expired(x.ExpiresAt, now):
			return invalidGrant("the code expired: codes last %s", CodeTTL)
		case form["client_id"] != x.ClientID:
			return invalidGrant("the code was issued to another client")
		case form["redirect_uri"] != x.RedirectURI:
			return invalidGrant("redirect_uri is not the one the code was requested with")
		case !validVerifier(form["code_verifier"]):
			return invalidGrant("code_verifier is required: 43-128 characters of [A-Za-z0-9-._~] (PKCE)")
		case subtle.ConstantTimeCompare([]byte(s256(form["code_verifier"])), []byte(x.CodeChallenge)) != 1:
			return invalidGrant("code_verifier does not match the code_challenge (PKCE S256)")
		}
		if raw := form["resource"]; raw != "" {
			if got, ok := canonicalResource(raw); !ok || got != x.Resource {
				return &grantError{"invalid_target", fmt.Sprintf("resource %q is not the one the code was issued for (%s)", raw, x.Resource)}
			}
		}
		x.Status = ask.ConsentUsed
		return nil
	})
	if err != nil {
		var g *grantError
		if errors.As(err, &g) {
			if replayed && req != nil {
				if derr := s.deleteTokens(ctx, req.Space, req.CredentialID); derr != nil {
					s.cfg.Logger.Error("oauth: deleting a replayed code's tokens", "err", derr)
				}
			}
			oauthError(w, http.StatusBadRequest, g.code, g.description)
			return
		}
		s.serverError(w, "redeeming a code", err)
		return
	}
	s.issue(w, ctx, req.Space, req.CredentialID, req.ClientID, req.Resource, req.Scope)
}

// refresh exchanges a refresh token for a new pair. The old token is rotated: it works for
// RefreshGrace more (a client's processes refreshing at once each get a pair), and shown after
// that it is a replay, which ends the whole family (every refresh token of the credential).
func (s *Server) refresh(w http.ResponseWriter, r *http.Request, form map[string]string) {
	ctx := r.Context()
	now := s.cfg.Now()
	hash := gate.Hash(form["refresh_token"])
	t, err := s.cfg.Store.OAuthTokenByHash(ctx, hash)
	switch {
	case errors.Is(err, ask.ErrNotFound) || form["refresh_token"] == "" || (err == nil && t.Kind != ask.RefreshToken):
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is not valid")
		return
	case err != nil:
		s.serverError(w, "finding a refresh token", err)
		return
	case ask.Expired(t.ExpiresAt, now):
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token expired: sign in again")
		return
	case form["client_id"] != t.ClientID:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token was issued to another client")
		return
	}
	if raw := form["resource"]; raw != "" {
		if got, ok := canonicalResource(raw); !ok || got != t.Resource {
			oauthError(w, http.StatusBadRequest, "invalid_target", fmt.Sprintf("resource %q is not the one the token was issued for (%s)", raw, t.Resource))
			return
		}
	}
	for _, sc := range strings.Fields(form["scope"]) {
		if !hasScope(t.Scope, sc) {
			oauthError(w, http.StatusBadRequest, "invalid_scope", fmt.Sprintf("scope %q was not granted", sc))
			return
		}
	}
	c, err := s.cfg.Credentials.CredentialByID(ctx, t.Space, t.CredentialID)
	if ask.ErrorCode(err) == ask.ENotFound || (err == nil && !c.Live()) {
		_ = s.deleteTokens(ctx, t.Space, t.CredentialID)
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the agent's credential was revoked: sign in again")
		return
	} else if err != nil {
		s.serverError(w, "reading a credential", err)
		return
	}
	before, err := s.cfg.Store.RotateRefreshToken(ctx, hash, now)
	if errors.Is(err, ask.ErrNotFound) {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is not valid")
		return
	} else if err != nil {
		s.serverError(w, "rotating a refresh token", err)
		return
	}
	if before.RotatedAt != nil && now.Sub(*before.RotatedAt) > RefreshGrace {
		if err := s.cfg.Store.DeleteOAuthTokens(ctx, t.Space, t.CredentialID, ask.RefreshToken); err != nil {
			s.cfg.Logger.Error("oauth: ending a replayed refresh token's family", "err", err)
		}
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token was used already: sign in again")
		return
	}
	s.issue(w, ctx, t.Space, t.CredentialID, t.ClientID, t.Resource, t.Scope)
}

// issue makes and answers an access and a refresh token for a credential.
func (s *Server) issue(w http.ResponseWriter, ctx context.Context, space, credential, client, resource, scope string) {
	now := s.cfg.Now()
	access, accessHash := gate.NewSecret(gate.AccessTokenPrefix)
	refresh, refreshHash := gate.NewSecret(gate.RefreshTokenPrefix)
	for _, t := range []*ask.OAuthToken{
		{Hash: accessHash, Kind: ask.AccessToken, ExpiresAt: now.Add(AccessTTL)},
		{Hash: refreshHash, Kind: ask.RefreshToken, ExpiresAt: now.Add(RefreshTTL)},
	} {
		t.Space, t.CredentialID, t.ClientID, t.Resource, t.Scope, t.CreatedAt = space, credential, client, resource, scope, now
		if err := s.cfg.Store.CreateOAuthToken(ctx, t); err != nil {
			s.serverError(w, "storing a token", err)
			return
		}
	}
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token":  access,
		"token_type":    "Bearer",
		"expires_in":    int(AccessTTL.Seconds()),
		"refresh_token": refresh,
		"scope":         scope,
	}, "")
}

func (s *Server) deleteTokens(ctx context.Context, space, credential string) error {
	if credential == "" {
		return nil
	}
	return errors.Join(
		s.cfg.Store.DeleteOAuthTokens(ctx, space, credential, ask.AccessToken),
		s.cfg.Store.DeleteOAuthTokens(ctx, space, credential, ask.RefreshToken))
}

// revoke: RFC 7009. The answer is 200 whatever the token was (§2.2): a token revoked, unknown or
// another client's tells the caller nothing. Revoking a refresh token ends its access tokens
// too; the agent's credential stays listed (revoke it in the inbox or with loopback token revoke).
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	form, ok := tokenForm(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	hash := gate.Hash(form["token"])
	t, err := s.cfg.Store.OAuthTokenByHash(ctx, hash)
	switch {
	case errors.Is(err, ask.ErrNotFound) || form["token"] == "":
	case err != nil:
		s.serverError(w, "finding a token to revoke", err)
		return
	case form["client_id"] != "" && form["client_id"] != t.ClientID:
	case t.Kind == ask.RefreshToken:
		if err := s.deleteTokens(ctx, t.Space, t.CredentialID); err != nil {
			s.serverError(w, "revoking a token", err)
			return
		}
	default:
		if err := s.cfg.Store.DeleteOAuthToken(ctx, hash); err != nil {
			s.serverError(w, "revoking a token", err)
			return
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}
