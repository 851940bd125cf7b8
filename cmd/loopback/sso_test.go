package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// idp is mockoidc, the stand-in OpenID Connect provider, with a hook that may rewrite the ID
// token its token endpoint returns (to forge one).
type idp struct {
	*mockoidc.MockOIDC
	mu     sync.Mutex
	tamper func(claims jwt.MapClaims) (string, error) // nil: the token as issued
}

func startIDP(t *testing.T) *idp {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &idp{MockOIDC: m}
	if err := m.AddMiddleware(p.rewriteTokens); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	return p
}

func (p *idp) setTamper(f func(jwt.MapClaims) (string, error)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tamper = f
}

// rewriteTokens replaces the token endpoint's id_token with the tamper hook's, when set.
func (p *idp) rewriteTokens(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		tamper := p.tamper
		p.mu.Unlock()
		if tamper == nil || !strings.HasSuffix(r.URL.Path, "/token") {
			next.ServeHTTP(w, r)
			return
		}
		rec := &recorder{header: http.Header{}}
		next.ServeHTTP(rec, r)
		var body map[string]any
		if err := json.Unmarshal(rec.body.Bytes(), &body); err == nil {
			if raw, ok := body["id_token"].(string); ok {
				parts := strings.Split(raw, ".")
				payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
				claims := jwt.MapClaims{}
				json.Unmarshal(payload, &claims)
				if forged, err := tamper(claims); err == nil {
					body["id_token"] = forged
				}
			}
		}
		b, _ := json.Marshal(body)
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.status)
		w.Write(b)
	})
}

type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = 200
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(s int) { r.status = s }

// startSSOServer runs `loopback serve` with single sign-on through p.
func startSSOServer(t *testing.T, p *idp, flags ...string) *server {
	t.Helper()
	cfg := p.Config()
	return startServe(t, 15*time.Second, map[string]string{"LOOPBACK_TOKEN": ownerToken, SSOSecretEnv: cfg.ClientSecret},
		append([]string{"--oidc-issuer", cfg.Issuer, "--oidc-client-id", cfg.ClientID, "--oidc-name", "Mock IdP"}, flags...)...)
}

// ssoBrowser is a browser with its cookies, which follows redirects until it lands back on the
// inbox with a fragment (which a browser never sends to the server).
type ssoBrowser struct {
	t      *testing.T
	client *http.Client
}

func newSSOBrowser(t *testing.T, base string) *ssoBrowser {
	jar, _ := cookiejar.New(nil)
	return &ssoBrowser{t: t, client: &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), base) && req.URL.Path == "/" {
			return http.ErrUseLastResponse
		}
		return nil
	}}}
}

// signIn clicks "Sign in with …": it returns the token the inbox's fragment carries, or "" and
// the page where the sign-in stopped.
func (b *ssoBrowser) signIn(base string) (token string, status int, page string) {
	b.t.Helper()
	return b.get(base + "/auth/oidc/start")
}

func (b *ssoBrowser) get(u string) (token string, status int, page string) {
	b.t.Helper()
	resp, err := b.client.Get(u)
	if err != nil {
		b.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusSeeOther {
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil {
			b.t.Fatal(err)
		}
		if loc.RawQuery != "" {
			b.t.Errorf("the sign-in's last redirect has a query: %s", loc.Redacted())
		}
		frag, _ := url.ParseQuery(loc.Fragment)
		return frag.Get("token"), resp.StatusCode, ""
	}
	return "", resp.StatusCode, string(body)
}

// lastCallback is the callback URL the provider sent the browser to, for replays.
func (b *ssoBrowser) lastCallback(t *testing.T, p *idp, s *server) string {
	t.Helper()
	var callback string
	client := &http.Client{Jar: b.client.Jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), s.base+"/auth/oidc/callback") {
			callback = req.URL.String()
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, err := client.Get(s.base + "/auth/oidc/start")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if callback == "" {
		t.Fatal("the provider did not send the browser to the callback")
	}
	return callback
}

// TestSSOSignIn: the whole flow against mockoidc. The signed-out page learns SSO is offered; a
// listed teammate signs in (PKCE, state, nonce, the ID token verified) and gets a NEW person
// credential each time, handed in the fragment; the link is listed; an agent sees none of it;
// unknown and unverified people are refused with a page that says why; a callback is taken once,
// and only by the browser that started it.
func TestSSOSignIn(t *testing.T) {
	p := startIDP(t)
	s := startSSOServer(t, p, "--oidc-allow", "ada@example.com, @team.example", "--oidc-owner", "sub:owner-1")
	_, db := s.seed(t)
	credOf := func(token string) *ask.Credential {
		t.Helper()
		c, err := db.CredentialByTokenHash(context.Background(), gate.Hash(token))
		if err != nil {
			t.Fatalf("the credential of a sign-in: %v", err)
		}
		return c
	}

	status := decode[map[string]any](t, s.do(t, "GET", "/api/v1/sso", "", ""))
	if status["enabled"] != true || status["provider"] != "Mock IdP" || status["startUrl"] != "/auth/oidc/start" {
		t.Fatalf("GET /api/v1/sso: %v", status)
	}
	if !strings.Contains(s.out.String(), s.base+"/auth/oidc/callback") {
		t.Errorf("serve does not print the redirect URI to register:\n%s", s.out.String())
	}

	// A listed teammate, first sign-in: a new person of the space.
	p.QueueUser(&mockoidc.MockUser{Subject: "ada-1", Email: "ada@example.com", EmailVerified: true, PreferredUsername: "ada"})
	b := newSSOBrowser(t, s.base)
	first, code, page := b.signIn(s.base)
	if first == "" {
		t.Fatalf("ada's sign-in: %d\n%s\nlog:\n%s", code, page, s.log.String())
	}
	who := decode[map[string]any](t, s.do(t, "GET", "/api/v1/whoami", first, ""))
	if c := credOf(first); c.Role != ask.RolePerson || who["space"] != LocalSpace {
		t.Fatalf("whoami after SSO: %v, role %s", who, c.Role)
	}
	actor, _ := who["actor"].(map[string]any)
	if actor["id"] != "person:ada@example.com" || actor["name"] != "ada" {
		t.Fatalf("ada signs in as %v", actor)
	}
	if strings.Contains(s.log.String(), first) {
		t.Error("the log holds the credential the sign-in made")
	}

	// Again, from another browser: the same person, a new credential of its own.
	p.QueueUser(&mockoidc.MockUser{Subject: "ada-1", Email: "ada@example.com", EmailVerified: true, PreferredUsername: "ada"})
	second, code, page := newSSOBrowser(t, s.base).signIn(s.base)
	if second == "" || second == first {
		t.Fatalf("ada's second sign-in: %d %q\n%s", code, second, page)
	}
	who2 := decode[map[string]any](t, s.do(t, "GET", "/api/v1/whoami", second, ""))
	if a2, _ := who2["actor"].(map[string]any); a2["id"] != actor["id"] || credOf(second).ID == credOf(first).ID {
		t.Fatalf("the second sign-in: %v, the first %v", who2, who)
	}
	if list := s.cli(t, "token", "list"); !strings.Contains(list, credOf(first).ID) || !strings.Contains(list, credOf(second).ID) {
		t.Errorf("loopback token list does not show both of ada's sign-ins:\n%s", list)
	}

	// The owner, by subject.
	p.QueueUser(&mockoidc.MockUser{Subject: "owner-1", Email: "me@example.net", EmailVerified: true})
	ownerSSO, code, page := newSSOBrowser(t, s.base).signIn(s.base)
	if ownerSSO == "" {
		t.Fatalf("the owner's sign-in: %d\n%s", code, page)
	}
	if c := credOf(ownerSSO); c.Role != ask.RoleOwner || c.Person.ID != credOf(ownerToken).Person.ID {
		t.Fatalf("the owner signs in as %+v", c)
	}

	// Nobody listed: refused, with a page that says why and what to do.
	p.QueueUser(&mockoidc.MockUser{Subject: "eve-1", Email: "eve@elsewhere.example", EmailVerified: true})
	if tok, code, page := newSSOBrowser(t, s.base).signIn(s.base); tok != "" || code != 403 ||
		!strings.Contains(page, "eve@elsewhere.example") || !strings.Contains(page, "has not let that account in") {
		t.Fatalf("an unknown person: %q %d\n%s", tok, code, page)
	}
	// A listed address the provider has not verified: refused too.
	p.QueueUser(&mockoidc.MockUser{Subject: "mallory-1", Email: "ada@example.com", EmailVerified: false})
	if tok, code, page := newSSOBrowser(t, s.base).signIn(s.base); tok != "" || code != 403 || !strings.Contains(page, "not verified") {
		t.Fatalf("an unverified address: %q %d\n%s", tok, code, page)
	}
	// A whole domain.
	p.QueueUser(&mockoidc.MockUser{Subject: "grace-1", Email: "grace@team.example", EmailVerified: true})
	if tok, code, page := newSSOBrowser(t, s.base).signIn(s.base); tok == "" {
		t.Fatalf("a listed domain: %d\n%s", code, page)
	}

	// A callback is taken once, and only by the browser that started it.
	p.QueueUser(&mockoidc.MockUser{Subject: "ada-1", Email: "ada@example.com", EmailVerified: true})
	starter := newSSOBrowser(t, s.base)
	callback := starter.lastCallback(t, p, s)
	if tok, code, page := newSSOBrowser(t, s.base).get(callback); tok != "" || code != 400 || !strings.Contains(page, "did not start this sign-in") {
		t.Fatalf("another browser's callback: %q %d\n%s", tok, code, page)
	}
	if tok, code, _ := starter.get(callback); tok == "" {
		t.Fatalf("the starting browser's callback: %d", code)
	}
	if tok, code, _ := starter.get(callback); tok != "" || code != 400 {
		t.Fatalf("the callback replayed: %q %d", tok, code)
	}

	// The links: the owner sees every one, ada her own, an agent none.
	links := decode[struct {
		Items []map[string]any `json:"items"`
	}](t, s.do(t, "GET", "/api/v1/sso/links", ownerToken, ""))
	if len(links.Items) != 3 {
		t.Fatalf("the owner's links: %v", links.Items)
	}
	mine := decode[struct {
		Items []map[string]any `json:"items"`
	}](t, s.do(t, "GET", "/api/v1/sso/links", first, ""))
	if len(mine.Items) != 1 || mine.Items[0]["email"] != "ada@example.com" || mine.Items[0]["lastSignInAt"] == nil {
		t.Fatalf("ada's links: %v", mine.Items)
	}
	adaLink, _ := mine.Items[0]["id"].(string)
	agent := s.agentToken(t)
	if r := s.do(t, "GET", "/api/v1/sso/links", agent, ""); r.status != 403 {
		t.Errorf("an agent listing links: %d", r.status)
	}
	if r := s.do(t, "DELETE", "/api/v1/sso/links/"+adaLink, agent, ""); r.status != 403 {
		t.Errorf("an agent unlinking: %d", r.status)
	}
	// Revoking: unlink, and revoke the credentials the sign-ins made.
	if r := s.do(t, "DELETE", "/api/v1/sso/links/"+adaLink, ownerToken, ""); r.status != 204 {
		t.Fatalf("the owner unlinking ada: %d %s", r.status, r.body)
	}
	if r := s.do(t, "DELETE", "/api/v1/sso/links/"+adaLink, ownerToken, ""); r.status != 404 {
		t.Errorf("unlinking again: %d", r.status)
	}
	s.cli(t, "token", "revoke", credOf(first).ID)
	if r := s.do(t, "GET", "/api/v1/whoami", first, ""); r.status != 401 {
		t.Errorf("a revoked SSO credential: %d", r.status)
	}
	if r := s.do(t, "GET", "/api/v1/whoami", second, ""); r.status != 200 {
		t.Errorf("ada's other device after revoking one: %d", r.status)
	}
}

// TestSSORefusesForgedTokens: an ID token not signed by the provider's keys, one for another
// client (audience), one with another sign-in's nonce and one from another issuer are refused,
// and nothing is issued.
func TestSSORefusesForgedTokens(t *testing.T) {
	p := startIDP(t)
	s := startSSOServer(t, p, "--oidc-allow", "ada@example.com")
	other, err := mockoidc.RandomKeypair(2048)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		tamper func(jwt.MapClaims) (string, error)
	}{
		{"signed by another key", func(c jwt.MapClaims) (string, error) { return other.SignJWT(c) }},
		{"for another client", func(c jwt.MapClaims) (string, error) { c["aud"] = "someone-else"; return p.Keypair.SignJWT(c) }},
		{"with another nonce", func(c jwt.MapClaims) (string, error) { c["nonce"] = "not-this-sign-in"; return p.Keypair.SignJWT(c) }},
		{"from another issuer", func(c jwt.MapClaims) (string, error) {
			c["iss"] = "https://evil.example"
			return p.Keypair.SignJWT(c)
		}},
		{"expired", func(c jwt.MapClaims) (string, error) {
			c["exp"] = time.Now().Add(-time.Hour).Unix()
			return p.Keypair.SignJWT(c)
		}},
		{"unsigned", func(c jwt.MapClaims) (string, error) {
			return jwt.NewWithClaims(jwt.SigningMethodNone, c).SignedString(jwt.UnsafeAllowNoneSignatureType)
		}},
	}
	// The credentials before the forged sign-ins, by ID: a random ID may hold any letters (one
	// held "ada"), so the list is compared by its IDs, not searched for a name.
	credIDs := func() string {
		var ids []string
		for _, line := range strings.Split(strings.TrimSpace(s.cli(t, "token", "list")), "\n")[1:] {
			ids = append(ids, strings.Fields(line)[0])
		}
		return strings.Join(ids, " ")
	}
	before := credIDs()
	for _, tc := range cases {
		p.setTamper(tc.tamper)
		p.QueueUser(&mockoidc.MockUser{Subject: "ada-1", Email: "ada@example.com", EmailVerified: true})
		tok, code, page := newSSOBrowser(t, s.base).signIn(s.base)
		if tok != "" || code != 401 || !strings.Contains(page, "did not verify") {
			t.Errorf("an ID token %s: %q %d\n%s", tc.name, tok, code, page)
		}
	}
	p.setTamper(nil)
	if after := credIDs(); after != before {
		t.Errorf("a forged token left a credential: %s before, %s after", before, after)
	}
	// The same provider, untampered: signs in.
	p.QueueUser(&mockoidc.MockUser{Subject: "ada-1", Email: "ada@example.com", EmailVerified: true})
	if tok, code, page := newSSOBrowser(t, s.base).signIn(s.base); tok == "" {
		t.Fatalf("the genuine token: %d\n%s", code, page)
	}
	if credIDs() == before {
		t.Errorf("the genuine sign-in's credential is not in the list: %s", before)
	}
}

// TestSSOOff: without an issuer the page is told SSO is off and the protocol's pages do not
// exist; settings that do not parse stop serve with a clear word.
func TestSSOOff(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken})
	if st := decode[map[string]any](t, s.do(t, "GET", "/api/v1/sso", "", "")); st["enabled"] != false || st["provider"] != nil {
		t.Fatalf("GET /api/v1/sso without SSO: %v", st)
	}
	resp, err := http.Get(s.base + "/auth/oidc/start")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusFound {
		t.Errorf("/auth/oidc/start without SSO redirects")
	}
	for _, flags := range [][]string{
		{"--oidc-issuer", "http://idp.example.com", "--oidc-client-id", "x"}, // http off this machine
		{"--oidc-issuer", "https://idp.example.com"},                         // no client id
		{"--oidc-issuer", "https://idp.example.com", "--oidc-client-id", "x", "--oidc-allow", "not an address"},
		{"--oidc-client-id", "x"}, // no issuer
	} {
		var out, errOut bytes.Buffer
		err := serve(t.Context(), append([]string{"--addr", "127.0.0.1:0", "--data", t.TempDir()}, flags...), &out, &errOut, nil)
		if err == nil || !strings.Contains(err.Error(), "single sign-on") {
			t.Errorf("serve %v: %v", flags, err)
		}
	}
}

// TestSSOCallbacksAreThrottled: callbacks that do not verify count as failed sign-ins from their
// address, as wrong tokens do: past the budget, 429 with Retry-After.
func TestSSOCallbacksAreThrottled(t *testing.T) {
	p := startIDP(t)
	s := startSSOServer(t, p, "--max-auth-failures", "2")
	var last *http.Response
	for range 3 {
		resp, err := http.Get(s.base + "/auth/oidc/callback?state=guessed&code=guessed")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		last = resp
		if resp.StatusCode != 400 && resp.StatusCode != 429 {
			t.Fatalf("a forged callback: %d", resp.StatusCode)
		}
	}
	if last.StatusCode != 429 || last.Header.Get("Retry-After") == "" {
		t.Fatalf("the third forged callback: %d Retry-After %q", last.StatusCode, last.Header.Get("Retry-After"))
	}
}

// TestSSOStartsAreThrottled: each sign-in started keeps its state until it expires, so an address
// may start gate.MaxStartsPerMinute a minute; the next is a 429 page with Retry-After, which sends
// the browser nowhere.
func TestSSOStartsAreThrottled(t *testing.T) {
	p := startIDP(t)
	s := startSSOServer(t, p)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	start := func() *http.Response {
		resp, err := client.Get(s.base + "/auth/oidc/start")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for i := range gate.MaxStartsPerMinute {
		if resp := start(); resp.StatusCode != http.StatusFound {
			t.Fatalf("start %d: %d", i+1, resp.StatusCode)
		}
	}
	resp := start()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || resp.Header.Get("Location") != "" {
		t.Fatalf("start %d: %d, Retry-After %q, Location %q", gate.MaxStartsPerMinute+1, resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Location"))
	}
}
