// Package sso signs people in to the inbox through the team's OpenID Connect provider (issue 28
// item 4): any provider, by its issuer URL. Loopback is the relying party: discovery at
// <issuer>/.well-known/openid-configuration, the authorization code flow with PKCE (S256), state
// and nonce, the ID token verified (signature by the provider's published keys, issuer, audience,
// expiry, nonce) by github.com/coreos/go-oidc. A verified email or the subject maps the identity to
// a person of the space (a link, kept by ask.SSOStore); the sign-in ends, like every way in, with a
// NEW person credential for that browser (gate.Issue), handed to the page in the URL fragment as
// the printed link hands its token (docs/trust.md says why).
//
// The protocol's pages sit beside the contract, as /oauth/* do (docs/design/oauth.md): the
// browser goes to /auth/oidc/start, the provider sends it back to /auth/oidc/callback.
package sso

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// The protocol's paths.
const (
	PathStart    = "/auth/oidc/start"
	PathCallback = "/auth/oidc/callback"
	// cookieName holds the state in the browser that started the sign-in: only that browser's
	// callback is taken (a login started elsewhere cannot be finished here, nor the reverse).
	cookieName = "lb_oidc"
	cookiePath = "/auth/oidc/"
)

// Paths lists the paths Handler serves, for the deployment's mux.
func Paths() []string { return []string{PathStart, PathCallback} }

// Config is a deployment's single sign-on, set by its owner (loopback serve's --oidc-* flags and
// environment; on AWS the template's parameters).
type Config struct {
	// Issuer is the provider's issuer URL (discovery is at Issuer/.well-known/openid-configuration).
	Issuer string
	// ClientID and ClientSecret are Loopback's registration at the provider; the secret may be
	// empty for a provider that registered Loopback as a public client (PKCE alone).
	ClientID     string
	ClientSecret string
	// LoadClientSecret, when set, reads the secret when a sign-in needs it instead of
	// ClientSecret (on AWS: an SSM SecureString, read on first use, never while a function loads).
	LoadClientSecret func(context.Context) (string, error)
	// Name is the provider's name on the sign-in button; empty: the issuer's host.
	Name string

	// Allow says who may sign in the first time and become a teammate of the space: verified
	// emails ("ada@example.com"), every verified email of a domain ("@example.com"), or a
	// subject at the provider ("sub:248289761001"). Empty: only identities already linked, and
	// Owners.
	Allow []string
	// Owners are the identities that sign in as the space's owner (same forms as Allow).
	Owners []string

	// Space is the space people sign in to.
	Space string

	Store       ask.SSOStore
	Credentials ask.CredentialStore
	// Throttle counts refused callbacks per client address, as failed sign-ins; nil counts none.
	Throttle gate.Throttle
	// Starts counts sign-ins started per client address (gate.Gate.Starts): each keeps a row
	// until it expires; nil counts none.
	Starts gate.Throttle
	// PublicURL is the deployment's address for a request (the redirect URI is under it).
	PublicURL func(*http.Request) string
	// HTTPClient reaches the provider; nil: one with a 10 s timeout.
	HTTPClient *http.Client
	Now        func() time.Time
	Logger     *slog.Logger
}

// Server runs the sign-in.
type Server struct {
	cfg   Config
	allow []rule
	owner []rule

	mu       sync.Mutex
	provider *oidc.Provider // discovered on first use, then kept
}

// New checks cfg and returns its server. The provider is not reached until the first sign-in, so
// Loopback starts while the provider is away.
func New(cfg Config) (*Server, error) {
	if err := CheckSettings(cfg.Issuer, cfg.ClientID, cfg.Allow, cfg.Owners); err != nil {
		return nil, err
	}
	if cfg.Store == nil || cfg.Credentials == nil || cfg.PublicURL == nil || cfg.Space == "" {
		return nil, errors.New("sso: Store, Credentials, PublicURL and Space are required")
	}
	s := &Server{cfg: cfg}
	s.allow, _ = parseRules(cfg.Allow)
	s.owner, _ = parseRules(cfg.Owners)
	if s.cfg.Name == "" {
		u, _ := url.Parse(cfg.Issuer)
		s.cfg.Name = u.Hostname()
	}
	if s.cfg.Logger == nil {
		s.cfg.Logger = slog.Default()
	}
	if s.cfg.HTTPClient == nil {
		s.cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if s.cfg.Now == nil {
		s.cfg.Now = func() time.Time { return ask.Truncate(time.Now()) }
	}
	return s, nil
}

// CheckSettings checks what the owner configures: the issuer URL (https; http only on this
// machine, for testing), the client id, and the Allow and Owners entries.
func CheckSettings(issuer, clientID string, allow, owners []string) error {
	u, err := url.Parse(issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("sso: the issuer %q is not an http(s) URL", issuer)
	}
	if u.Scheme == "http" && !isLoopbackHost(u.Hostname()) {
		return fmt.Errorf("sso: the issuer %q must be https (http only on this machine, for testing)", issuer)
	}
	if clientID == "" {
		return errors.New("sso: a client id is needed (the provider gives it when Loopback is registered)")
	}
	if _, err := parseRules(allow); err != nil {
		return err
	}
	_, err = parseRules(owners)
	return err
}

// Name is the provider's name, for the sign-in button.
func (s *Server) Name() string { return s.cfg.Name }

// Issuer is the provider's issuer URL.
func (s *Server) Issuer() string { return s.cfg.Issuer }

// rule is one entry of Allow or Owners.
type rule struct{ email, domain, subject string }

func parseRules(entries []string) ([]rule, error) {
	var out []rule
	for _, e := range entries {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
			continue
		case strings.HasPrefix(e, "sub:") && len(e) > 4:
			out = append(out, rule{subject: e[4:]})
		case strings.HasPrefix(e, "@") && len(e) > 1 && !strings.Contains(e[1:], "@"):
			out = append(out, rule{domain: strings.ToLower(e[1:])})
		case strings.Count(e, "@") == 1 && !strings.HasPrefix(e, "@") && !strings.HasSuffix(e, "@"):
			out = append(out, rule{email: strings.ToLower(e)})
		default:
			return nil, fmt.Errorf("sso: %q is not an email, an @domain or a sub:<subject>", e)
		}
	}
	return out, nil
}

// matches reports whether an identity fits one of the rules: a verified email by address or
// domain, or the subject.
func matches(rules []rule, id identity) bool {
	email := strings.ToLower(id.Email)
	for _, r := range rules {
		switch {
		case r.subject != "" && r.subject == id.Subject:
			return true
		case !id.EmailVerified || email == "":
		case r.email != "" && r.email == email:
			return true
		case r.domain != "" && strings.HasSuffix(email, "@"+r.domain):
			return true
		}
	}
	return false
}

// identity is who the ID token says signed in.
type identity struct {
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
}

// getProvider discovers the provider once. Its context outlives the request: go-oidc fetches the
// provider's keys later with it.
func (s *Server) getProvider() (*oidc.Provider, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.provider != nil {
		return s.provider, nil
	}
	p, err := oidc.NewProvider(oidc.ClientContext(context.Background(), s.cfg.HTTPClient), s.cfg.Issuer)
	if err != nil {
		return nil, err
	}
	s.provider = p
	return p, nil
}

func (s *Server) oauthConfig(r *http.Request, p *oidc.Provider) (*oauth2.Config, error) {
	secret := s.cfg.ClientSecret
	if s.cfg.LoadClientSecret != nil {
		var err error
		if secret, err = s.cfg.LoadClientSecret(r.Context()); err != nil {
			return nil, fmt.Errorf("sso: reading the client secret: %w", err)
		}
	}
	return &oauth2.Config{
		ClientID: s.cfg.ClientID, ClientSecret: secret, Endpoint: p.Endpoint(),
		RedirectURL: strings.TrimRight(s.cfg.PublicURL(r), "/") + PathCallback,
		Scopes:      []string{oidc.ScopeOpenID, "email", "profile"},
	}, nil
}

// Handler serves the protocol's two pages.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathStart, s.start)
	mux.HandleFunc("GET "+PathCallback, s.callback)
	return mux
}

func randomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashState(state string) []byte {
	h := sha256.Sum256([]byte(state))
	return h[:]
}

// start sends the browser to the provider, with a fresh state (also in this browser's cookie),
// nonce and PKCE challenge; the store keeps the state's hash, the nonce and the verifier.
func (s *Server) start(w http.ResponseWriter, r *http.Request) {
	if err := gate.CountStart(gate.FromRequest(r), s.cfg.Starts, "sso"); err != nil {
		var t *gate.Throttled
		if errors.As(err, &t) {
			w.Header().Set("Retry-After", fmt.Sprint(int(t.RetryAfter()/time.Second)))
		}
		s.page(w, http.StatusTooManyRequests, "Too many sign-ins from here",
			fmt.Sprintf("This address started %d sign-ins within a minute. Wait a minute, then sign in again.", gate.MaxStartsPerMinute))
		return
	}
	p, err := s.getProvider()
	if err != nil {
		s.cfg.Logger.Warn("sso: discovery", "issuer", s.cfg.Issuer, "err", err)
		s.page(w, http.StatusBadGateway, "The sign-in provider cannot be reached",
			fmt.Sprintf("Loopback could not read %s's configuration. Try again in a moment; if it keeps failing, the owner should check the issuer URL.", s.cfg.Name))
		return
	}
	oc, err := s.oauthConfig(r, p)
	if err != nil {
		s.cfg.Logger.Error("sso: start", "err", err)
		s.page(w, http.StatusServiceUnavailable, "Sign-in is unavailable", "Loopback could not start the sign-in. Try again in a moment.")
		return
	}
	state, nonce, verifier := randomString(32), randomString(32), oauth2.GenerateVerifier()
	now := s.cfg.Now()
	if err := s.cfg.Store.CreateSSOLogin(r.Context(), &ask.SSOLogin{
		StateHash: hashState(state), Nonce: nonce, Verifier: verifier, CreatedAt: now, ExpiresAt: now.Add(ask.SSOLoginTTL),
	}); err != nil {
		s.cfg.Logger.Error("sso: keeping a sign-in", "err", err)
		s.page(w, http.StatusServiceUnavailable, "Sign-in is unavailable", "Loopback could not start the sign-in. Try again in a moment.")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: state, Path: cookiePath, MaxAge: int(ask.SSOLoginTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: strings.HasPrefix(s.cfg.PublicURL(r), "https:"),
	})
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, oc.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), http.StatusFound)
}

// refused is a callback that ends in a refusal page.
type refused struct {
	status      int
	title, text string
	// count: a failed sign-in for the throttle (a state or token that does not verify).
	count bool
}

func (e *refused) Error() string { return e.title + ": " + e.text }

// callback finishes the sign-in: state checked against this browser's cookie and taken once, the
// code redeemed with the PKCE verifier, the ID token verified and its nonce compared, the
// identity mapped to a person, and a new person credential handed to the page.
func (s *Server) callback(w http.ResponseWriter, r *http.Request) {
	// The state cookie is spent whatever happens.
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: cookiePath, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: strings.HasPrefix(s.cfg.PublicURL(r), "https:")})
	token, err := s.finish(r)
	if err != nil {
		var rf *refused
		if !errors.As(err, &rf) {
			s.cfg.Logger.Error("sso: callback", "err", err)
			rf = &refused{status: http.StatusServiceUnavailable, title: "Sign-in failed", text: "Loopback could not finish the sign-in. Try again in a moment."}
		}
		if rf.count && s.cfg.Throttle != nil {
			if wait, over, terr := s.cfg.Throttle.Fail(r.Context(), gate.RemoteHost(r)); terr == nil && over {
				w.Header().Set("Retry-After", fmt.Sprint(int((wait+time.Second-1)/time.Second)))
				rf = &refused{status: http.StatusTooManyRequests, title: "Too many failed sign-ins", text: "Too many sign-ins from this address failed. Wait a minute, then start again."}
			}
		}
		s.page(w, rf.status, rf.title, rf.text)
		return
	}
	// The token goes in the fragment, as the printed link carries it: the browser never sends a
	// fragment to any server, and the page takes it out of the address bar at once (auth.ts).
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Location", strings.TrimRight(s.cfg.PublicURL(r), "/")+"/#token="+url.QueryEscape(token))
	w.WriteHeader(http.StatusSeeOther)
}

func (s *Server) finish(r *http.Request) (string, error) {
	ctx := r.Context()
	q := r.URL.Query()
	again := "Go back to Loopback and choose Sign in with " + s.cfg.Name + " again."
	if e := q.Get("error"); e != "" {
		text := fmt.Sprintf("%s did not sign you in (%s).", s.cfg.Name, e)
		if d := q.Get("error_description"); d != "" {
			text = fmt.Sprintf("%s did not sign you in: %s (%s).", s.cfg.Name, d, e)
		}
		// The sign-in under way is over: take it so that it cannot be finished later.
		if st := q.Get("state"); st != "" {
			_, _ = s.cfg.Store.TakeSSOLogin(ctx, hashState(st), s.cfg.Now())
		}
		return "", &refused{status: http.StatusForbidden, title: "Not signed in", text: text + " " + again}
	}
	state := q.Get("state")
	c, err := r.Cookie(cookieName)
	if state == "" || err != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(state)) != 1 {
		return "", &refused{status: http.StatusBadRequest, count: true, title: "This sign-in was not started here",
			text: "This browser did not start this sign-in, or it took more than 10 minutes. " + again}
	}
	login, err := s.cfg.Store.TakeSSOLogin(ctx, hashState(state), s.cfg.Now())
	if errors.Is(err, ask.ErrNotFound) {
		return "", &refused{status: http.StatusBadRequest, count: true, title: "This sign-in is over",
			text: "This sign-in was finished already, or it took more than 10 minutes. " + again}
	} else if err != nil {
		return "", err
	}
	code := q.Get("code")
	if code == "" {
		return "", &refused{status: http.StatusBadRequest, count: true, title: "Not signed in", text: s.cfg.Name + " sent no code. " + again}
	}
	p, err := s.getProvider()
	if err != nil {
		return "", &refused{status: http.StatusBadGateway, title: "The sign-in provider cannot be reached", text: err.Error()}
	}
	pctx := oidc.ClientContext(ctx, s.cfg.HTTPClient)
	oc, err := s.oauthConfig(r, p)
	if err != nil {
		return "", err
	}
	tok, err := oc.Exchange(pctx, code, oauth2.VerifierOption(login.Verifier))
	if err != nil {
		s.cfg.Logger.Warn("sso: redeeming the code", "err", err)
		return "", &refused{status: http.StatusBadGateway, count: true, title: "Not signed in",
			text: s.cfg.Name + " did not accept the sign-in's code. " + again}
	}
	raw, _ := tok.Extra("id_token").(string)
	id, err := s.verify(pctx, p, raw, login.Nonce)
	if err != nil {
		s.cfg.Logger.Warn("sso: the ID token was refused", "err", err)
		return "", &refused{status: http.StatusUnauthorized, count: true, title: "Not signed in",
			text: "The identity " + s.cfg.Name + " sent did not verify. " + again}
	}
	link, err := s.personOf(ctx, id)
	if err != nil {
		return "", err
	}
	now := s.cfg.Now()
	if err := s.cfg.Store.TouchSSOLink(ctx, s.cfg.Space, link.ID, now); err != nil && !errors.Is(err, ask.ErrNotFound) {
		s.cfg.Logger.Warn("sso: recording a sign-in", "err", err)
	}
	token, _, err := gate.Issue(ctx, s.cfg.Credentials, ask.Credential{
		Space: s.cfg.Space, Role: link.Role, Actor: link.Person, Person: link.Person, CreatedAt: now,
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// verify checks the ID token (signature, issuer, audience, expiry: go-oidc) and its nonce.
func (s *Server) verify(ctx context.Context, p *oidc.Provider, raw, nonce string) (identity, error) {
	if raw == "" {
		return identity{}, errors.New("the token response has no id_token")
	}
	t, err := p.Verifier(&oidc.Config{ClientID: s.cfg.ClientID, Now: s.cfg.Now}).Verify(ctx, raw)
	if err != nil {
		return identity{}, err
	}
	if subtle.ConstantTimeCompare([]byte(t.Nonce), []byte(nonce)) != 1 {
		return identity{}, errors.New("the ID token's nonce is not this sign-in's")
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified any    `json:"email_verified"` // some providers send "true"
		Name          string `json:"name"`
		Preferred     string `json:"preferred_username"`
	}
	if err := t.Claims(&claims); err != nil {
		return identity{}, err
	}
	id := identity{Subject: t.Subject, Email: claims.Email, Name: strings.TrimSpace(claims.Name)}
	switch v := claims.EmailVerified.(type) {
	case bool:
		id.EmailVerified = v
	case string:
		id.EmailVerified = v == "true"
	}
	if id.Name == "" {
		id.Name = strings.TrimSpace(claims.Preferred)
	}
	if id.Subject == "" {
		return identity{}, errors.New("the ID token names no subject")
	}
	return id, nil
}

// personOf maps an identity to a person of the space: its link, or, the first time, the owner
// (Owners) or a new teammate (Allow), linked from then on. Anyone else is refused.
func (s *Server) personOf(ctx context.Context, id identity) (*ask.SSOLink, error) {
	link, err := s.cfg.Store.SSOLinkBySubject(ctx, s.cfg.Space, s.cfg.Issuer, id.Subject)
	if err == nil {
		return link, nil
	} else if !errors.Is(err, ask.ErrNotFound) {
		return nil, err
	}
	link = &ask.SSOLink{
		ID: ask.SSOLinkID(s.cfg.Issuer, id.Subject), Space: s.cfg.Space, Issuer: s.cfg.Issuer, Subject: id.Subject,
		CreatedAt: s.cfg.Now(),
	}
	if id.EmailVerified {
		link.Email = id.Email
	}
	switch {
	case matches(s.owner, id):
		owner, err := s.owningPerson(ctx)
		if err != nil {
			return nil, err
		}
		link.Person, link.Role = owner, ask.RoleOwner
	case matches(s.allow, id):
		link.Person, link.Role = teammate(id), ask.RolePerson
	default:
		who := id.Email
		if who == "" || !id.EmailVerified {
			who = "this " + s.cfg.Name + " account"
			if id.Email != "" {
				who += " (" + id.Email + ", whose address " + s.cfg.Name + " has not verified)"
			}
		}
		s.cfg.Logger.Info("sso: an identity nobody listed was refused", "subject", id.Subject)
		return nil, &refused{status: http.StatusForbidden, title: "Not a person of this Loopback",
			text: "You signed in to " + s.cfg.Name + " as " + who + ", but the owner of this Loopback has not let that account in. " +
				"Ask them to add your address, then sign in again."}
	}
	if err := s.cfg.Store.CreateSSOLink(ctx, link); errors.Is(err, ask.ErrAlreadyStored) {
		// Two first sign-ins at once: the other made the link.
		return s.cfg.Store.SSOLinkBySubject(ctx, s.cfg.Space, s.cfg.Issuer, id.Subject)
	} else if err != nil {
		return nil, err
	}
	return link, nil
}

// teammate is the person a first sign-in makes: named by the verified email, so that the same
// address is the same person (as `loopback token create --person --name <address>` names one).
func teammate(id identity) ask.Actor {
	name := id.Name
	if id.EmailVerified && id.Email != "" {
		if name == "" {
			name = id.Email
		}
		return ask.Actor{ID: "person:" + strings.ToLower(id.Email), Name: name}
	}
	h := sha256.Sum256([]byte(id.Subject))
	if name == "" {
		name = "sso user"
	}
	return ask.Actor{ID: "person:sso-" + base64.RawURLEncoding.EncodeToString(h[:9]), Name: name}
}

// owningPerson is the space's owner: whom its first live owner credential belongs to.
func (s *Server) owningPerson(ctx context.Context) (ask.Actor, error) {
	creds, err := s.cfg.Credentials.Credentials(ctx, s.cfg.Space)
	if err != nil {
		return ask.Actor{}, err
	}
	for _, c := range creds {
		if c.Role == ask.RoleOwner && c.Live() {
			if c.Person.ID == "" {
				return c.Actor, nil
			}
			return c.Person, nil
		}
	}
	return ask.Actor{}, &refused{status: http.StatusForbidden, title: "No owner yet",
		text: "This Loopback has no owner yet: the owner signs in first with the link `loopback serve` printed."}
}

func isLoopbackHost(h string) bool {
	return h == "localhost" || h == "127.0.0.1" || h == "::1" || strings.HasPrefix(h, "127.")
}
