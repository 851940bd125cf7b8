package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/gate"
)

// TestMCPOAuthWithTheURLAlone: mcp-go's OAuth client, given the MCP URL and nothing else, is
// challenged, discovers the authorization server, registers, sends "the browser" to the
// authorization endpoint; the person approves through the consent API (as the inbox's page does),
// matching the code the starting browser shows; the browser gets the code; the client redeems
// it and calls a tool as an agent owned by the person. Revoking the agent ends its tokens.
func TestMCPOAuthWithTheURLAlone(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// The 401 names the metadata and the scope.
	r, err := http.Post(s.base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if got := r.Header.Get("WWW-Authenticate"); r.StatusCode != 401 ||
		got != `Bearer resource_metadata="`+s.base+`/.well-known/oauth-protected-resource/mcp", scope="mcp"` {
		t.Fatalf("unauthenticated /mcp: %d WWW-Authenticate %q", r.StatusCode, got)
	}
	if !strings.Contains(s.out.String(), "claude mcp add --transport http loopback "+s.base+"/mcp\n") {
		t.Errorf("the welcome does not print the URL-only way:\n%s", s.out.String())
	}

	redirect := "http://127.0.0.1:47123/callback"
	tokens := client.NewMemoryTokenStore()
	c, err := client.NewOAuthStreamableHttpClient(s.base+"/mcp", client.OAuthConfig{
		RedirectURI: redirect, Scopes: []string{"mcp"}, PKCEEnabled: true, TokenStore: tokens,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "oauth-e2e", Version: "1.0"}
	_, err = c.Initialize(ctx, init)
	if !client.IsOAuthAuthorizationRequiredError(err) {
		t.Fatalf("initialize without a token: %v, want OAuth authorization required", err)
	}
	h := client.GetOAuthHandler(err)
	if err := h.RegisterClient(ctx, "OAuth e2e agent"); err != nil {
		t.Fatalf("registering: %v", err)
	}
	verifier, err := client.GenerateCodeVerifier()
	if err != nil {
		t.Fatal(err)
	}
	state, _ := client.GenerateState()
	authURL, err := h.GetAuthorizationURL(ctx, state, client.GenerateCodeChallenge(verifier))
	if err != nil {
		t.Fatal(err)
	}

	// The browser: it keeps cookies and stops at the client's redirect.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if !strings.HasPrefix(req.URL.String(), s.base) {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	get := func(u string) (*http.Response, string) {
		t.Helper()
		resp, err := browser.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	resp, page := get(authURL)
	if resp.StatusCode != 200 || resp.Request.URL.Path != "/oauth/continue" {
		t.Fatalf("the browser at %s: %d\n%s", resp.Request.URL, resp.StatusCode, page)
	}
	id := resp.Request.URL.Query().Get("request")

	// The person reads the request on the consent page and approves it.
	req := decode[map[string]any](t, s.do(t, "GET", "/api/v1/connect/requests/"+id, ownerToken, ""))
	code, _ := req["matchCode"].(string)
	if code == "" || !strings.Contains(page, code) {
		t.Fatalf("the consent page's code %q is not on the starting browser's page", code)
	}
	if cl, _ := req["client"].(map[string]any); cl["name"] != "OAuth e2e agent" || cl["verifiedHost"] != nil || req["redirectHost"] != "127.0.0.1:47123" {
		t.Errorf("the consent page shows %v", req)
	}
	agentTok := s.agentToken(t)
	if r := s.do(t, "POST", "/api/v1/connect/requests/"+id+"/decision", agentTok, `{"decision":"approve"}`); r.status != 403 {
		t.Errorf("an agent approving: %d", r.status)
	}
	if r := s.do(t, "POST", "/api/v1/connect/requests/"+id+"/decision", ownerToken, `{"decision":"approve"}`); r.status != 200 {
		t.Fatalf("approving: %d %s", r.status, r.body)
	}

	// The starting browser moves on to the client with the code, state and iss.
	resp, _ = get(s.base + "/oauth/continue?request=" + url.QueryEscape(id))
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != 302 || !strings.HasPrefix(loc.String(), redirect) || loc.Query().Get("state") != state || loc.Query().Get("iss") != s.base {
		t.Fatalf("after approval the browser got %d %s", resp.StatusCode, loc)
	}
	if err := h.ProcessAuthorizationResponse(ctx, loc.Query().Get("code"), state, verifier); err != nil {
		t.Fatalf("redeeming the code: %v", err)
	}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize with the token: %v", err)
	}
	var call mcp.CallToolRequest
	call.Params.Name = "get_inbox_link"
	call.Params.Arguments = map[string]any{}
	res, err := c.CallTool(ctx, call)
	if err != nil || res.IsError {
		t.Fatalf("calling a tool: %v %+v", err, res)
	}

	// /mcp checks an OAuth token's audience and scope: a token for another resource is 401, one
	// without the mcp scope 403 insufficient_scope.
	_, db := s.seed(t)
	held, err := tokens.GetToken(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mine, err := db.OAuthTokenByHash(ctx, gate.Hash(held.AccessToken))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		resource, scope string
		status          int
		challenge       string
	}{
		{"https://other.example/mcp", "mcp", 401, `error="invalid_token"`},
		{s.base + "/mcp", "other", 403, `error="insufficient_scope"`},
	} {
		other, hash := gate.NewSecret(gate.AccessTokenPrefix)
		tok := *mine
		tok.Hash, tok.Resource, tok.Scope = hash, c.resource, c.scope
		if err := db.CreateOAuthToken(ctx, &tok); err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("POST", s.base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Authorization", "Bearer "+other)
		req.Header.Set("Content-Type", "application/json")
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if got := r.Header.Get("WWW-Authenticate"); r.StatusCode != c.status || !strings.Contains(got, c.challenge) || !strings.Contains(got, `scope="mcp"`) {
			t.Errorf("a token for %s with scope %q: %d %q", c.resource, c.scope, r.StatusCode, got)
		}
	}

	// The token opens /mcp only: the API and the hooks are other resources.
	if r := s.do(t, "GET", "/api/v1/whoami", held.AccessToken, ""); r.status != 401 {
		t.Errorf("an OAuth access token at the API: %d, want 401", r.status)
	}
	hook, err := http.NewRequest("POST", s.base+"/hooks/claude-code", strings.NewReader(`{"hook_event_name":"PermissionRequest"}`))
	if err != nil {
		t.Fatal(err)
	}
	hook.Header.Set("Authorization", "Bearer "+held.AccessToken)
	hook.Header.Set("Content-Type", "application/json")
	if r, err := http.DefaultClient.Do(hook); err != nil || r.StatusCode != 401 {
		t.Errorf("an OAuth access token at the hooks: %v %v, want 401", err, r)
	} else {
		r.Body.Close()
	}

	// Connected agents lists it, named after the client, owned by the person; revoking it ends
	// the client's tokens at once.
	list := decode[struct {
		Items []struct{ ID, Name, Client string }
	}](t, s.do(t, "GET", "/api/v1/agents", ownerToken, ""))
	var agentID string
	for _, a := range list.Items {
		if a.Name == "OAuth e2e agent" && strings.HasPrefix(a.Client, "client_") {
			agentID = a.ID
		}
	}
	if agentID == "" {
		t.Fatalf("connected agents: %+v", list.Items)
	}
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"token", "list", "--data", s.dir}, &out, &errOut); err != nil || !strings.Contains(out.String(), agentID) {
		t.Errorf("loopback token list does not show %s: %v\n%s", agentID, err, out.String())
	}
	if r := s.do(t, "DELETE", "/api/v1/agents/"+agentID, ownerToken, ""); r.status != 204 {
		t.Fatalf("revoking: %d %s", r.status, r.body)
	}
	if _, err := c.CallTool(ctx, call); err == nil {
		t.Error("a revoked agent's access token still calls tools")
	}
	held, err = tokens.GetToken(ctx)
	if err != nil || held.RefreshToken == "" {
		t.Fatalf("the client holds no refresh token: %v", err)
	}
	if _, err := h.RefreshToken(ctx, held.RefreshToken); err == nil {
		t.Error("a revoked agent's refresh token still refreshes")
	}
}
