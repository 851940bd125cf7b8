package mcptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
)

// TestSessionsBelongToTheirCredential: a session id works only with the credential that began
// it. Another credential holding it, whoever it is (a teammate, an agent of the same space, a
// credential of another space), is refused 404 session.not_found and cannot cancel the
// session's waiting call; a revoked one is 401 as always; the session's own credential can.
func TestSessionsBelongToTheirCredential(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	headers := initSession(t, d.MCP, d.Token, testClientInfo)
	teammate := d.issue(t, testSpace, ask.RolePerson, ask.Actor{ID: "grace", Name: "Grace"}, ask.Actor{ID: "grace", Name: "Grace"})
	agent := d.issue(t, testSpace, ask.RoleAgent, ask.Actor{ID: "agent:b", Name: "b"}, owner)
	otherSpace := d.otherSpace(t)
	revokedToken, revoked, err := gate.Issue(context.Background(), d.DB, ask.Credential{Space: testSpace, Role: ask.RoleAgent, Actor: ask.Actor{ID: "old-agent"}, Person: owner})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.DB.RevokeCredential(context.Background(), testSpace, revoked.ID, time.Now()); err != nil {
		t.Fatal(err)
	}

	// A blocking call in the owner's session, answered as JSON (not parked: mcp-go runs it, and
	// a notifications/cancelled of its session and id would end it).
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 41, "method": "tools/call",
		"params": map[string]any{"name": "ask_question", "arguments": question("sessions")}})
	done := make(chan int, 1)
	go func() {
		res, err := post(d.MCP, d.Token, headers, body, "application/json")
		if err != nil {
			done <- -1
			return
		}
		done <- res
	}()
	a := d.waitingAsk(t, 1)

	cancel := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":41,"reason":"not yours"}}`)
	list := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
	for _, tc := range []struct {
		who    string
		token  string
		status int
		code   string
	}{
		{"a teammate", teammate, 404, httpapi.ESessionNotFound},
		{"another agent of the space", agent, 404, httpapi.ESessionNotFound},
		{"another space's owner", otherSpace, 404, httpapi.ESessionNotFound},
		{"a revoked credential", revokedToken, 401, ask.EUnauthorized},
	} {
		for _, msg := range [][]byte{cancel, list} {
			status, code := refusal(t, d.MCP, tc.token, headers, msg)
			if status != tc.status || code != tc.code {
				t.Errorf("%s with the owner's session id: %d %s, want %d %s", tc.who, status, code, tc.status, tc.code)
			}
		}
		req, _ := http.NewRequest("DELETE", d.MCP, nil)
		req.Header.Set("Authorization", "Bearer "+tc.token)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != tc.status {
			t.Errorf("%s ending the owner's session: %v %v", tc.who, res, err)
		} else {
			res.Body.Close()
		}
	}
	if !d.getAsk(t, a.ID).Waiting {
		t.Fatal("another credential's cancel ended the owner's waiting call")
	}
	select {
	case s := <-done:
		t.Fatalf("the owner's call returned (%d) after another credential's cancel", s)
	default:
	}
	// The session's own credential still uses it, and its cancel ends the call.
	if status, code := refusal(t, d.MCP, d.Token, headers, list); status != 200 {
		t.Fatalf("the owner with its own session: %d %s", status, code)
	}
	if status, _ := refusal(t, d.MCP, d.Token, headers, cancel); status != 202 {
		t.Fatalf("the owner's cancel: %d", status)
	}
	d.waitFor(t, a.ID, false)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the owner's cancel did not end the call")
	}
}

// post sends one message and returns the status once the response has ended.
func post(url, token string, headers map[string]string, body []byte, accept string) (int, error) {
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	io.Copy(io.Discard, res.Body)
	return res.StatusCode, nil
}

// refusal sends one message and returns its status and, for a Problem, its code.
func refusal(t *testing.T, url, token string, headers map[string]string, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var p struct{ Code string }
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		json.Unmarshal(b, &p)
	}
	return res.StatusCode, p.Code
}
