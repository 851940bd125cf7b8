package mcptools_test

// The test harness: a real Loopback deployment (the same mux as `loopback serve`: the MCP handler
// at /mcp and the HTTP API at /api/) on a real SQLite file, served by httptest, reached with
// mcp-go's own client and with plain HTTP for the person's side.

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/app"
	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/blobfs"
	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/limit"
	"github.com/loopback-hq/loopback/shared/mcptools"
	"github.com/loopback-hq/loopback/shared/redact"
	"github.com/loopback-hq/loopback/shared/sqlite"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
	"github.com/loopback-hq/loopback/shared/testwait"
)

// testSpace is the space the owner's token opens.
const testSpace = "local"

// owner is the person behind the owner's token.
var owner = ask.Actor{ID: "owner", Name: "Olga Owner"}

// deployOpts configures a test deployment. Zero values take the defaults.
type deployOpts struct {
	MaxWait  time.Duration // how long one blocking call waits; default 30 s (longer than any test)
	Progress time.Duration // progress and lease-renewal interval; default 100 ms
	TaskPoll time.Duration // the poll interval tasks suggest; default 1 s
	// DBPath is the SQLite file; default a new file in t.TempDir(). Pass another deployment's
	// path to build a second instance (or a restarted one) on the same database.
	DBPath string
	// Now is the deployment's clock; default the real one.
	Now ask.Clock
	// Log receives the deployment's log, as JSON lines (Lambda's format, redacted); default none.
	Log io.Writer
	// MaxWaits bounds the calls one credential has waiting at once; default none.
	MaxWaits int
	// MaxStreams bounds the GET streams one credential has open at once; default none.
	MaxStreams int
	// Turns is how many MCP requests are handled at once; default one per CPU.
	Turns int
}

// deployment is one running Loopback instance.
type deployment struct {
	URL     string // base URL, such as http://127.0.0.1:1234
	MCP     string // URL + "/mcp"
	Token   string // the owner's bearer token
	DBPath  string
	DB      *sqlite.DB
	Service *ask.Service
	Hub     *events.Hub
	Handler *mcptools.Handler

	srv    *httptest.Server
	cancel context.CancelFunc // ends every request in flight, as `loopback serve` does on shutdown
	drain  func()             // waits for the waits' bookkeeping (Waiter.Drain)
	letGo  func()             // ends every wait with a result (Waiter.Shutdown)
	once   sync.Once
}

// newTestDeployment starts a deployment wired exactly like cmd/loopback/serve.go, and stops it
// when the test ends.
func newTestDeployment(t testing.TB, opts deployOpts) *deployment {
	t.Helper()
	if opts.MaxWait == 0 {
		opts.MaxWait = 30 * time.Second
	}
	if opts.Progress == 0 {
		opts.Progress = 100 * time.Millisecond
	}
	if opts.TaskPoll == 0 {
		opts.TaskPoll = time.Second
	}
	if opts.DBPath == "" {
		opts.DBPath = filepath.Join(t.TempDir(), "loopback.db")
	}
	ctx := context.Background()
	db := sqlitetest.OpenAt(t, opts.DBPath)
	// The owner's credential: the same token on every instance built on this database.
	cred := ask.Credential{Space: testSpace, Role: ask.RoleOwner, Actor: owner, Person: owner}
	if _, err := gate.Adopt(ctx, db, ownerToken, cred); err != nil {
		t.Fatalf("adopting the owner's token: %v", err)
	}

	blobs, err := blobfs.New(filepath.Join(filepath.Dir(opts.DBPath), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	requests, cancel := context.WithCancel(context.Background())
	var handler http.Handler // set once the server's address is known
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	srv.Config.BaseContext = func(net.Listener) context.Context { return requests }
	srv.Start()
	// Wired as `loopback serve` wires it (shared/app), on this server's address.
	hub := events.NewHub()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if opts.Log != nil {
		logger = slog.New(redact.New(slog.NewJSONHandler(opts.Log, nil)))
	}
	lb := app.New(app.Config{
		Storage: db, Blobs: blobs, Hub: hub, PublicURL: srv.URL,
		Logger: logger,
		Wait:   app.Wait{MaxWait: opts.MaxWait, Progress: opts.Progress, TaskPoll: opts.TaskPoll},
		Now:    opts.Now,
		Limits: limit.Limits{WaitsPerCredential: opts.MaxWaits, StreamsPerCredential: opts.MaxStreams, MCPTurns: opts.Turns},
	})
	svc, agents := lb.Service, lb.MCP
	handler = lb.Handler(nil)

	d := &deployment{
		URL: srv.URL, MCP: srv.URL + "/mcp", Token: ownerToken, DBPath: opts.DBPath,
		DB: db, Service: svc, Hub: hub, Handler: agents, srv: srv, cancel: cancel, drain: lb.Waiter.Drain, letGo: lb.Waiter.Shutdown,
	}
	t.Cleanup(d.stop)
	return d
}

// ownerToken is the owner's token in every test deployment (adopted, like LOOPBACK_TOKEN).
const ownerToken = "lb_test-owner-token-0123456789abcdefghijklmnopqrstuv"

// stop ends the requests in flight, the server and the database, as a shutdown would.
func (d *deployment) stop() {
	d.once.Do(func() {
		d.letGo()
		d.cancel()
		d.srv.Close()
		d.drain() // as serve does: a wait's bookkeeping lands before the store closes
		d.DB.Close()
	})
}

// issue makes a credential of another space (or another actor of this one) and returns its token.
func (d *deployment) issue(t testing.TB, space string, role ask.Role, actor, person ask.Actor) string {
	t.Helper()
	tok, _, err := gate.Issue(context.Background(), d.DB, ask.Credential{Space: space, Role: role, Actor: actor, Person: person})
	if err != nil {
		t.Fatalf("issuing a credential: %v", err)
	}
	return tok
}

// otherSpace makes an owner's credential of a second space.
func (d *deployment) otherSpace(t testing.TB) string {
	t.Helper()
	mallory := ask.Actor{ID: "mallory", Name: "Mallory"}
	return d.issue(t, "elsewhere", ask.RoleOwner, mallory, mallory)
}

// --- the MCP client ---

var testClientInfo = mcp.Implementation{Name: "loopback-test", Version: "9.9"}

type clientOpts struct {
	Token  string // default the owner's
	Legacy bool   // stay on the initialize handshake (protocol 2025-11-25) instead of server/discover
	Info   *mcp.Implementation
}

// connect starts an mcp-go client on the deployment and initializes it.
func (d *deployment) connect(t testing.TB, o clientOpts) *client.Client {
	t.Helper()
	c, err := d.dial(t, o)
	if err != nil {
		t.Fatalf("connecting the MCP client: %v", err)
	}
	return c
}

// dial is connect that returns the error.
func (d *deployment) dial(t testing.TB, o clientOpts) (*client.Client, error) {
	t.Helper()
	if o.Token == "" {
		o.Token = d.Token
	}
	info := testClientInfo
	if o.Info != nil {
		info = *o.Info
	}
	var copts []client.ClientOption
	if o.Legacy {
		// The 2025-11-25 handshake is what today's clients (Claude Code, Cursor) speak; test it on
		// purpose, deprecated or not.
		copts = append(copts, client.WithLegacyProtocolOnly()) //lint:ignore SA1019 testing the handshake clients use today
	}
	tr, err := transport.NewStreamableHTTP(d.MCP, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + o.Token}))
	if err != nil {
		return nil, err
	}
	c := client.NewClient(tr, copts...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = info
	if _, err := c.Initialize(ctx, req); err != nil {
		return nil, err
	}
	return c, nil
}

// callTool calls a tool and fails the test on a protocol error (a tool error is a result).
func callTool(t testing.TB, c *client.Client, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, toolRequest(name, args))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func toolRequest(name string, args any) mcp.CallToolRequest {
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	return req
}

// pending is a tool call running in the background.
type pending struct {
	done   chan struct{}
	res    *mcp.CallToolResult
	err    error
	cancel context.CancelFunc
}

// start calls a tool in a goroutine; the call's context ends with the test or with p.cancel.
func start(t testing.TB, c *client.Client, req mcp.CallToolRequest) *pending {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	p := &pending{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(p.done)
		p.res, p.err = c.CallTool(ctx, req)
	}()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// startTool is start with plain arguments.
func startTool(t testing.TB, c *client.Client, name string, args any) *pending {
	t.Helper()
	return start(t, c, toolRequest(name, args))
}

// result waits for the call to return and fails the test on a protocol error.
func (p *pending) result(t testing.TB) *mcp.CallToolResult {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		t.Fatal("the tool call did not return")
	}
	if p.err != nil {
		t.Fatalf("the tool call failed: %v", p.err)
	}
	return p.res
}

// returned reports whether the call has returned.
func (p *pending) returned() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// --- results ---

// toolReply checks that a result is a successful ToolReply, carried as structuredContent and as
// the same JSON in text content, valid against the contract, and returns it.
func toolReply(t testing.TB, res *mcp.CallToolResult) mcptools.ToolReply {
	t.Helper()
	if res.IsError {
		t.Fatalf("expected a ToolReply, got a tool error: %s", resultText(res))
	}
	if res.StructuredContent == nil {
		t.Fatalf("the result has no structuredContent: %s", resultText(res))
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := contract.ValidateModel("ToolReply", structured); err != nil {
		t.Fatalf("structuredContent is not a ToolReply: %v\n%s", err, structured)
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			texts = append(texts, tc.Text)
		}
	}
	if len(texts) != 2 || len(res.Content) != 3 {
		t.Fatalf("want two text blocks (the words and the JSON) and the words as a resource; got %d blocks: %s", len(res.Content), resultText(res))
	}
	// The words again as an embedded text resource: Claude Code shows the model structuredContent
	// in place of text blocks, and only non-text blocks beside it.
	if r, ok := res.Content[2].(mcp.EmbeddedResource); !ok {
		t.Fatalf("the third block is %T, want the words as an embedded resource", res.Content[2])
	} else if tr, ok := r.Resource.(mcp.TextResourceContents); !ok || tr.Text != texts[0] || !strings.HasPrefix(tr.URI, "loopback://asks/") {
		t.Fatalf("the embedded resource is not the words: %+v", r.Resource)
	}
	if !jsonEqual(t, structured, []byte(texts[1])) {
		t.Fatalf("the second text block is not the same JSON as structuredContent:\nstructured: %s\ntext:       %s", structured, texts[1])
	}
	var tr mcptools.ToolReply
	if err := json.Unmarshal(structured, &tr); err != nil {
		t.Fatalf("decoding the ToolReply: %v", err)
	}
	if words := texts[0]; !strings.Contains(words, "own reply to your ask "+tr.AskID) || jsonEqual(t, structured, []byte(words)) {
		t.Fatalf("the first text block does not say in words whose reply it is, on ask %s: %s", tr.AskID, words)
	}
	return tr
}

// replyWords is the words block of a ToolReply result (toolReply checks its shape).
func replyWords(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	toolReply(t, res)
	tc, _ := mcp.AsTextContent(res.Content[0])
	return tc.Text
}

// toolErr checks that a result is a tool error and returns its text.
func toolErr(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	if !res.IsError {
		t.Fatalf("expected a tool error, got a result: %s", resultText(res))
	}
	return resultText(res)
}

// resultText joins a result's text content.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func jsonEqual(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return false
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return false
	}
	ca, _ := json.Marshal(x)
	cb, _ := json.Marshal(y)
	return bytes.Equal(ca, cb)
}

// --- the person's side, over the HTTP API ---

// askView is the part of an ask (as GET /api/v1/asks/{id} returns it) the tests look at.
type askView struct {
	ID       string           `json:"id"`
	Kind     string           `json:"kind"`
	Status   string           `json:"status"`
	Waiting  bool             `json:"waiting"`
	Project  string           `json:"project"`
	Client   string           `json:"client"`
	RaisedBy *ask.Actor       `json:"raisedBy"`
	Revises  string           `json:"revises"`
	Thread   []map[string]any `json:"thread"`
}

// api makes a request to the HTTP API with a token and returns the status and body.
func (d *deployment) api(t testing.TB, token, method, path string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, d.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// getAsk reads an ask as the owner.
func (d *deployment) getAsk(t testing.TB, id string) askView {
	t.Helper()
	status, body := d.api(t, d.Token, "GET", "/api/v1/asks/"+id, nil)
	if status != http.StatusOK {
		t.Fatalf("GET /api/v1/asks/%s: %d %s", id, status, body)
	}
	var a askView
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("decoding the ask: %v", err)
	}
	return a
}

// reply replies on an ask as the person (the owner), and fails unless it is accepted.
func (d *deployment) reply(t testing.TB, id string, reply any) askView {
	t.Helper()
	status, body := d.api(t, d.Token, "POST", "/api/v1/asks/"+id+"/reply", reply)
	if status != http.StatusOK {
		t.Fatalf("replying on %s: %d %s", id, status, body)
	}
	var a askView
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// snapshot returns the owner's open and recently closed asks.
func (d *deployment) snapshot(t testing.TB) (open, recent []askView) {
	t.Helper()
	status, body := d.api(t, d.Token, "GET", "/api/v1/snapshot", nil)
	if status != http.StatusOK {
		t.Fatalf("GET /api/v1/snapshot: %d %s", status, body)
	}
	var s struct {
		Open   []askView `json:"open"`
		Recent []askView `json:"recent"`
	}
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatal(err)
	}
	return s.Open, s.Recent
}

// askCount is how many asks the owner's space has, open or closed.
func (d *deployment) askCount(t testing.TB) int {
	open, recent := d.snapshot(t)
	return len(open) + len(recent)
}

// waitingAsk waits until exactly n asks are open and the newest is waiting, and returns it: the
// ask a blocking call in flight has just made.
func (d *deployment) waitingAsk(t testing.TB, n int) askView {
	t.Helper()
	var got askView
	eventually(t, "an open ask with an agent waiting on it", func() bool {
		open, _ := d.snapshot(t)
		if len(open) != n || !open[0].Waiting {
			return false
		}
		got = open[0]
		return true
	})
	return got
}

// waitFor waits until the ask's waiting flag is want.
func (d *deployment) waitFor(t testing.TB, id string, want bool) {
	t.Helper()
	eventually(t, fmt.Sprintf("waiting on ask %s to be %v", id, want), func() bool { return d.getAsk(t, id).Waiting == want })
}

// leases is how many holders follow the ask now (waiting calls and tasks), read from the
// deployment's SQLite file.
func (d *deployment) leases(t testing.TB, askID string) int {
	t.Helper()
	db, err := sql.Open("sqlite", d.DBPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM leases WHERE ask_id = ?`, askID).Scan(&n); err != nil {
		t.Fatalf("counting the leases of %s: %v", askID, err)
	}
	return n
}

// renewals returns a function that reports how many times the ask's leases have been written
// (taken or renewed) since, as far as polling them sees: each write moves a lease's expiry.
func (d *deployment) renewals(t testing.TB, askID string) func() int {
	seen := map[string]bool{}
	read := func() {
		db, err := sql.Open("sqlite", d.DBPath)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rows, err := db.Query(`SELECT holder, expires_at FROM leases WHERE ask_id = ?`, askID)
		if err != nil {
			t.Fatalf("reading the leases of %s: %v", askID, err)
		}
		defer rows.Close()
		for rows.Next() {
			var holder, expires string
			if err := rows.Scan(&holder, &expires); err != nil {
				t.Fatal(err)
			}
			seen[holder+" "+expires] = true
		}
	}
	read()
	before := len(seen)
	return func() int {
		read()
		return len(seen) - before
	}
}

// eventually polls cond until it holds (testwait.Eventually, the one copy).
var eventually = testwait.Eventually

// --- raw JSON-RPC over HTTP, for what mcp-go's client does not expose (tasks, session ids) ---

type rpcResponse struct {
	Status int
	Header http.Header
	Result json.RawMessage
	Error  *rpcError
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

var rpcID = struct {
	sync.Mutex
	n int
}{}

// rpc posts one JSON-RPC request to /mcp and returns its response, failing the test unless the
// HTTP status is 200.
func rpc(t testing.TB, url, token string, header map[string]string, method string, params any) rpcResponse {
	t.Helper()
	r, err := doRPC(url, token, header, method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return r
}

// doRPC posts one JSON-RPC request to /mcp and returns its response (from JSON or an SSE
// stream). It is safe to call from any goroutine.
func doRPC(url, token string, header map[string]string, method string, params any) (rpcResponse, error) {
	rpcID.Lock()
	rpcID.n++
	id := rpcID.n
	rpcID.Unlock()
	var out rpcResponse
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return out, err
	}
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		return out, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	out.Status, out.Header = resp.StatusCode, resp.Header
	var msg []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The response is the message with our id; notifications come before it.
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data:")
			if !ok {
				continue
			}
			var probe struct {
				ID any `json:"id"`
			}
			if json.Unmarshal([]byte(data), &probe) == nil && probe.ID != nil {
				msg = []byte(data)
				break
			}
		}
	} else if msg, err = io.ReadAll(resp.Body); err != nil {
		return out, err
	}
	if resp.StatusCode != http.StatusOK {
		return out, fmt.Errorf("HTTP %d %s", resp.StatusCode, msg)
	}
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return out, fmt.Errorf("decoding %q: %w", msg, err)
	}
	out.Result, out.Error = m.Result, m.Error
	return out, nil
}

// mustRPC is rpc that fails on a JSON-RPC error and decodes the result into v.
func mustRPC(t testing.TB, url, token string, header map[string]string, method string, params, v any) {
	t.Helper()
	r := rpc(t, url, token, header, method, params)
	if r.Error != nil {
		t.Fatalf("%s: JSON-RPC error %d: %s", method, r.Error.Code, r.Error.Message)
	}
	if v != nil {
		if err := json.Unmarshal(r.Result, v); err != nil {
			t.Fatalf("%s: decoding %s: %v", method, r.Result, err)
		}
	}
}

// --- inputs ---

func question(project string) map[string]any {
	return map[string]any{
		"question": "Which database should the cache use?",
		"options": []map[string]any{
			{"label": "SQLite", "description": "one file, no server"},
			{"label": "Redis"},
		},
		"project": project,
	}
}

func review(project, revises string) map[string]any {
	r := map[string]any{
		"title": "Switch the cache to SQLite",
		"content": []map[string]any{
			{"type": "markdown", "text": "The cache now lives in **one file**."},
			{"type": "diff", "diff": "--- a/cache.go\n+++ b/cache.go\n@@ -1 +1 @@\n-redis\n+sqlite\n", "filename": "cache.go"},
		},
		"project": project,
	}
	if revises != "" {
		r["revises"] = revises
	}
	return r
}

func briefing(project string, points int) map[string]any {
	ps := make([]map[string]any, points)
	for i := range ps {
		ps[i] = map[string]any{"title": fmt.Sprintf("Finding %d", i+1)}
	}
	return map[string]any{
		"title":    "What the audit found",
		"sections": []map[string]any{{"title": "Findings", "points": ps}},
		"project":  project,
	}
}

// legacyVersion is the last protocol revision with the initialize handshake and sessions.
const legacyVersion = "2025-11-25"

// initSession initializes a session over raw HTTP (protocol 2025-11-25) as the named client,
// and returns the headers that carry it on later requests.
func initSession(t testing.TB, url, token string, info mcp.Implementation) map[string]string {
	t.Helper()
	r := rpc(t, url, token, nil, "initialize", map[string]any{
		"protocolVersion": legacyVersion, "clientInfo": info, "capabilities": map[string]any{},
	})
	if r.Error != nil {
		t.Fatalf("initialize: %s", r.Error.Message)
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("initialize answered without an Mcp-Session-Id")
	}
	return map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": legacyVersion}
}
