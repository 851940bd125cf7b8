package oauth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/oauth"
	"github.com/loopback-hq/loopback/shared/sqlite"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
)

// harness is the authorization server on real SQLite, served over HTTP, with a person of space
// "s" to approve, and a clock the test moves.
type harness struct {
	t      *testing.T
	db     *sqlite.DB
	as     *oauth.Server
	gate   *gate.Gate
	srv    *httptest.Server
	public string
	owner  *ask.Credential

	mu  sync.Mutex
	now time.Time
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	h := &harness{t: t, db: db, now: ask.Truncate(time.Now())}
	h.gate = &gate.Gate{Credentials: db, OAuth: db, Now: h.clock}
	mux := http.NewServeMux()
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	h.public = h.srv.URL
	h.as = oauth.New(oauth.Config{
		Store: db, Credentials: db, Now: h.clock,
		PublicURL: func(*http.Request) string { return h.public },
	})
	mux.Handle("/", h.as.Handler())
	var err error
	_, h.owner, err = gate.Issue(ctx, db, ask.Credential{Space: "s", Role: ask.RoleOwner, Actor: ask.Actor{ID: "ada", Name: "Ada"}, Person: ask.Actor{ID: "ada", Name: "Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) clock() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now
}

func (h *harness) advance(d time.Duration) {
	h.mu.Lock()
	h.now = h.now.Add(d)
	h.mu.Unlock()
}

// browser is a cookie-keeping client that does not follow redirects.
func (h *harness) browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (h *harness) getJSON(path string, into any) *http.Response {
	h.t.Helper()
	resp, err := http.Get(h.public + path)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	if into != nil {
		if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
			h.t.Fatalf("GET %s: %v", path, err)
		}
	}
	return resp
}

func (h *harness) register(uris ...string) string {
	h.t.Helper()
	body, _ := json.Marshal(map[string]any{"client_name": "Cursor", "redirect_uris": uris, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}})
	resp, err := http.Post(h.public+"/oauth/register", "application/json", strings.NewReader(string(body)))
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != 201 {
		h.t.Fatalf("register: %d %v", resp.StatusCode, out)
	}
	return out["client_id"].(string)
}

const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-0123456789"

func challenge(v string) string {
	s := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(s[:])
}

// authorizeURL is a well-formed authorization request; over changes or drops (""), parameters.
func (h *harness) authorizeURL(client, redirect string, over map[string]string) string {
	q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect}, "state": {"st-1"},
		"code_challenge": {challenge(verifier)}, "code_challenge_method": {"S256"}, "scope": {"mcp"}, "resource": {h.public + "/mcp"}}
	for k, v := range over {
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
	}
	return h.public + "/oauth/authorize?" + q.Encode()
}

// start runs the browser to the waiting page and returns the request's id.
func (h *harness) start(b *http.Client, authorize string) string {
	h.t.Helper()
	resp, err := b.Get(authorize)
	if err != nil {
		h.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		h.t.Fatalf("authorize: %d, want 303 to the waiting page", resp.StatusCode)
	}
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if loc.Path != "/oauth/continue" {
		h.t.Fatalf("authorize sent the browser to %s", loc)
	}
	return loc.Query().Get("request")
}

// finish has the browser look at its waiting page after the decision: the redirect it gets.
func (h *harness) finish(b *http.Client, id string) *url.URL {
	h.t.Helper()
	resp, err := b.Get(h.public + "/oauth/continue?request=" + url.QueryEscape(id))
	if err != nil {
		h.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		h.t.Fatalf("continue: %d %s, want 302 to the client", resp.StatusCode, body)
	}
	u, _ := url.Parse(resp.Header.Get("Location"))
	return u
}

// code runs the whole browser side with an approval and returns the code.
func (h *harness) code(client, redirect string) string {
	h.t.Helper()
	b := h.browser()
	id := h.start(b, h.authorizeURL(client, redirect, nil))
	if _, err := h.as.Decide(context.Background(), h.owner, id, oauth.ConnectDecision{Decision: "approve"}); err != nil {
		h.t.Fatal(err)
	}
	back := h.finish(b, id)
	if got := back.Query().Get("iss"); got != h.public {
		h.t.Fatalf("iss %q, want %q (RFC 9207)", got, h.public)
	}
	if got := back.Query().Get("state"); got != "st-1" {
		h.t.Fatalf("state %q", got)
	}
	return back.Query().Get("code")
}

type tokens struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
	Error        string `json:"error"`
	Description  string `json:"error_description"`
}

func (h *harness) post(path string, form url.Values) (int, tokens) {
	h.t.Helper()
	resp, err := http.PostForm(h.public+path, form)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out tokens
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func (h *harness) exchange(client, redirect, code string) tokens {
	h.t.Helper()
	status, tok := h.post("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {client},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "resource": {h.public + "/mcp/"}})
	if status != 200 {
		h.t.Fatalf("token: %d %+v", status, tok)
	}
	return tok
}

func TestMetadataDiscovery(t *testing.T) {
	h := newHarness(t)
	var prm, root, as map[string]any
	if resp := h.getJSON("/.well-known/oauth-protected-resource/mcp", &prm); resp.StatusCode != 200 {
		t.Fatalf("path-inserted metadata: %d", resp.StatusCode)
	}
	if prm["resource"] != h.public+"/mcp" {
		t.Errorf("path-inserted resource %v, want %s/mcp (RFC 9728 §3.3)", prm["resource"], h.public)
	}
	if auths, _ := prm["authorization_servers"].([]any); len(auths) != 1 || auths[0] != h.public {
		t.Errorf("authorization_servers %v", prm["authorization_servers"])
	}
	h.getJSON("/.well-known/oauth-protected-resource", &root)
	if root["resource"] != h.public {
		t.Errorf("root resource %v, want the origin %s", root["resource"], h.public)
	}
	h.getJSON("/.well-known/oauth-authorization-server", &as)
	want := map[string]any{
		"issuer": h.public, "authorization_endpoint": h.public + "/oauth/authorize", "token_endpoint": h.public + "/oauth/token",
		"registration_endpoint": h.public + "/oauth/register", "authorization_response_iss_parameter_supported": true,
		"client_id_metadata_document_supported": true,
	}
	for k, v := range want {
		if as[k] != v {
			t.Errorf("AS metadata %s = %v, want %v", k, as[k], v)
		}
	}
	if m, _ := json.Marshal(as["code_challenge_methods_supported"]); string(m) != `["S256"]` {
		t.Errorf("code_challenge_methods_supported %s, want only S256", m)
	}
	if m, _ := json.Marshal(as["token_endpoint_auth_methods_supported"]); string(m) != `["none"]` {
		t.Errorf("token_endpoint_auth_methods_supported %s", m)
	}
	if resp := h.getJSON("/.well-known/openid-configuration", nil); resp.StatusCode != 404 {
		t.Errorf("OpenID discovery: %d, want 404 (no ID tokens here)", resp.StatusCode)
	}
}

func TestChallenge(t *testing.T) {
	got := oauth.Challenge("https://lb.example", 401, "")
	if got != `Bearer resource_metadata="https://lb.example/.well-known/oauth-protected-resource/mcp", scope="mcp"` {
		t.Errorf("401 challenge: %s", got)
	}
	if got := oauth.Challenge("https://lb.example", 403, `lacks "mcp"`); !strings.Contains(got, `error="insufficient_scope"`) ||
		!strings.Contains(got, `scope="mcp"`) || strings.Count(got, `"`)%2 != 0 {
		t.Errorf("403 challenge: %s", got)
	}
}

func TestDCRAcceptsCursorsThreeRedirects(t *testing.T) {
	h := newHarness(t)
	uris := []string{"cursor://anysphere.cursor-mcp/oauth/callback", "http://localhost:56789/callback", "https://cursor.com/oauth/mcp/callback"}
	client := h.register(uris...)
	for _, u := range uris {
		if code := h.code(client, u); !strings.HasPrefix(code, "lb_ac_") {
			t.Errorf("%s: code %q", u, code)
		}
	}
	for _, bad := range [][]string{{"javascript:alert(1)"}, {"http://evil.example/cb"}, {"https://ok.example/cb", "data:text/html,x"}, {}} {
		body, _ := json.Marshal(map[string]any{"redirect_uris": bad})
		resp, err := http.Post(h.public+"/oauth/register", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		var e tokens
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != 400 || e.Error != "invalid_redirect_uri" {
			t.Errorf("register %v: %d %+v, want 400 invalid_redirect_uri", bad, resp.StatusCode, e)
		}
	}
}

func TestAuthorizeRefusals(t *testing.T) {
	h := newHarness(t)
	client := h.register("http://127.0.0.1:33418/", "http://127.0.0.1/callback")
	b := h.browser()
	back := func(over map[string]string) url.Values {
		t.Helper()
		resp, err := b.Get(h.authorizeURL(client, "http://127.0.0.1:33418/", over))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			t.Fatalf("%v: %d, want 302 back to the client", over, resp.StatusCode)
		}
		u, _ := url.Parse(resp.Header.Get("Location"))
		if u.Query().Get("iss") != h.public || u.Query().Get("state") != "st-1" {
			t.Errorf("%v: error response without iss or state: %s", over, u)
		}
		return u.Query()
	}
	for _, c := range []struct {
		over map[string]string
		want string
	}{
		{map[string]string{"code_challenge": ""}, "invalid_request"},
		{map[string]string{"code_challenge_method": "plain"}, "invalid_request"},
		{map[string]string{"code_challenge_method": ""}, "invalid_request"},
		{map[string]string{"response_type": "token"}, "unsupported_response_type"},
		{map[string]string{"scope": "mcp admin"}, "invalid_scope"},
		{map[string]string{"resource": "https://other.example/mcp"}, "invalid_target"},
	} {
		if got := back(c.over).Get("error"); got != c.want {
			t.Errorf("%v: error %q, want %q", c.over, got, c.want)
		}
	}
	// An unknown client or a redirect it did not register is shown to the person, never redirected.
	for _, u := range []string{
		h.authorizeURL("client_nope", "http://127.0.0.1:33418/", nil),
		h.authorizeURL(client, "http://evil.example/", nil),
		h.authorizeURL(client, "http://127.0.0.1:9/other", nil),
	} {
		resp, err := b.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 || resp.Header.Get("Location") != "" {
			t.Errorf("%s: %d %s, want 400 with no redirect", u, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	// Loopback redirects match with any port (VS Code's random one), any loopback name, and
	// Codex's /callback/<id>; the trailing slash Claude Code puts on resource is tolerated.
	for _, r := range []string{"http://127.0.0.1:50123/", "http://localhost:50999/", "http://127.0.0.1:61000/callback/6MFBM1In3Ey-"} {
		id := h.start(h.browser(), h.authorizeURL(client, r, map[string]string{"resource": h.public + "/mcp/"}))
		if id == "" {
			t.Errorf("%s: no request", r)
		}
	}
}

func TestCodeFlowGivesAnAgentCredentialOwnedByThePerson(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	redirect := "http://127.0.0.1:40000/callback"
	client := h.register(redirect)
	code := h.code(client, redirect)
	tok := h.exchange(client, redirect, code)
	if tok.TokenType != "Bearer" || tok.ExpiresIn != 3600 || tok.Scope != "mcp" || !strings.HasPrefix(tok.AccessToken, "lb_at_") || tok.RefreshToken == "" {
		t.Fatalf("tokens %+v", tok)
	}
	cred, err := h.gate.Check(ctx, tok.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if cred.Role != ask.RoleAgent || cred.Person.ID != "ada" || cred.Actor.Name != "Cursor" || cred.Client != client || cred.Space != "s" {
		t.Errorf("credential %+v: want an agent of s owned by ada, named Cursor, for %s", cred, client)
	}
	if err := cred.ForPerson(); err == nil {
		t.Error("the OAuth-made credential may act as a person")
	}
	if err := oauth.CheckAudience(h.public, cred.Grant); err != nil {
		t.Errorf("audience: %v", err)
	}
	if err := oauth.CheckAudience("https://other.example", cred.Grant); ask.ErrorCode(err) != ask.EUnauthorized {
		t.Errorf("a token for another resource: %v, want 401", err)
	}
	if err := oauth.CheckAudience(h.public, &ask.Grant{Resource: h.public + "/mcp", Scope: "other"}); ask.ErrorCode(err) != ask.EForbidden {
		t.Errorf("a token without the mcp scope: %v, want 403", err)
	}
	// The code works once; shown again it is refused, and the tokens it gave are dead too.
	status, again := h.post("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {client},
		"redirect_uri": {redirect}, "code_verifier": {verifier}})
	if status != 400 || again.Error != "invalid_grant" {
		t.Errorf("code replay: %d %+v", status, again)
	}
	if _, err := h.gate.Check(ctx, tok.AccessToken); ask.ErrorCode(err) != ask.EUnauthorized {
		t.Errorf("after a code replay the access token still opens: %v", err)
	}
}

func TestTokenRefusesWithoutPKCE(t *testing.T) {
	h := newHarness(t)
	redirect := "http://127.0.0.1:40000/callback"
	client := h.register(redirect)
	for _, form := range []url.Values{
		{"code_verifier": {""}},
		{"code_verifier": {strings.Repeat("a", 50)}},
		{"client_id": {"client_other"}},
		{"redirect_uri": {"http://127.0.0.1:40000/other"}},
		{"resource": {"https://other.example/mcp"}},
	} {
		code := h.code(client, redirect)
		f := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {client}, "redirect_uri": {redirect}, "code_verifier": {verifier}}
		for k, v := range form {
			f[k] = v
		}
		if status, tok := h.post("/oauth/token", f); status != 400 || (tok.Error != "invalid_grant" && tok.Error != "invalid_target") {
			t.Errorf("%v: %d %+v, want 400", form, status, tok)
		}
	}
	// An expired code.
	code := h.code(client, redirect)
	h.advance(oauth.CodeTTL + time.Second)
	if status, tok := h.post("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {client},
		"redirect_uri": {redirect}, "code_verifier": {verifier}}); status != 400 || tok.Error != "invalid_grant" {
		t.Errorf("expired code: %d %+v", status, tok)
	}
}

func TestRefreshRotationUnderConcurrentRefreshes(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	redirect := "http://localhost:40000/callback"
	client := h.register(redirect)
	tok := h.exchange(client, redirect, h.code(client, redirect))

	// Several processes of one client refresh with the same token at once: each gets a pair.
	const n = 6
	var wg sync.WaitGroup
	got := make([]tokens, n)
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], got[i] = h.post("/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken},
				"client_id": {client}, "resource": {h.public + "/mcp/"}})
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for i := range n {
		if codes[i] != 200 || got[i].ExpiresIn != 3600 || got[i].RefreshToken == tok.RefreshToken {
			t.Fatalf("refresh %d: %d %+v", i, codes[i], got[i])
		}
		if seen[got[i].RefreshToken] {
			t.Fatalf("two refreshes got the same refresh token")
		}
		seen[got[i].RefreshToken] = true
		if _, err := h.gate.Check(ctx, got[i].AccessToken); err != nil {
			t.Errorf("refreshed access token %d: %v", i, err)
		}
	}
	// After the grace, the rotated token is a replay: refused, and its family ends.
	h.advance(oauth.RefreshGrace + time.Second)
	if status, e := h.post("/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {client}}); status != 400 || e.Error != "invalid_grant" {
		t.Fatalf("replay after the grace: %d %+v", status, e)
	}
	if status, e := h.post("/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {got[0].RefreshToken}, "client_id": {client}}); status != 400 || e.Error != "invalid_grant" {
		t.Errorf("the family's newest token after a replay: %d %+v, want invalid_grant", status, e)
	}
}

func TestRevokingTheCredentialKillsItsTokens(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	redirect := "http://localhost:40000/callback"
	client := h.register(redirect)
	tok := h.exchange(client, redirect, h.code(client, redirect))
	cred, err := h.gate.Check(ctx, tok.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if err := ask.NewService(h.db).Revoke(ctx, h.db, h.db, "s", cred.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.gate.Check(ctx, tok.AccessToken); ask.ErrorCode(err) != ask.EUnauthorized {
		t.Errorf("a revoked credential's access token: %v, want 401", err)
	}
	if status, e := h.post("/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {client}}); status != 400 || e.Error != "invalid_grant" {
		t.Errorf("a revoked credential's refresh token: %d %+v", status, e)
	}
	// RFC 7009 revocation of a refresh token ends the pair.
	tok2 := h.exchange(client, redirect, h.code(client, redirect))
	if status, _ := h.post("/oauth/revoke", url.Values{"token": {tok2.RefreshToken}, "client_id": {client}}); status != 200 {
		t.Fatalf("revoke: %d", status)
	}
	if _, err := h.gate.Check(ctx, tok2.AccessToken); ask.ErrorCode(err) != ask.EUnauthorized {
		t.Errorf("after revoking its refresh token the access token: %v", err)
	}
	// An access token expires.
	tok3 := h.exchange(client, redirect, h.code(client, redirect))
	h.advance(oauth.AccessTTL)
	if _, err := h.gate.Check(ctx, tok3.AccessToken); ask.ErrorCode(err) != ask.EUnauthorized {
		t.Errorf("an expired access token: %v", err)
	}
}

func TestConsentIsTheStartingBrowsers(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	redirect := "http://localhost:40000/callback"
	client := h.register(redirect)
	starter := h.browser()
	id := h.start(starter, h.authorizeURL(client, redirect, nil))

	// The waiting page shows the code the consent page shows.
	resp, err := starter.Get(h.public + "/oauth/continue?request=" + id)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	view, err := h.as.Consent(ctx, h.owner, id)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.Contains(string(page), view.MatchCode) || len(view.MatchCode) != 9 {
		t.Fatalf("waiting page %d does not show the code %q", resp.StatusCode, view.MatchCode)
	}
	if view.Client.Name != "Cursor" || view.Client.VerifiedHost != "" || view.RedirectHost != "localhost:40000" || view.Scope != "mcp" || view.Status != "pending" {
		t.Errorf("consent view %+v", view)
	}
	// An agent may not consent; nor may anyone decide twice.
	agentTok, agent, err := gate.Issue(ctx, h.db, ask.Credential{Space: "s", Role: ask.RoleAgent, Actor: ask.Actor{ID: "bot"}, Person: ask.Actor{ID: "ada"}})
	if err != nil || agentTok == "" {
		t.Fatal(err)
	}
	if _, err := h.as.Decide(ctx, agent, id, oauth.ConnectDecision{Decision: "approve"}); ask.ErrorCode(err) != ask.EForbidden {
		t.Errorf("an agent approving: %v, want forbidden", err)
	}
	if _, err := h.as.Decide(ctx, h.owner, id, oauth.ConnectDecision{Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.as.Decide(ctx, h.owner, id, oauth.ConnectDecision{Decision: "refuse"}); ask.ErrorCode(err) != ask.EConsentDecided {
		t.Errorf("deciding twice: %v", err)
	}
	// Another space's person sees nothing of it once decided.
	_, other, _ := gate.Issue(ctx, h.db, ask.Credential{Space: "t", Role: ask.RoleOwner, Actor: ask.Actor{ID: "eve"}})
	if _, err := h.as.Consent(ctx, other, id); ask.ErrorCode(err) != ask.EConsentNotFound {
		t.Errorf("another space reading a decided request: %v", err)
	}
	// Another browser gets no code.
	resp, err = h.browser().Get(h.public + "/oauth/continue?request=" + id)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get("Location") != "" {
		t.Errorf("another browser: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	code := h.finish(starter, id).Query().Get("code")
	if code == "" {
		t.Error("the starting browser got no code")
	}
	// Looking again (a reload; a service worker's navigation preload, then its own fetch) gives
	// the same code, not one that replaces the first.
	if again := h.finish(starter, id).Query().Get("code"); again != code {
		t.Errorf("a second look gave code %q, want the first, %q", again, code)
	}
	// A refusal goes back as access_denied.
	id2 := h.start(starter, h.authorizeURL(client, redirect, nil))
	if _, err := h.as.Decide(ctx, h.owner, id2, oauth.ConnectDecision{Decision: "refuse"}); err != nil {
		t.Fatal(err)
	}
	if e := h.finish(starter, id2).Query(); e.Get("error") != "access_denied" || e.Get("code") != "" || e.Get("iss") != h.public {
		t.Errorf("refused: %v", e)
	}
	// A request nobody decided expires.
	id3 := h.start(starter, h.authorizeURL(client, redirect, nil))
	h.advance(oauth.RequestTTL)
	if _, err := h.as.Decide(ctx, h.owner, id3, oauth.ConnectDecision{Decision: "approve"}); ask.ErrorCode(err) != ask.EConsentExpired {
		t.Errorf("approving an expired request: %v", err)
	}
}

// TestStartsAreBoundedPerAddress: registrations and requests to connect each keep a row, so one
// address may start at most MaxStartsPerMinute a minute; then 429 with Retry-After.
func TestStartsAreBoundedPerAddress(t *testing.T) {
	h := newHarness(t)
	client := h.register("http://127.0.0.1/callback")
	for i := 1; i < oauth.MaxStartsPerMinute; i++ {
		h.start(h.browser(), h.authorizeURL(client, "http://127.0.0.1:40001/callback", nil))
	}
	resp, err := h.browser().Get(h.authorizeURL(client, "http://127.0.0.1:40001/callback", nil))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("start %d: %d (Retry-After %q), want 429", oauth.MaxStartsPerMinute+1, resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	body, _ := json.Marshal(map[string]any{"redirect_uris": []string{"http://127.0.0.1/cb"}})
	resp, err = http.Post(h.public+"/oauth/register", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a registration over the budget: %d, want 429", resp.StatusCode)
	}
}
