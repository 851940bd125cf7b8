package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/events/eventstest"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/httpapi/apitest"
	"github.com/loopback-hq/loopback/shared/mcptools/mcptest"
	"github.com/loopback-hq/loopback/shared/push/pushtest"
	"github.com/loopback-hq/loopback/shared/testwait"
)

// The trust model (docs/trust.md), tried against the real binary: who may do what, what a
// revocation ends, how the owner's token rotates, and what never reaches a log.

var bearerLine = regexp.MustCompile(`Bearer (lb_[A-Za-z0-9_-]+)`)

// agentToken is the token the welcome's agent lines carry; every one of them must carry the
// same one, and never the owner's.
func (s *server) agentToken(t *testing.T) string {
	t.Helper()
	found := bearerLine.FindAllStringSubmatch(s.out.String(), -1)
	if len(found) != 3 {
		t.Fatalf("the welcome has %d agent lines with a token, want 3 (Claude Code, Cursor, VS Code):\n%s", len(found), s.out.String())
	}
	for _, f := range found[1:] {
		if f[1] != found[0][1] {
			t.Fatalf("the agent lines carry different tokens:\n%s", s.out.String())
		}
	}
	return found[0][1]
}

// cli runs a loopback command (such as token create) on the server's data folder.
func (s *server) cli(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), append(args, "--data", s.dir), &out, &errOut); err != nil {
		t.Fatalf("loopback %s: %v %s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// createToken runs `loopback token create` with args and returns the credential's id and token.
func (s *server) createToken(t *testing.T, args ...string) (id, token string) {
	t.Helper()
	out := s.cli(t, append([]string{"token", "create"}, args...)...)
	for _, f := range strings.Fields(out) {
		switch {
		case strings.HasPrefix(f, "cred_"):
			id = f
		case strings.HasPrefix(f, gate.TokenPrefix):
			token = f
		}
	}
	if id == "" || token == "" {
		t.Fatalf("token create printed no id or token: %s", out)
	}
	return id, token
}

func TestWelcomeHandsAgentsNoPersonKey(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken})
	agent := s.agentToken(t)
	if agent == ownerToken {
		t.Fatal("the agent lines carry the owner's token")
	}
	for _, line := range strings.Split(s.out.String(), "\n") {
		if strings.Contains(line, ownerToken) && !strings.Contains(line, "Inbox:") {
			t.Errorf("the owner's token is printed outside the inbox link: %q", line)
		}
	}
	// The agent's token is an agent's: MCP yes, the person's API no.
	if r := s.do(t, "GET", "/api/v1/snapshot", agent, ""); r.status != 403 || r.problem(t) != ask.EForbidden {
		t.Errorf("the printed agent token on the snapshot: %d %s", r.status, r.body)
	}
	s.agent(t, agent)
	kept, err := os.ReadFile(filepath.Join(s.dir, agentTokenFile))
	if err != nil || strings.TrimSpace(string(kept)) != agent {
		t.Fatalf("agent.token holds %q (%v), want the printed token", kept, err)
	}
	if fi, _ := os.Stat(filepath.Join(s.dir, agentTokenFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("agent.token mode %v", fi.Mode().Perm())
	}

	// A restart prints the same agent token (no new credential each time)...
	s.stop()
	again := startServeIn(t, s.dir, 15*time.Second, map[string]string{"LOOPBACK_TOKEN": ownerToken})
	if got := again.agentToken(t); got != agent {
		t.Errorf("after a restart the agent lines carry a new token")
	}
	again.stop()
	// ...until it is revoked: then a new one.
	var id string
	for _, line := range strings.Split(again.cli(t, "token", "list"), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[1] == string(ask.RoleAgent) && f[2] == defaultAgent.Name {
			id = f[0]
		}
	}
	if id == "" {
		t.Fatal("token list shows no default agent credential")
	}
	again.cli(t, "token", "revoke", id)
	third := startServeIn(t, s.dir, 15*time.Second, map[string]string{"LOOPBACK_TOKEN": ownerToken})
	if got := third.agentToken(t); got == agent {
		t.Error("after its credential was revoked, the agent lines still carry the revoked token")
	}
	creds := len(strings.Split(strings.TrimSpace(third.cli(t, "token", "list")), "\n")) - 1
	if creds != 3 { // the owner, the revoked agent, the new agent
		t.Errorf("token list shows %d credentials after three starts and one revoke, want 3", creds)
	}
}

// TestRoleMatrix: every route, tool and the socket × every kind of credential.
func TestRoleMatrix(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken})
	svc, db := s.seed(t)
	ctx := context.Background()
	agent := s.agentToken(t)
	_, teammate := s.createToken(t, "--person", "--name", "ada")
	revokedID, revoked := s.createToken(t, "--name", "old-laptop")
	s.cli(t, "token", "revoke", revokedID)
	other, _, err := gate.Issue(ctx, db, ask.Credential{Space: "other", Role: ask.RoleOwner, Actor: ask.Actor{ID: "eve", Name: "eve"}, Person: ask.Actor{ID: "eve", Name: "eve"}})
	if err != nil {
		t.Fatal(err)
	}
	// An image, uploaded as an agent does, for the files route.
	tk := requestUploadVia(t, s.agent(t, agent), "image/png")
	if r := s.putUpload(t, tk.path(t), "image/png", testImage(t, "tiny.png"), -1); r.status != 201 {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}

	type who struct {
		name, token string
	}
	roles := []who{{"owner", ownerToken}, {"teammate", teammate}, {"agent", agent}, {"revoked", revoked}, {"other space", other}}
	local := ask.Origin{Space: LocalSpace, Client: "matrix 1.0", RaisedBy: &ask.Actor{ID: "owner"}}
	fresh := func() string {
		a, err := svc.AskQuestion(ctx, question("matrix", "Yes", "No"), local)
		if err != nil {
			t.Fatal(err)
		}
		return a.ID
	}
	readable := fresh()

	// A push subscription of this space's owner, for each DELETE (its endpoint never answers).
	subscription := func(n int) string {
		b, _ := pushtest.NewBrowser()
		body, _ := json.Marshal(map[string]any{"endpoint": fmt.Sprintf("https://push.invalid/matrix-%d", n), "keys": map[string]string{"p256dh": b.P256dh(), "auth": b.Auth()}})
		var out struct{ ID string }
		json.Unmarshal(s.do(t, "POST", "/api/v1/push/subscriptions", ownerToken, string(body)).body, &out)
		return out.ID
	}
	pb, _ := pushtest.NewBrowser()
	pushBody, _ := json.Marshal(map[string]any{"endpoint": "https://push.invalid/matrix", "keys": map[string]string{"p256dh": pb.P256dh(), "auth": pb.Auth()}})

	// The role matrix (apitest.Matrix, the table the AWS path runs too): every route of
	// httpapi.Routes() (a GET route answers HEAD too), the event socket, MCP's initialize and a
	// path no route has.
	keys := []string{"POST /mcp", "ANY $default"}
	for _, route := range httpapi.Routes() {
		keys = append(keys, route.Method+" "+route.Pattern)
		if _, ok := apitest.Matrix["HEAD "+route.Pattern]; ok && route.Method == "GET" {
			keys = append(keys, "HEAD "+route.Pattern)
		}
	}
	apitest.RoleMatrix(t, apitest.Deployment{
		Routes: keys,
		Call: func(t *testing.T, key string, rt apitest.Row, i int) (int, []byte) {
			role := roles[i]
			method, _, _ := strings.Cut(key, " ")
			path, body, id := rt.Path, rt.Body, ""
			if strings.Contains(path, "{fresh}") {
				id = fresh()
				path = strings.Replace(path, "{fresh}", id, 1)
			}
			path = strings.Replace(path, "{ask}", readable, 1)
			path = strings.Replace(path, "{upload}", tk.UploadID, 1)
			if strings.Contains(path, "{subscription}") { // a new one for each call
				sub := subscription(i)
				path = strings.Replace(path, "{subscription}", sub, 1)
			}
			if body == "{push}" {
				body = string(pushBody)
			}
			var r response
			switch {
			case key == "GET /api/v1/events":
				return socketStatus(t, s, role.token)
			case key == "POST /mcp":
				res, b := s.postMCP(t, role.token, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"matrix","version":"1"}}}`)
				return res.StatusCode, b
			case path == "{ticket}":
				up := requestUploadVia(t, s.agent(t, agent), "image/png").path(t)
				r = s.putUpload(t, up, "image/png", testImage(t, "tiny.png"), -1, "Authorization", "Bearer "+role.token)
			case method == "HEAD" || strings.HasPrefix(path, "/api/v1/files/"):
				r = s.raw(t, method, path, role.token)
			case method == "ANY":
				r = s.do(t, "GET", path, role.token, body)
			default:
				r = s.do(t, method, path, role.token, body)
			}
			if id != "" && r.status != 200 {
				// A refused reply wrote nothing.
				a, err := svc.Find(ctx, LocalSpace, id)
				if err != nil || a.Status != ask.AwaitingHuman || len(a.Thread) != 0 {
					t.Errorf("a reply refused to %s changed the ask: %+v %v", role.name, a, err)
				}
			}
			return r.status, r.body
		},
	})
	// What the refusals left: the POSTed device (the owner's; the teammate may not replace it),
	// and the four devices whose DELETE was refused to the teammate, the agent, the revoked
	// credential and another space.
	if subs, _ := db.PushSubscriptions(ctx, LocalSpace); len(subs) != 1+4 {
		t.Errorf("%d push subscriptions of this space after the matrix, want 5", len(subs))
	}
	// The snapshot of another space holds none of this one's asks (only the example ask its
	// owner made through the matrix, in that space).
	snap := decode[events.DecodedSnapshot](t, s.do(t, "GET", "/api/v1/snapshot", other, ""))
	for _, a := range snap.Open {
		if a.Client != ask.ExampleClient {
			t.Errorf("another space's snapshot shows an ask of this one: %s", a.ID)
		}
	}

	// A reply's `by` is always a person: the teammate's reply names her.
	id := fresh()
	answered := decode[ask.Ask](t, s.do(t, "POST", "/api/v1/asks/"+id+"/reply", teammate, yes))
	if e := answered.Thread[len(answered.Thread)-1]; e.By == nil || e.By.Name != "ada" || !strings.HasPrefix(e.By.ID, "person:") {
		t.Errorf("the teammate's reply is by %+v", e.By)
	}

	// An agent's asks are raised by the person who holds its credential.
	c := s.agent(t, agent)
	call := askInBackground(t, c, map[string]any{"question": "Who raised me?", "project": "matrix"})
	var raised *ask.Ask
	eventually(t, "the agent's ask is stored", func() bool {
		open, err := db.OpenAsks(ctx, LocalSpace)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range open {
			if a.Question != nil && a.Question.Question == "Who raised me?" {
				raised = a
			}
		}
		return raised != nil
	})
	if raised.RaisedBy == nil || raised.RaisedBy.ID != "owner" {
		t.Errorf("the agent's ask is raised by %+v, want the owner", raised.RaisedBy)
	}
	// Tools: an agent of another space cannot reach this space's ask.
	res := callTool(t, s.agent(t, other), "await_reply", map[string]any{"askId": raised.ID})
	if !res.IsError || !strings.Contains(textOf(res), ask.ENotFound) {
		t.Errorf("await_reply on another space's ask: %s", textOf(res))
	}
	s.reply(t, ownerToken, raised.ID, `{"outcome":"answered","selected":[],"text":"the owner"}`)
	call.wait(t)

	// Every tool × every live credential (a revoked one is 401 on every MCP request, above).
	owner, err := db.CredentialByTokenHash(ctx, gate.Hash(ownerToken))
	if err != nil {
		t.Fatal(err)
	}
	mcptest.ToolMatrix(t, svc, db, LocalSpace, []mcptest.Role{
		{Name: "owner", Space: LocalSpace, Person: owner.Person.Name, Client: s.agent(t, ownerToken)},
		{Name: "teammate", Space: LocalSpace, Person: "ada", Client: s.agent(t, teammate)},
		{Name: "agent", Space: LocalSpace, Person: owner.Person.Name, Client: s.agent(t, agent)},
		{Name: "other space", Space: "other", Person: "eve", Client: s.agent(t, other)},
	})
	if status, _ := s.postMCP(t, revoked, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_open_asks","arguments":{}}}`); status.StatusCode != 401 {
		t.Errorf("tools/call as revoked: %d", status.StatusCode)
	}
}

// socketStatus opens the event socket with token: 101 once the snapshot came first on it, or the
// refusal's status and body (a Problem, which the contract's schema is checked on).
func socketStatus(t *testing.T, s *server, token string) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := eventstest.Dial(ctx, s.base, eventstest.Options{Token: token})
	if err == nil {
		defer conn.CloseNow()
		snapshotFirst(t, conn)
		return 101, nil
	}
	var ref *eventstest.Refusal
	if !errors.As(err, &ref) {
		t.Fatalf("opening the event socket: %v", err)
	}
	if err := validateResponse("GET", "/api/v1/events", ref.Status, ref.Header.Get("Content-Type"), ref.Body); err != nil {
		t.Errorf("the socket's refusal is not a Problem: %v", err)
	}
	return ref.Status, ref.Body
}

// raw sends a request with token and no body, and returns what came back as it is: for a HEAD,
// and a file's bytes, which are no JSON to check against the contract.
func (s *server) raw(t *testing.T, method, path, token string) response {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{res.StatusCode, res.Header, b}
}

// mcpStatus is the HTTP status of an MCP initialize sent with token.
func mcpStatus(t *testing.T, s *server, token string) int {
	t.Helper()
	res, _ := s.postMCP(t, token, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"matrix","version":"1"}}}`)
	return res.StatusCode
}

// postMCP sends one raw JSON-RPC message to /mcp with token, headers added (name, value, …), and
// returns the response and its body, read whole.
func (s *server) postMCP(t *testing.T, token, body string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.base+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

func callTool(t *testing.T, c interface {
	CallTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error)
}, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// eventually polls cond until it holds (testwait.Eventually, the one copy).
var eventually = testwait.Eventually

// TestRevocationEndsWhatItOpened: revoking a credential with `loopback token revoke`, from
// another process than the server, closes its sockets, voids its unused tickets, and ends its
// waiting calls and tasks; the asks stay for the person.
func TestRevocationEndsWhatItOpened(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken})
	_, db := s.seed(t)
	ctx := context.Background()
	personID, person := s.createToken(t, "--person", "--name", "ada")
	agentID, agent := s.createToken(t, "--name", "ci")

	bySocket := s.socket(t, eventstest.Options{Token: person})
	byTicket := s.socket(t, eventstest.Options{Ticket: s.ticket(t, person)})
	snapshotFirst(t, bySocket)
	snapshotFirst(t, byTicket)
	unused := s.ticket(t, person)

	c := s.agent(t, agent)
	waiting := askInBackground(t, c, map[string]any{"question": "Still there?", "project": "revoke"})
	task := startTask(t, s, agent)
	eventually(t, "the agent is waiting on two asks", func() bool {
		open, _ := db.OpenAsks(ctx, LocalSpace)
		n := 0
		for _, a := range open {
			if a.Waiting {
				n++
			}
		}
		return n == 2
	})

	start := time.Now()
	s.cli(t, "token", "revoke", personID)
	s.cli(t, "token", "revoke", agentID)

	for name, conn := range map[string]*websocket.Conn{"bearer": bySocket, "ticket": byTicket} {
		code := closeCode(t, conn)
		if code != httpapi.CloseRevoked {
			t.Errorf("the %s socket closed with %d, want %d", name, code, httpapi.CloseRevoked)
		}
	}
	s.refused(t, eventstest.Options{Ticket: unused}, 401, ask.EUnauthorized)

	select {
	case <-waiting.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting call did not end after its credential was revoked")
	}
	if waiting.err != nil || !waiting.res.IsError || !strings.Contains(textOf(waiting.res), "revoked") {
		t.Errorf("the waiting call ended with %v %s; want a tool error saying the credential was revoked", waiting.err, textOf(waiting.res))
	}
	t.Logf("sockets closed and the wait ended %s after the revoke", time.Since(start).Round(time.Millisecond))

	stored, err := db.FindTask(ctx, LocalSpace, task, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if stored.Status != ask.TaskFailed || stored.Message != ask.RevokedTaskMessage {
		t.Errorf("the revoked credential's task is %s (%q)", stored.Status, stored.Message)
	}
	// The asks stay for the person, and no agent is shown waiting on them.
	eventually(t, "nobody is shown waiting", func() bool {
		open, _ := db.OpenAsks(ctx, LocalSpace)
		for _, a := range open {
			if a.Waiting || a.Status != ask.AwaitingHuman {
				return false
			}
		}
		return len(open) == 2
	})
	if status := mcpStatus(t, s, agent); status != 401 {
		t.Errorf("the revoked agent's MCP request: %d", status)
	}
}

// closeCode reads until the socket closes and returns its close code.
func closeCode(t *testing.T, conn *websocket.Conn) websocket.StatusCode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, _, err := conn.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				t.Fatal("the socket stayed open")
			}
			return websocket.CloseStatus(err)
		}
	}
}

// startTask makes a task-augmented ask_question (MCP 2025-11-25 tasks) with token and returns
// the task's id.
func startTask(t *testing.T, s *server, token string) string {
	t.Helper()
	post := func(session, body string) (*http.Response, []byte) {
		req, _ := http.NewRequest("POST", s.base+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, b
	}
	res, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"tasks","version":"1"}}}`)
	session := res.Header.Get("Mcp-Session-Id")
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, b := post(session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask_question","arguments":{"question":"A task?","project":"revoke"},"task":{"ttl":60000}}}`)
	var out struct {
		Result struct {
			Task struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Result.Task.TaskID == "" {
		t.Fatalf("a task-augmented call answered %s (%v)", b, err)
	}
	return out.Result.Task.TaskID
}

// TestOwnerTokenRotation: a new LOOPBACK_TOKEN retires the old one, `loopback token rotate`
// replaces a kept one, and a short LOOPBACK_TOKEN is refused.
func TestOwnerTokenRotation(t *testing.T) {
	first := "lb_first-owner-token-0123456789abcdefghijklmno"
	second := "lb_second-owner-token-0123456789abcdefghijklmn"
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": first})
	dir := s.dir
	s.stop()
	s = startServeIn(t, dir, 15*time.Second, map[string]string{"LOOPBACK_TOKEN": second})
	if r := s.do(t, "GET", "/api/v1/whoami", first, ""); r.status != 401 {
		t.Errorf("the previous LOOPBACK_TOKEN still opens the inbox: %d", r.status)
	}
	if r := s.do(t, "GET", "/api/v1/whoami", second, ""); r.status != 200 {
		t.Errorf("the new LOOPBACK_TOKEN: %d", r.status)
	}
	s.stop()

	// Without LOOPBACK_TOKEN: a token kept in the data folder, rotated by the CLI while serving.
	s = startServeIn(t, dir, 15*time.Second, map[string]string{"LOOPBACK_TOKEN": ""})
	if r := s.do(t, "GET", "/api/v1/whoami", second, ""); r.status != 401 {
		t.Errorf("a LOOPBACK_TOKEN no longer set still opens the inbox: %d", r.status)
	}
	kept := readToken(t, filepath.Join(dir, ownerTokenFile))
	conn := s.socket(t, eventstest.Options{Token: kept})
	snapshotFirst(t, conn)
	out := s.cli(t, "token", "rotate")
	rotated := readToken(t, filepath.Join(dir, ownerTokenFile))
	if rotated == kept || !strings.Contains(out, rotated) {
		t.Fatalf("token rotate kept the token, or did not print the new one: %s", out)
	}
	if r := s.do(t, "GET", "/api/v1/whoami", kept, ""); r.status != 401 {
		t.Errorf("the rotated-out token still opens the inbox: %d", r.status)
	}
	if code := closeCode(t, conn); code != httpapi.CloseRevoked {
		t.Errorf("the rotated-out token's socket closed with %d", code)
	}
	if r := s.do(t, "GET", "/api/v1/whoami", rotated, ""); r.status != 200 {
		t.Errorf("the rotated token: %d", r.status)
	}
	owners := 0
	for _, line := range strings.Split(s.cli(t, "token", "list"), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == string(ask.RoleOwner) && strings.HasSuffix(line, " -") {
			owners++
		}
	}
	if owners != 1 {
		t.Errorf("%d live owner credentials after rotations, want 1", owners)
	}
	s.stop()

	for _, bad := range []string{"x", "lb_short-token", strings.Repeat("y", 31), strings.Repeat("z", 31) + " z"} {
		t.Setenv("LOOPBACK_TOKEN", bad)
		var o, e bytes.Buffer
		err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, &o, &e)
		if err == nil || !strings.Contains(err.Error(), "LOOPBACK_TOKEN") {
			t.Errorf("LOOPBACK_TOKEN=%q: serve returned %v", bad, err)
		}
	}
	t.Setenv("LOOPBACK_TOKEN", second)
	var o, e bytes.Buffer
	if err := run(context.Background(), []string{"token", "rotate", "--data", dir}, &o, &e); err == nil {
		t.Error("token rotate with LOOPBACK_TOKEN set succeeded")
	}
}

func readToken(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestLogsHoldNoCredentials runs what logs (a failed upload, a refused socket, requests with
// tokens) and greps the whole log for every credential the run used.
func TestLogsHoldNoCredentials(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken})
	agent := s.agentToken(t)
	tk := requestUploadVia(t, s.agent(t, agent), "image/png")
	path := tk.path(t)
	uploadToken := path[strings.LastIndex(path, "/")+1:]
	// A client that sends the whole image and then half-closes its side of the connection: the
	// server's request context ends while it stores the bytes, and the failure is logged.
	if status := halfClose(t, s, path, testImage(t, "tiny.png")); !strings.HasPrefix(status, "HTTP/1.1 201") {
		t.Errorf("an upload whose client half-closed after the body: %q, want 201", status)
	}
	tk = requestUploadVia(t, s.agent(t, agent), "image/png")
	path = tk.path(t)
	// A client that gives up mid-body.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequest("PUT", s.base+path, &slowBody{first: testImage(t, "tiny.png")[:20], abandoned: ctx.Done()})
	req.ContentLength = 4 << 20
	req.Header.Set("Content-Type", "image/png")
	if res, err := http.DefaultClient.Do(req.WithContext(ctx)); err == nil {
		res.Body.Close()
	}
	s.refused(t, eventstest.Options{Token: agent}, 403, ask.EForbidden)
	s.do(t, "GET", "/api/v1/snapshot", ownerToken, "")
	// A panic or a 500 would log the path; a wrong upload URL must not leak either.
	s.putUpload(t, strings.Replace(path, "local", "nope", 1), "image/png", []byte("x"), 1)
	// The last request's line is written (the lines before it were, and stop waits for the rest).
	eventually(t, "the wrong upload URL's log line", func() bool {
		return strings.Contains(s.log.String(), "path=/api/v1/uploads/nope/")
	})
	s.stop()
	log := s.log.String()
	if log == "" {
		t.Fatal("the server logged nothing")
	}
	for name, secret := range map[string]string{"the owner's token": ownerToken, "the agent's token": agent, "an upload token": uploadToken} {
		if strings.Contains(log, secret) {
			t.Errorf("%s is in the log:\n%s", name, log)
		}
	}
	if strings.Contains(log, "lbu_") || strings.Contains(log, "Bearer lb_") {
		t.Errorf("a credential-shaped string is in the log:\n%s", log)
	}
	// One line per request, naming the credential by id: MCP's with its method, tool and client.
	mcpLine := regexp.MustCompile(`msg=mcp method=POST path=/mcp status=200 .*credential=cred_\S+ rpc=tools/call protocol=\S+ client="?[^"]+"? tool=request_upload`)
	apiLine := regexp.MustCompile(`msg=api method=GET path=/api/v1/snapshot status=200 bytes=\d+ ms=\S+ credential=cred_\S+`)
	if !mcpLine.MatchString(log) || !apiLine.MatchString(log) {
		t.Errorf("the log lacks a request line for request_upload or the snapshot:\n%s", log)
	}
}

// halfClose sends a PUT of body to path over a raw connection, closes its writing side at once,
// and returns the response's status line.
func halfClose(t *testing.T, s *server, path string, body []byte) string {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nContent-Length: %d\r\n\r\n", path, len(body))
	conn.Write(body)
	conn.(*net.TCPConn).CloseWrite()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(conn)
	status, _, _ := strings.Cut(string(b), "\r\n")
	return status
}

// slowBody sends a few bytes and then nothing, until the request is abandoned.
type slowBody struct {
	first     []byte
	sent      bool
	abandoned <-chan struct{} // the request's context ends
}

func (b *slowBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, b.first), nil
	}
	<-b.abandoned
	return 0, errors.New("gave up")
}
