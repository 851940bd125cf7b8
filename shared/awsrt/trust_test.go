package awsrt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/awstest"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi/apitest"
	"github.com/loopback-hq/loopback/shared/mcptools/mcptest"
	"github.com/loopback-hq/loopback/shared/push/pushtest"
	"github.com/loopback-hq/loopback/shared/samtemplate"
)

// The trust model on the AWS path (docs/trust.md): the role matrix through the api-* and
// $connect handlers, and a revocation (as `make revoke` makes it) ending a teammate's sockets
// through the stream fan-out's @connections DELETE, voiding her ticket, and ending an agent's
// waiting call on the mcp function.

type credentials struct {
	owner, teammate, agent, revoked, other string
}

func (d *deployment) credentials(t *testing.T, space string) credentials {
	t.Helper()
	ctx := context.Background()
	var c credentials
	c.owner = d.owner(t, space, "ada")
	var err error
	if c.teammate, _, err = awsrt.AddPerson(ctx, d.rt.Store, space, "grace"); err != nil {
		t.Fatal(err)
	}
	if c.agent, _, err = awsrt.AddAgent(ctx, d.rt.Store, space, awsrt.DefaultAgentName); err != nil {
		t.Fatal(err)
	}
	var gone *ask.Credential
	if c.revoked, gone, err = awsrt.AddAgent(ctx, d.rt.Store, space, "old-laptop"); err != nil {
		t.Fatal(err)
	}
	if err := d.rt.Service.Revoke(ctx, d.rt.Store, d.rt.Store, space, gone.ID); err != nil {
		t.Fatal(err)
	}
	c.other = d.owner(t, space+"_other", "eve")
	return c
}

// storedUpload is an image of space's, stored as an agent stores one on AWS: request_upload as
// token, a PUT of the bytes to the presigned URL (S3 on moto), and S3's event to the checker.
func (d *deployment) storedUpload(t *testing.T, token, space string) string {
	t.Helper()
	agent, _, _ := d.agent(t, token)
	tk := requestUpload(t, agent)
	var img bytes.Buffer
	png.Encode(&img, image.NewGray(image.Rect(0, 0, 2, 2)))
	req, err := http.NewRequest("PUT", tk.UploadURL, bytes.NewReader(img.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "image/png")
	req.Header.Set("If-None-Match", "*")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("PUT to the presigned URL: %d", res.StatusCode)
	}
	d.objectCreated(t, tk.UploadID, space)
	return tk.UploadID
}

func TestServerlessRoleMatrix(t *testing.T) {
	ctx := context.Background()
	prefix := "/loopback/" + awstest.Name("matrix") + "/vapid"
	if _, _, err := awsrt.EnsureVAPID(ctx, ssm.NewFromConfig(moto.Config()), prefix); err != nil {
		t.Fatal(err)
	}
	d := deployWith(t, func(e *awsrt.Env) { e.VAPIDParameter = prefix })
	const space = "sp_matrix"
	creds := d.credentials(t, space)
	roles := []struct{ name, token string }{
		{"owner", creds.owner}, {"teammate", creds.teammate}, {"agent", creds.agent}, {"revoked", creds.revoked}, {"other space", creds.other},
	}
	fresh := func() string {
		a, err := d.rt.Service.AskQuestion(ctx, ask.QuestionInput{Question: "Ship?", Project: "matrix"}, ask.Origin{Space: space})
		if err != nil {
			t.Fatal(err)
		}
		return a.ID
	}
	subscription := func(n int) string {
		b, _ := pushtest.NewBrowser()
		body := mustJSON(t, map[string]any{"endpoint": fmt.Sprintf("https://push.invalid/matrix-%d", 100+n), "keys": map[string]string{"p256dh": b.P256dh(), "auth": b.Auth()}})
		var out struct{ ID string }
		json.Unmarshal(callAPI(t, d.rt, "POST", "/api/v1/push/subscriptions", creds.owner, body).Body, &out)
		return out.ID
	}
	pb, _ := pushtest.NewBrowser()
	pushBody := mustJSON(t, map[string]any{"endpoint": "https://push.invalid/matrix", "keys": map[string]string{"p256dh": pb.P256dh(), "auth": pb.Auth()}})
	readable := fresh()
	stored := d.storedUpload(t, creds.agent, space)

	// The role matrix (apitest.Matrix, the table the local binary runs too): every route API
	// Gateway's HTTP API has in template.yaml, the WebSocket API's $connect and MCP on the
	// function URL.
	tmpl, err := samtemplate.Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"GET /api/v1/events", "POST /mcp"}
	for _, f := range tmpl.Functions {
		for _, ev := range f.Events {
			if strings.HasPrefix(ev.Path, "/slack/") {
				// Slack's requests carry Slack's signature, not a credential (and the install
				// a person's only): shared/awslocal's TestDeploymentSlack checks them.
				continue
			}
			if strings.HasPrefix(ev.Path, "/auth/") {
				// Single sign-on's pages take no Loopback credential (the browser, then the
				// provider's redirect): shared/sso's tests and web/test/e2e/sso.test.mjs check them.
				continue
			}
			if strings.HasPrefix(ev.Path, "/.well-known/") || strings.HasPrefix(ev.Path, "/oauth/") {
				// MCP OAuth's endpoints take no Loopback credential (OAuth's public clients,
				// the person's browser): shared/oauth's tests check them as the RFCs state
				// them, shared/awslocal's TestMCPOAuthOnTheAWSPath on these functions.
				continue
			}
			keys = append(keys, ev.Key())
		}
	}
	sockets := d.rt.Sockets()
	apitest.RoleMatrix(t, apitest.Deployment{
		Routes: keys,
		Elsewhere: map[string]string{
			"PUT /api/v1/uploads/{spaceId}/{token}": "on AWS an upload ticket is a presigned S3 PUT; this path falls through to $default (below)",
		},
		OK: map[string]int{
			// A file read redirects to a presigned GET of the object (through CloudFront's /uploads/*).
			"GET /api/v1/files/{uploadId}":  http.StatusFound,
			"HEAD /api/v1/files/{uploadId}": http.StatusFound,
			// API Gateway answers the handshake (101) when $connect says 200.
			"GET /api/v1/events": http.StatusOK,
		},
		Call: func(t *testing.T, key string, rt apitest.Row, i int) (int, []byte) {
			role := roles[i]
			method, _, _ := strings.Cut(key, " ")
			path, id := rt.Path, ""
			if strings.Contains(path, "{fresh}") {
				id = fresh()
				path = strings.Replace(path, "{fresh}", id, 1)
			}
			path = strings.Replace(path, "{ask}", readable, 1)
			path = strings.Replace(path, "{upload}", stored, 1)
			if strings.Contains(path, "{subscription}") { // a new one for each call
				sub := subscription(i)
				path = strings.Replace(path, "{subscription}", sub, 1)
			}
			var body []byte
			switch rt.Body {
			case "":
			case "{push}":
				body = pushBody
			default:
				body = []byte(rt.Body)
			}
			switch key {
			case "GET /api/v1/events":
				resp, err := sockets.Connect(ctx, wsEvent("$connect", "matrix-"+string(rune('a'+i))+"=", map[string]string{
					"Sec-WebSocket-Protocol": "loopback.v1", "Authorization": "Bearer " + role.token}, ""))
				if err != nil {
					t.Fatalf("$connect as %s: %v", role.name, err)
				}
				return resp.StatusCode, []byte(resp.Body)
			case "POST /mcp":
				req, _ := http.NewRequest("POST", "https://abc123.lambda-url.us-east-1.on.aws/mcp", strings.NewReader(
					`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"matrix","version":"1"}}}`))
				req.Header.Set("Authorization", "Bearer "+role.token)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				res, err := newFunctionURL(d.rt, inboxHost).RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				return res.StatusCode, b
			}
			if method == "ANY" {
				method = "GET"
			}
			res := callAPI(t, d.rt, method, path, role.token, body, "Content-Type", "application/json", "X-Loopback-Host", inboxHost)
			if id != "" && res.Status != 200 {
				// A refused reply wrote nothing.
				a, err := d.rt.Service.Find(ctx, space, id)
				if err != nil || a.Status != ask.AwaitingHuman || len(a.Thread) != 0 {
					t.Errorf("a reply refused to %s changed the ask: %+v %v", role.name, a, err)
				}
			}
			return res.Status, res.Body
		},
	})
	// The local binary's upload route has no function on AWS (the URL is the credential there, a
	// presigned S3 PUT): it falls through to $default, this same handler, which knows no ticket of
	// S3's: 404, whoever's token comes with it.
	for _, role := range roles {
		res := callAPI(t, d.rt, "PUT", "/api/v1/uploads/"+space+"/lbu_not-a-ticket-0123456789", role.token, []byte("x"), "Content-Type", "image/png")
		if res.Status != 404 {
			t.Errorf("PUT /api/v1/uploads/… as %s: %d %s, want 404", role.name, res.Status, res.Body)
		}
	}
	// A reply's `by` is always a person: the teammate's names her.
	var replied ask.Ask
	json.Unmarshal(callAPI(t, d.rt, "POST", "/api/v1/asks/"+fresh()+"/reply", creds.teammate, []byte(`{"outcome":"answered","selected":[],"text":"mine"}`)).Body, &replied)
	if n := len(replied.Thread); n == 0 || replied.Thread[n-1].By == nil || replied.Thread[n-1].By.Name != "grace" {
		t.Errorf("the teammate's reply: %+v", replied.Thread)
	}
	// Every tool × every live credential, on the mcp function.
	client := func(token string) mcptest.Caller { c, _, _ := d.agent(t, token); return c }
	mcptest.ToolMatrix(t, d.rt.Service, d.rt.Store, space, []mcptest.Role{
		{Name: "owner", Space: space, Person: "ada", Client: client(creds.owner)},
		{Name: "teammate", Space: space, Person: "grace", Client: client(creds.teammate)},
		{Name: "agent", Space: space, Person: "ada", Client: client(creds.agent)},
		{Name: "other space", Space: space + "_other", Person: "eve", Client: client(creds.other)},
	})
}

func TestServerlessRevocation(t *testing.T) {
	d := deploy(t)
	ctx := context.Background()
	const space = "sp_revoke"
	creds := d.credentials(t, space)
	grace, err := d.rt.Gate.Check(ctx, creds.teammate)
	if err != nil {
		t.Fatal(err)
	}
	agentCred, err := d.rt.Gate.Check(ctx, creds.agent)
	if err != nil {
		t.Fatal(err)
	}

	// Grace's inbox has a socket open (by ticket) and a ticket in hand; the agent waits.
	d.connect(t, creds.teammate, "grace-1=")
	eventually(t, "grace's snapshot", func() bool { return len(d.conns.received("grace-1=")) >= 1 })
	res := callAPI(t, d.rt, "POST", "/api/v1/events/tickets", creds.teammate, nil)
	var unused struct{ Ticket string }
	json.Unmarshal(res.Body, &unused)

	agent, _, _ := d.agent(t, creds.agent)
	var req mcp.CallToolRequest
	req.Params.Name = "ask_question"
	req.Params.Arguments = map[string]any{"question": "Still there?", "project": "revoke"}
	req.Params.Meta = &mcp.Meta{ProgressToken: "revoke-1"}
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, err := agent.CallTool(context.Background(), req)
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	eventually(t, "the agent waits", func() bool {
		open, _ := d.rt.Store.OpenAsks(ctx, space)
		return len(open) == 1 && open[0].Waiting
	})

	// And a task of the agent's, as tasks/get leaves it between polls: its lease on a second ask.
	polled, err := d.rt.Service.AskQuestion(ctx, ask.QuestionInput{Question: "Polled?", Project: "revoke"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	now := d.rt.Service.Now()
	task := &ask.Task{ID: "task-revoke", Space: space, CredentialID: agentCred.ID, AskID: polled.ID, Tool: "ask_question",
		Status: ask.TaskWorking, TTL: time.Hour, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := d.rt.Store.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	if err := d.rt.Service.Follow(ctx, space, polled.ID, task.ID, time.Hour); err != nil {
		t.Fatal(err)
	}

	// Revoked as `make revoke` does it, from another machine.
	start := time.Now()
	for _, id := range []string{grace.ID, agentCred.ID} {
		if err := d.rt.Service.Revoke(ctx, d.rt.Store, d.rt.Store, space, id); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "grace's socket is disconnected through @connections", func() bool { return d.conns.wasClosed("grace-1=") })
	eventually(t, "the revoked credential's connection is forgotten", func() bool {
		_, err := d.rt.Store.FindConnection(ctx, "grace-1=", time.Now())
		return ask.ErrorCode(err) == ask.ENotFound
	})
	resp, _ := d.rt.Sockets().Connect(ctx, wsEvent("$connect", "grace-2=", map[string]string{
		"Sec-WebSocket-Protocol": "loopback.v1, loopback.ticket." + unused.Ticket,
		"Origin":                 "https://" + inboxHost, "X-Loopback-Host": inboxHost}, ""))
	if resp.StatusCode != 401 {
		t.Errorf("a ticket issued before the revoke: $connect = %d %s", resp.StatusCode, resp.Body)
	}
	select {
	case r := <-done:
		if r == nil || !r.IsError || !strings.Contains(r.Content[0].(mcp.TextContent).Text, "revoked") {
			t.Errorf("the waiting call ended with %+v; want a tool error saying the credential was revoked", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting call did not end after its credential was revoked")
	}
	t.Logf("socket closed and wait ended %s after the revoke", time.Since(start).Round(time.Millisecond))
	// The ask stays for the person, and the owner still answers it.
	eventually(t, "nobody is shown waiting", func() bool {
		open, _ := d.rt.Store.OpenAsks(ctx, space)
		return len(open) == 2 && !open[0].Waiting && !open[1].Waiting
	})
	if got, err := d.rt.Store.FindTask(ctx, space, task.ID, time.Now()); err != nil || got.Status != ask.TaskFailed || got.Message != ask.RevokedTaskMessage {
		t.Errorf("the revoked agent's task: %+v %v; want failed", got, err)
	}
	if _, err := (&gate.Gate{Credentials: d.rt.Store}).Check(ctx, creds.owner); err != nil {
		t.Errorf("the owner's token: %v", err)
	}
}

// syncBuffer is a log output the functions write to from many goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServerlessLogsHoldNoCredentials runs what the functions log (API requests with tokens,
// refusals, an upload URL sent to the API route, a refused $connect by token and by ticket, MCP
// calls handing out a presigned upload URL, the upload checker on a key that is not an upload's)
// and greps every JSON log line of the run for each credential it used.
func TestServerlessLogsHoldNoCredentials(t *testing.T) {
	logs := &syncBuffer{}
	d := deployWith(t, func(e *awsrt.Env) { e.LogOutput = logs })
	ctx := context.Background()
	const space = "sp_logs"
	creds := d.credentials(t, space)
	callAPI(t, d.rt, "GET", "/api/v1/snapshot", creds.owner, nil)
	callAPI(t, d.rt, "GET", "/api/v1/snapshot", creds.agent, nil)
	callAPI(t, d.rt, "GET", "/api/v1/snapshot", creds.revoked, nil)
	upload := "lbu_" + strings.Repeat("S", 43)
	callAPI(t, d.rt, "PUT", "/api/v1/uploads/"+space+"/"+upload, "", []byte("x"), "Content-Type", "image/png")
	res := callAPI(t, d.rt, "POST", "/api/v1/events/tickets", creds.teammate, nil)
	var tk struct{ Ticket string }
	json.Unmarshal(res.Body, &tk)
	d.rt.Sockets().Connect(ctx, wsEvent("$connect", "logs-1=", map[string]string{"Sec-WebSocket-Protocol": "loopback.v1", "Authorization": "Bearer " + creds.agent}, ""))
	d.rt.Sockets().Connect(ctx, wsEvent("$connect", "logs-2=", map[string]string{"Sec-WebSocket-Protocol": "loopback.v1, loopback.ticket." + tk.Ticket, "Origin": "https://evil.example"}, ""))

	agent, _, _ := d.agent(t, creds.agent)
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = "request_upload", map[string]any{"contentType": "image/png"}
	r, err := agent.CallTool(ctx, req)
	if err != nil || r.IsError {
		t.Fatalf("request_upload: %v %+v", err, r)
	}
	var ticket struct{ UploadURL string }
	json.Unmarshal([]byte(mcptest.Text(r)), &ticket)
	u, err := url.Parse(ticket.UploadURL)
	if err != nil || u.Query().Get("X-Amz-Signature") == "" {
		t.Fatalf("the upload URL %q is not a presigned one", ticket.UploadURL)
	}
	// The checker, handed a key that names no upload (with the presigned URL's query in it).
	bridge, _ := json.Marshal(map[string]any{"version": "0", "detail-type": "Object Created", "source": "aws.s3",
		"detail": map[string]any{"bucket": map[string]string{"name": d.rt.Env.Bucket}, "object": map[string]string{"key": "uploads/nope/" + upload + "?" + u.RawQuery}}})
	d.rt.CheckUploadEvent(ctx, bridge)

	// The rest is logged before the calls above return; a request's line, once it is written
	// (after the response, for a streamed one).
	eventually(t, "the functions' request lines, request_upload's too", func() bool {
		log := logs.String()
		return strings.Contains(log, `"msg":"api"`) && strings.Contains(log, `"tool":"request_upload"`)
	})
	log := logs.String()
	secrets := map[string]string{
		"the owner's token": creds.owner, "the teammate's token": creds.teammate, "the agent's token": creds.agent,
		"the revoked token": creds.revoked, "an upload token": upload, "a ticket": tk.Ticket,
		"the upload URL's signature": u.Query().Get("X-Amz-Signature"),
	}
	for name, secret := range secrets {
		if secret == "" {
			t.Fatalf("%s is empty", name)
		}
		if strings.Contains(log, secret) {
			t.Errorf("%s is in the functions' log:\n%s", name, log)
		}
	}
}
