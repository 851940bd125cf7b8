package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/events/eventstest"
)

// TestSlowBodiesAreCut: a client that declares a body and never sends it, or trickles it, holds
// its connection no longer than the body's read deadline; a waiting call, whose body has arrived,
// is not cut by it.
func TestSlowBodiesAreCut(t *testing.T) {
	s := startServe(t, 15*time.Second, map[string]string{"LOOPBACK_TOKEN": ownerToken}, "--body-timeout", "1s", "--max-wait", "5s", "--idle-timeout", "1s")
	addr := strings.TrimPrefix(s.base, "http://")
	// An idle keep-alive connection is closed after the idle timeout; one that never sends its
	// request's headers, after ReadHeaderTimeout (10 s, not waited for here).
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(idle, "GET /api/v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+ownerToken+"\r\n\r\n")
	idle.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	io.Copy(io.Discard, idle) // the response, then nothing until the server closes the connection
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("an idle keep-alive connection was kept %s", took.Round(time.Millisecond))
	}
	idle.Close()
	for _, path := range []string{"/api/v1/snapshot", "/api/v1/asks/x/reply", "/mcp"} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+ownerToken+"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		io.Copy(io.Discard, conn) // until the server closes it
		if took := time.Since(start); took > 4*time.Second {
			t.Errorf("%s: a body that never came held the connection %s", path, took.Round(time.Millisecond))
		}
		conn.Close()
	}
	// A blocking call waits well past the body deadline: its body was read.
	c := s.agent(t, s.agentToken(t))
	start = time.Now()
	res := callTool(t, c, "ask_question", map[string]any{"question": "Still waiting?", "project": "limits"})
	if took := time.Since(start); took < 4*time.Second || !strings.Contains(textOf(res), "await_reply") {
		t.Errorf("the wait ended after %s with %q; want the max-wait result after 5s", took.Round(time.Millisecond), textOf(res))
	}
}

// TestEveryRefusalIsAProblem: what is refused outside /api/v1 is a Problem too.
func TestEveryRefusalIsAProblem(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken})
	for _, tc := range []struct {
		method, path, contentType, body string
		status                          int
		code                            string
	}{
		{"GET", "/api/", "", "", 404, "route.not_found"},
		{"GET", "/api/v2/snapshot", "", "", 404, "route.not_found"},
		{"GET", "/nope.js", "", "", 404, "route.not_found"},
		{"GET", "/mcpx", "", "", 404, "route.not_found"},
		{"POST", "/", "application/json", "{}", 405, "method.not_allowed"},
		{"DELETE", "/asks/x", "", "", 405, "method.not_allowed"},
		{"PUT", "/mcp", "application/json", "{}", 405, "method.not_allowed"},
		{"PATCH", "/mcp", "application/json", "{}", 405, "method.not_allowed"},
		{"OPTIONS", "/mcp", "", "", 405, "method.not_allowed"},
		{"POST", "/mcp", "text/plain", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 415, "request.media_type"},
		{"POST", "/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 415, "request.media_type"},
		{"POST", "/api/v1/asks/x/reply", "text/plain", `{"outcome":"dismissed"}`, 415, "request.media_type"},
		{"POST", "/api/v1/asks/x/reply", "application/json", `{"outcome":"answered","outcome":"dismissed"}`, 422, "reply.invalid"},
	} {
		req, _ := http.NewRequest(tc.method, s.base+tc.path, strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer "+ownerToken)
		if tc.contentType != "" {
			req.Header.Set("Content-Type", tc.contentType)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var p struct{ Code, Message string }
		if res.StatusCode != tc.status || json.Unmarshal(b, &p) != nil || p.Code != tc.code || p.Message == "" ||
			!strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s %s: %d %s %q, want %d %s", tc.method, tc.path, res.StatusCode, res.Header.Get("Content-Type"), b, tc.status, tc.code)
		}
		if tc.status == 405 && res.Header.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", tc.method, tc.path)
		}
	}
}

// TestMCPDuplicateKeys: a message that names a key twice is refused, not read one way or the other.
func TestMCPDuplicateKeys(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken})
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask_question","arguments":{"question":"a","question":"b","project":"p"}}}`
	res, b := s.postMCP(t, ownerToken, body)
	var msg struct {
		ID    int
		Error struct{ Code int }
	}
	if json.Unmarshal(b, &msg) != nil || msg.ID != 7 || msg.Error.Code != -32600 {
		t.Fatalf("a message with a key twice: %d %s", res.StatusCode, b)
	}
	if r := s.do(t, "GET", "/api/v1/snapshot", ownerToken, ""); strings.Contains(string(r.body), `"question"`) {
		t.Fatalf("the refused call created an ask: %s", r.body)
	}
}

// TestLimitsPerCredential: one credential holds at most so many waits and sockets at once (429
// with Retry-After beyond).
func TestLimitsPerCredential(t *testing.T) {
	s := startServe(t, 15*time.Second, map[string]string{"LOOPBACK_TOKEN": ownerToken},
		"--max-waits", "2", "--max-sockets", "2", "--max-auth-failures", "5")
	agent := s.agentToken(t)
	c := s.agent(t, agent)
	askInBackground(t, c, map[string]any{"question": "one?", "project": "limits"})
	askInBackground(t, c, map[string]any{"question": "two?", "project": "limits"})
	eventually(t, "two waits", func() bool {
		r := s.do(t, "GET", "/api/v1/snapshot", ownerToken, "")
		return strings.Count(string(r.body), `"waiting":true`) == 2
	})
	res := callTool(t, s.agent(t, agent), "list_open_asks", map[string]any{}) // not a wait: allowed
	if res.IsError {
		t.Fatalf("list_open_asks beside two waits: %s", textOf(res))
	}
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask_question","arguments":{"question":"three?","project":"limits"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	r, b := s.postMCP(t, agent, body, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "ask_question")
	if r.StatusCode != 429 || r.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "request.rate_limited") {
		t.Errorf("a third wait: %d %q %s", r.StatusCode, r.Header.Get("Retry-After"), b)
	}

	s.socket(t, eventstest.Options{Token: ownerToken})
	s.socket(t, eventstest.Options{Token: ownerToken})
	s.refused(t, eventstest.Options{Token: ownerToken}, 429, "request.rate_limited")
	_, teammate := s.createToken(t, "--person", "--name", "ada")
	s.socket(t, eventstest.Options{Token: teammate}) // per credential, not per space

}

// TestSignInThrottle: only a presented credential that opens nothing counts as a failed sign-in;
// past the budget such a credential is answered 429, exactly the budget's worth are answered 401
// however many arrive at once, and nothing the person or their agents hold is locked out: a live
// token works from the throttled address, and the inbox page is never gated.
func TestSignInThrottle(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken}) // the default budget: 20 a minute
	agent := s.agentToken(t)
	// Twenty credential-less GETs, and 25 <img>-style requests (no Authorization; any page the
	// person opens can make them against 127.0.0.1), are not sign-ins.
	for range 20 {
		if r := s.do(t, "GET", "/api/v1/snapshot", "", ""); r.status != 401 {
			t.Fatalf("a request without a credential: %d", r.status)
		}
	}
	for i := range 25 {
		if r := s.do(t, "GET", fmt.Sprintf("/api/v1/files/up_%d", i), "", "", "Accept", "image/*"); r.status != 401 {
			t.Fatalf("an <img> request: %d", r.status)
		}
	}
	stillIn := func(when string) {
		t.Helper()
		if r := s.do(t, "GET", "/api/v1/whoami", ownerToken, ""); r.status != 200 {
			t.Errorf("%s: the owner's token is %d %s", when, r.status, r.body)
		}
		if r, err := http.Get(s.base + "/"); err != nil || r.StatusCode != 200 {
			t.Errorf("%s: the inbox page: %v %v", when, r, err)
		} else {
			r.Body.Close()
		}
		if res := callTool(t, s.agent(t, agent), "list_open_asks", map[string]any{}); res.IsError {
			t.Errorf("%s: the agent's MCP call: %s", when, textOf(res))
		}
	}
	stillIn("after 45 requests without a credential")

	// A burst of wrong tokens at once: exactly 20 are evaluated as failed sign-ins (401), every
	// other one is 429 with Retry-After.
	statuses := make(chan response, 60)
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- s.do(t, "GET", "/api/v1/whoami", fmt.Sprintf("lb_wrong-token-%02d-0123456789abcdef", i), "")
		}()
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for r := range statuses {
		count[r.status]++
		if r.status == 429 && (r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), "request.rate_limited")) {
			t.Errorf("a throttled sign-in: %q %s", r.header.Get("Retry-After"), r.body)
		}
	}
	if count[401] != 20 || count[429] != 40 {
		t.Errorf("60 wrong tokens at once: %v; want 20 × 401 and 40 × 429", count)
	}
	// Past the budget a wrong token is 429 on every surface: MCP and the socket too.
	if r, b := s.postMCP(t, "lb_wrong-token-mcp-0123456789abcdef", `{"jsonrpc":"2.0","id":1,"method":"ping"}`); r.StatusCode != 429 {
		t.Errorf("a wrong token on /mcp past the budget: %d %s", r.StatusCode, b)
	}
	s.refused(t, eventstest.Options{Token: "lb_wrong-token-ws-0123456789abcdef"}, 429, "request.rate_limited")
	// and no credential at all is still plainly 401.
	if r := s.do(t, "GET", "/api/v1/snapshot", "", ""); r.status != 401 {
		t.Errorf("no credential past the budget: %d", r.status)
	}
	stillIn("from the throttled address")
	if r := s.do(t, "GET", "/api/v1/whoami", teammateToken(t, s), ""); r.status != 200 {
		t.Errorf("a teammate's token from the throttled address: %d", r.status)
	}
}

// TestRefusedBeforeTheBody: a request refused before its body was read (here: no token) is
// answered at once and its connection closed, not held until the rest of a body that never
// comes; a body trickled in a byte at a time is cut at its deadline all the same.
func TestRefusedBeforeTheBody(t *testing.T) {
	s := startServe(t, 15*time.Second, map[string]string{"LOOPBACK_TOKEN": ownerToken}, "--body-timeout", "4s")
	addr := strings.TrimPrefix(s.base, "http://")
	for _, path := range []string{"/api/v1/snapshot", "/api/v1/asks/x/reply", "/mcp"} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, _ := io.ReadAll(conn) // the answer, then the server's close
		status, _, _ := strings.Cut(string(b), "\r\n")
		if took := time.Since(start); took > 2*time.Second || !strings.Contains(status, " 40") || !strings.Contains(string(b), `"code":`) {
			t.Errorf("%s without a token or a body: %q after %s; want a 4xx Problem at once", path, status, took.Round(time.Millisecond))
		}
		conn.Close()
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+ownerToken+"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
	closed := make(chan time.Duration, 1)
	go func() {
		conn.SetReadDeadline(time.Now().Add(15 * time.Second))
		io.Copy(io.Discard, conn)
		closed <- time.Since(start)
	}()
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case took := <-closed:
			if took < 3*time.Second || took > 7*time.Second {
				t.Errorf("a trickled MCP body held its connection %s; want it cut at its 4 s deadline", took.Round(time.Millisecond))
			}
			return
		case <-tick.C:
			conn.Write([]byte(" ")) // a byte at a time, for ever
		}
	}
}

// TestMCPStreamsPerCredential: one credential holds at most --max-streams MCP GET streams at
// once; the next is 429 with Retry-After, and another credential still gets its own.
func TestMCPStreamsPerCredential(t *testing.T) {
	s := startServe(t, 15*time.Second, map[string]string{"LOOPBACK_TOKEN": ownerToken}, "--max-streams", "2")
	agent := s.agentToken(t)
	_, other := s.createToken(t, "--name", "other")
	session := func(token string) string {
		res, _ := s.postMCP(t, token, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		id := res.Header.Get("Mcp-Session-Id")
		if id == "" {
			t.Fatalf("initialize gave no session: %d", res.StatusCode)
		}
		return id
	}
	stream := func(token, id string) *http.Response {
		req, _ := http.NewRequest("GET", s.base+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	for i := range 2 {
		if res := stream(agent, session(agent)); res.StatusCode != 200 {
			t.Fatalf("stream %d: %d", i+1, res.StatusCode)
		}
	}
	res := stream(agent, session(agent))
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 429 || res.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "request.rate_limited") {
		t.Errorf("a third MCP stream: %d %q %s; want 429 with Retry-After", res.StatusCode, res.Header.Get("Retry-After"), b)
	}
	if res := stream(other, session(other)); res.StatusCode != 200 {
		t.Errorf("another credential's stream: %d", res.StatusCode)
	}
}

func teammateToken(t *testing.T, s *server) string {
	_, token := s.createToken(t, "--person", "--name", "grace")
	return token
}
