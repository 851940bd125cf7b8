package awslocal_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/awslocal"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/dynamo"
)

// TestMCPOAuthOnTheAWSPath: mcp-go's OAuth client, given the MCP URL alone, signs in to the AWS
// deployment's own functions (template.yaml's routes, roles and environment, on moto): the MCP
// function URL's 401 carries the challenge; the metadata, registration, authorization and token
// endpoints are OAuthFunction's on the HTTP API; the person reads and approves the request
// through ApiConnectFunction (the inbox's consent page's API) with the matching code the starting
// browser shows; the client calls a tool. Refreshes of one refresh token at once each get a
// pair; disconnecting the agent refuses its access token at once and kills its refresh tokens.
// No function calls AWS outside its role.
func TestMCPOAuthOnTheAWSPath(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, base, table := startDeployment(t, "oauth", awslocal.Options{})
	owner, _, err := awsrt.Bootstrap(ctx, dynamo.New(moto.DynamoDB(), table), "sp_oauth", "ada")
	if err != nil {
		t.Fatal(err)
	}
	api := func(method, path, token, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}

	r, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if got := r.Header.Get("WWW-Authenticate"); r.StatusCode != 401 ||
		got != `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp", scope="mcp"` {
		t.Fatalf("unauthenticated /mcp: %d WWW-Authenticate %q", r.StatusCode, got)
	}

	redirect := "http://127.0.0.1:47123/callback"
	tokens := client.NewMemoryTokenStore()
	c, err := client.NewOAuthStreamableHttpClient(base+"/mcp", client.OAuthConfig{
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
	init.Params.ClientInfo = mcp.Implementation{Name: "oauth-aws", Version: "1.0"}
	_, err = c.Initialize(ctx, init)
	if !client.IsOAuthAuthorizationRequiredError(err) {
		t.Fatalf("initialize without a token: %v, want OAuth authorization required", err)
	}
	h := client.GetOAuthHandler(err)
	if err := h.RegisterClient(ctx, "AWS OAuth agent"); err != nil {
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
	if !strings.HasPrefix(authURL, base+"/oauth/authorize?") {
		t.Fatalf("the authorization URL %s is not the deployment's (the issuer is the public URL)", authURL)
	}

	// The browser keeps its cookie and stops at the client's redirect.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if !strings.HasPrefix(req.URL.String(), base) {
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

	status, body := api("GET", "/api/v1/connect/requests/"+url.PathEscape(id), owner, "")
	var req map[string]any
	if err := json.Unmarshal(body, &req); status != 200 || err != nil {
		t.Fatalf("the consent API: %d %s", status, body)
	}
	if code, _ := req["matchCode"].(string); code == "" || !strings.Contains(page, code) {
		t.Fatalf("the consent page's code %q is not on the starting browser's page", code)
	}
	if status, body := api("POST", "/api/v1/connect/requests/"+url.PathEscape(id)+"/decision", owner, `{"decision":"approve"}`); status != 200 {
		t.Fatalf("approving: %d %s", status, body)
	}
	resp, _ = get(base + "/oauth/continue?request=" + url.QueryEscape(id))
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != 302 || !strings.HasPrefix(loc.String(), redirect) || loc.Query().Get("state") != state || loc.Query().Get("iss") != base {
		t.Fatalf("after approval the browser got %d %s", resp.StatusCode, loc)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("the code's redirect has Cache-Control %q, want no-store (CloudFront must keep it for no one)", cc)
	}
	if err := h.ProcessAuthorizationResponse(ctx, loc.Query().Get("code"), state, verifier); err != nil {
		t.Fatalf("redeeming the code: %v", err)
	}
	// The code works once.
	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "client_id": {h.GetClientID()},
		"redirect_uri": {redirect}, "code_verifier": {verifier}}
	if again, err := http.PostForm(base+"/oauth/token", form); err != nil || again.StatusCode != 400 {
		t.Fatalf("the code redeemed again: %v %v, want 400", err, again)
	} else {
		again.Body.Close()
	}
	// Redeeming it twice was a replay: the tokens it gave are gone (RFC 6749 §4.1.2). Sign in
	// again, as a client does, from a fresh request.
	if _, err := c.Initialize(ctx, init); !client.IsOAuthAuthorizationRequiredError(err) {
		t.Fatalf("initialize after the code's replay: %v, want the tokens it gave refused", err)
	}
	state, _ = client.GenerateState()
	authURL, err = h.GetAuthorizationURL(ctx, state, client.GenerateCodeChallenge(verifier))
	if err != nil {
		t.Fatal(err)
	}
	resp, _ = get(authURL)
	id = resp.Request.URL.Query().Get("request")
	if status, body := api("POST", "/api/v1/connect/requests/"+url.PathEscape(id)+"/decision", owner, `{"decision":"approve"}`); status != 200 {
		t.Fatalf("approving again: %d %s", status, body)
	}
	resp, _ = get(base + "/oauth/continue?request=" + url.QueryEscape(id))
	loc, _ = url.Parse(resp.Header.Get("Location"))
	if err := h.ProcessAuthorizationResponse(ctx, loc.Query().Get("code"), state, verifier); err != nil {
		t.Fatalf("redeeming the second code: %v", err)
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

	// Six refreshes of one refresh token at once, as from several processes of one client: each
	// gets a pair of its own (the grace), on DynamoDB's conditional rotation.
	held, err := tokens.GetToken(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type pair struct {
		Access  string `json:"access_token"`
		Refresh string `json:"refresh_token"`
		Error   string `json:"error"`
	}
	refresh := func(token string) (int, pair) {
		res, err := http.PostForm(base+"/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token}, "client_id": {h.GetClientID()}})
		if err != nil {
			t.Error(err)
			return 0, pair{}
		}
		defer res.Body.Close()
		var p pair
		_ = json.NewDecoder(res.Body).Decode(&p)
		return res.StatusCode, p
	}
	pairs := make([]pair, 6)
	var wg sync.WaitGroup
	for i := range pairs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var status int
			if status, pairs[i] = refresh(held.RefreshToken); status != 200 {
				t.Errorf("refresh %d of six at once: %d %+v", i, status, pairs[i])
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, p := range pairs {
		seen[p.Access], seen[p.Refresh] = true, true
	}
	if len(seen) != 12 {
		t.Fatalf("six refreshes gave %d distinct tokens, want 12", len(seen))
	}

	// Disconnecting the agent (Connected agents) refuses its tokens at once.
	status, body = api("GET", "/api/v1/agents", owner, "")
	var list struct {
		Items []struct{ ID, Name, Client string }
	}
	if err := json.Unmarshal(body, &list); status != 200 || err != nil {
		t.Fatalf("connected agents: %d %s", status, body)
	}
	var agentID string
	for _, a := range list.Items {
		if a.Name == "AWS OAuth agent" && a.Client == h.GetClientID() {
			agentID = a.ID
		}
	}
	if agentID == "" {
		t.Fatalf("connected agents: %s", body)
	}
	if status, _ := api("POST", "/mcp", pairs[0].Access, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`); status != 200 {
		t.Fatalf("a refreshed access token at /mcp: %d", status)
	}
	if status, body := api("DELETE", "/api/v1/agents/"+agentID, owner, ""); status != 204 {
		t.Fatalf("disconnecting: %d %s", status, body)
	}
	if status, _ := api("POST", "/mcp", pairs[1].Access, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`); status != 401 {
		t.Errorf("a disconnected agent's access token at /mcp: %d, want 401", status)
	}
	if _, err := c.CallTool(ctx, call); err == nil {
		t.Error("a disconnected agent's client still calls tools")
	}
	for _, p := range []string{pairs[2].Refresh, held.RefreshToken} {
		if status, got := refresh(p); status != 400 || got.Error != "invalid_grant" {
			t.Errorf("a disconnected agent's refresh token: %d %+v, want 400 invalid_grant", status, got)
		}
	}

	for id, calls := range d.Calls {
		if m := calls.Missing(); len(m) > 0 {
			t.Errorf("%s called %v, which its role in template.yaml does not allow", id, m)
		}
	}
}
