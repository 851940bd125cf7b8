package mcptools_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/gate"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"curl","version":"8"},"capabilities":{}}}`

// TestGate: /mcp is behind the same gate as the API (401 with WWW-Authenticate: Bearer), and
// checks Origin against the deployment's own (403 for any other), as the transport spec requires.
func TestGate(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})

	// A credential that was revoked opens nothing.
	revokedToken, revoked, err := gate.Issue(context.Background(), d.DB, ask.Credential{Space: testSpace, Role: ask.RoleAgent, Actor: ask.Actor{ID: "old-agent"}, Person: owner})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.DB.RevokeCredential(context.Background(), testSpace, revoked.ID, time.Now()); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name       string
		method     string
		auth       string // the Authorization header, "" for none
		origin     string // the Origin header, "" for none
		wantStatus int
		wantCode   string // the Problem's code, for refusals
	}{
		{"no token", "POST", "", "", http.StatusUnauthorized, ask.EUnauthorized},
		{"wrong token", "POST", "Bearer lb_not-a-token", "", http.StatusUnauthorized, ask.EUnauthorized},
		{"not a bearer token", "POST", "Basic " + d.Token, "", http.StatusUnauthorized, ask.EUnauthorized},
		{"revoked token", "POST", "Bearer " + revokedToken, "", http.StatusUnauthorized, ask.EUnauthorized},
		{"no token on GET", "GET", "", "", http.StatusUnauthorized, ask.EUnauthorized},
		{"no token on DELETE", "DELETE", "", "", http.StatusUnauthorized, ask.EUnauthorized},
		{"foreign origin", "POST", "Bearer " + d.Token, "https://evil.example", http.StatusForbidden, "origin.forbidden"},
		{"foreign origin without a token", "POST", "", "https://evil.example", http.StatusForbidden, "origin.forbidden"},
		{"same host, other port", "POST", "Bearer " + d.Token, "http://127.0.0.1:1", http.StatusForbidden, "origin.forbidden"},
		{"opaque origin", "POST", "Bearer " + d.Token, "null", http.StatusForbidden, "origin.forbidden"},
		{"own origin", "POST", "Bearer " + d.Token, d.URL, http.StatusOK, ""},
		{"no origin", "POST", "Bearer " + d.Token, "", http.StatusOK, ""},
		{"bearer scheme in lower case", "POST", "bearer " + d.Token, "", http.StatusOK, ""},
		{"another space's credential", "POST", "Bearer " + d.otherSpace(t), "", http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.method == "POST" {
				body = strings.NewReader(initializeBody)
			}
			resp, b := sendMCP(t, tt.method, d.MCP, body, map[string]string{"Authorization": tt.auth, "Origin": tt.origin})
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, b)
			}
			switch tt.wantStatus {
			case http.StatusOK:
				var m struct {
					Result struct {
						ProtocolVersion string                `json:"protocolVersion"`
						ServerInfo      struct{ Name string } `json:"serverInfo"`
					} `json:"result"`
				}
				if err := json.Unmarshal(b, &m); err != nil || m.Result.ServerInfo.Name != "loopback" {
					t.Fatalf("initialize did not answer: %s (%v)", b, err)
				}
				if resp.Header.Get("Mcp-Session-Id") == "" {
					t.Error("initialize answered without an Mcp-Session-Id")
				}
			default:
				if err := contract.ValidateModel("Problem", b); err != nil {
					t.Errorf("the refusal is not a Problem: %v", err)
				}
				var p struct{ Code string }
				json.Unmarshal(b, &p)
				if p.Code != tt.wantCode {
					t.Errorf("code %q, want %q", p.Code, tt.wantCode)
				}
				if resp.Header.Get("Mcp-Session-Id") != "" {
					t.Error("a refused request got a session id")
				}
			}
			if tt.wantStatus == http.StatusUnauthorized {
				if h := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, "Bearer") {
					t.Errorf("WWW-Authenticate is %q, want a Bearer challenge", h)
				}
			}
		})
	}
}

// TestGateRefusesTheMCPClient: mcp-go's own client, with a wrong token, cannot connect.
func TestGateRefusesTheMCPClient(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	for _, legacy := range []bool{false, true} {
		if _, err := d.dial(t, clientOpts{Token: "lb_wrong", Legacy: legacy}); err == nil {
			t.Fatalf("legacy=%v: a client with a wrong token initialized", legacy)
		}
	}
	if n := d.askCount(t); n != 0 {
		t.Fatalf("%d asks exist", n)
	}
}

// TestSessionHeader: a session-based request without Mcp-Session-Id is a 400 Problem, as the
// transport says (a 404 would tell the client its session had expired); a malformed one is a 404,
// which sends the client back to initialize. Initialize and 2026-07-28 requests need none.
func TestSessionHeader(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	const toolsList = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	tests := []struct {
		name       string
		body       string
		session    string
		version    string // the Mcp-Protocol-Version header
		wantStatus int
	}{
		{"initialize needs none", initializeBody, "", "", http.StatusOK},
		{"tools/list without one", toolsList, "", "2025-11-25", http.StatusBadRequest},
		{"tools/list without one or a version", toolsList, "", "", http.StatusBadRequest},
		{"a notification without one", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", "2025-11-25", http.StatusBadRequest},
		{"a malformed one", toolsList, "not a session", "2025-11-25", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := sendMCP(t, "POST", d.MCP, strings.NewReader(tt.body),
				map[string]string{"Authorization": "Bearer " + d.Token, "Mcp-Session-Id": tt.session, "Mcp-Protocol-Version": tt.version})
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, b)
			}
			if tt.wantStatus != http.StatusOK {
				if err := contract.ValidateModel("Problem", b); err != nil {
					t.Errorf("the refusal is not a Problem: %v", err)
				}
				if !strings.Contains(string(b), "Mcp-Session-Id") {
					t.Errorf("the refusal does not say what is missing: %s", b)
				}
			}
		})
	}
}

// sendMCP sends one request to /mcp as an MCP client would, with the headers given (empty values
// are left out), and returns the response and its body.
func sendMCP(t *testing.T, method, url string, body io.Reader, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}
