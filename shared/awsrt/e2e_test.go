package awsrt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/awstest"
	"github.com/loopback-hq/loopback/shared/blobs3"
	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/dynamo"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/events/eventstest"
)

var moto *awstest.Server

func TestMain(m *testing.M) { awstest.Main(m, &moto) }

// deployment is a stack's worth of Lambdas in this process: a table and a bucket on moto, the
// @connections stand-in, and the stream read from moto into the fan-out.
type deployment struct {
	rt    *awsrt.Runtime
	conns *connections
	pump  *pump
	table string
}

const inboxHost = "inbox.example.test" // the CloudFront domain, as X-Loopback-Host carries it

func deploy(t *testing.T) *deployment {
	t.Helper()
	return deployWith(t, nil)
}

// deployWith is deploy with the environment changed by change first.
func deployWith(t *testing.T, change func(*awsrt.Env)) *deployment {
	t.Helper()
	ctx := context.Background()
	table, bucket := awstest.Name("aws-e2e"), awstest.Name("aws-e2e-images")
	if err := dynamo.CreateTable(ctx, moto.DynamoDB(), table); err != nil {
		t.Fatal(err)
	}
	if err := blobs3.CreateBucket(ctx, moto.S3(), bucket); err != nil {
		t.Fatal(err)
	}
	conns := newConnections(t)
	env := awsrt.Env{
		Table: table, Bucket: bucket, ConnectionsURL: conns.srv.URL,
		MaxWait: 20 * time.Second, Progress: 300 * time.Millisecond, Poll: 50 * time.Millisecond,
		QuietMaxWait: 700 * time.Millisecond,
	}
	if change != nil {
		change(&env)
	}
	rt, err := awsrt.New(moto.Config(), env)
	if err != nil {
		t.Fatal(err)
	}
	d := &deployment{rt: rt, conns: conns, table: table}
	d.pump = newPump(t, moto.Config(), moto.DynamoDB(), table, rt.Stream())
	d.pump.run(50 * time.Millisecond)
	return d
}

func (d *deployment) owner(t *testing.T, space, name string) string {
	t.Helper()
	token, _, err := awsrt.Bootstrap(context.Background(), d.rt.Store, space, name)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// connect opens an event socket through $connect with a fresh ticket, as the inbox does, and
// returns the connection's id once API Gateway would have accepted it.
func (d *deployment) connect(t *testing.T, token, id string) {
	t.Helper()
	res := callAPI(t, d.rt, "POST", "/api/v1/events/tickets", token, nil)
	if res.Status != http.StatusCreated {
		t.Fatalf("POST /api/v1/events/tickets = %d %s", res.Status, res.Body)
	}
	var tk struct{ Ticket string }
	json.Unmarshal(res.Body, &tk)
	resp, err := d.rt.Sockets().Connect(context.Background(), wsEvent("$connect", id, map[string]string{
		"Sec-WebSocket-Protocol": "loopback.v1, loopback.ticket." + tk.Ticket,
		"Origin":                 "https://" + inboxHost,
		"X-Loopback-Host":        inboxHost,
	}, ""))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("$connect = %d %s, %v", resp.StatusCode, resp.Body, err)
	}
	if got := resp.Headers["Sec-WebSocket-Protocol"]; got != "loopback.v1" {
		t.Fatalf("$connect selected %q, want loopback.v1", got)
	}
	d.conns.accept(id)
}

// frames decodes what a connection received, each frame checked against the contract's
// ServerEvent and merged into a view as the inbox merges them.
func (d *deployment) frames(t *testing.T, id string) (*eventstest.View, []events.ServerEvent) {
	t.Helper()
	view := &eventstest.View{}
	var list []events.ServerEvent
	for _, b := range d.conns.received(id) {
		if err := contract.ValidateModel("ServerEvent", b); err != nil {
			t.Fatalf("a frame to %s breaks the contract: %v\n%s", id, err, b)
		}
		var e events.ServerEvent
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		if err := view.Apply(e); err != nil {
			t.Fatalf("connection %s: %v", id, err)
		}
		list = append(list, e)
	}
	return view, list
}

// agent connects an MCP client to the mcp function through its function URL.
func (d *deployment) agent(t *testing.T, token string) (*client.Client, *functionURL, *progressLog) {
	t.Helper()
	fu := newFunctionURL(d.rt, inboxHost)
	tr, err := transport.NewStreamableHTTP("https://abc123.lambda-url.us-east-1.on.aws/mcp",
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}),
		transport.WithHTTPBasicClient(&http.Client{Transport: fu}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	progress := &progressLog{}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			progress.add()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "aws-e2e", Version: "1.0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize over the function URL: %v", err)
	}
	return c, fu, progress
}

type progressLog struct {
	mu sync.Mutex
	n  int
}

func (p *progressLog) add() { p.mu.Lock(); p.n++; p.mu.Unlock() }
func (p *progressLog) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// TestServerlessEndToEnd is the local binary's scenario on the AWS path, with every Lambda
// handler run in this process on real-shaped events against moto: the person's inbox opens its
// socket ($connect with a ticket) and gets the snapshot (sent by the stream fan-out when the
// connection's INSERT comes through the stream); an agent asks over MCP (function URL, response
// streaming) and waits; the socket gets the ask as it opens; the person replies (HTTP API); the
// agent's call returns the reply, having streamed progress meanwhile; the socket sees the ask
// close; $disconnect forgets the connection.
func TestServerlessEndToEnd(t *testing.T) {
	d := deploy(t)
	const space = "sp_e2e"
	token := d.owner(t, space, "ada")

	// The person's inbox: whoami, then the socket.
	if res := callAPI(t, d.rt, "GET", "/api/v1/whoami", token, nil); res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"space":"sp_e2e"`) {
		t.Fatalf("whoami = %d %s", res.Status, res.Body)
	}
	const inbox = "inbox-conn-1="
	d.connect(t, token, inbox)
	eventually(t, "the snapshot on the new connection", func() bool { return len(d.conns.received(inbox)) >= 1 })
	if _, list := d.frames(t, inbox); list[0].Type != events.TypeSnapshot || len(list[0].Snapshot.Open) != 0 {
		t.Fatalf("first frame = %+v, want an empty snapshot", list[0])
	}

	// An agent asks, with a progress token, and waits.
	agent, fu, progress := d.agent(t, token)
	var req mcp.CallToolRequest
	req.Params.Name = "ask_question"
	req.Params.Arguments = map[string]any{"question": "Ship it?", "options": []map[string]any{{"label": "Yes"}, {"label": "No"}}, "project": "loopback"}
	req.Params.Meta = &mcp.Meta{ProgressToken: "wait-1"}
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := agent.CallTool(ctx, req)
		done <- result{res, err}
	}()

	// The socket gets the ask as it opens, and marked waiting.
	var id string
	eventually(t, "the new ask, waiting, on the socket", func() bool {
		view, _ := d.frames(t, inbox)
		for _, a := range view.Asks {
			id = a.ID
			return a.Waiting
		}
		return false
	})
	_, list := d.frames(t, inbox)
	if list[1].Type != events.TypeAskOpened || list[1].Ask.ID != id {
		t.Fatalf("second frame = %s of %v, want ask.opened of %s", list[1].Type, list[1].Ask, id)
	}
	eventually(t, "progress while waiting", func() bool { return progress.count() >= 1 })

	// The person replies over the HTTP API; the agent's call returns the reply.
	res := callAPI(t, d.rt, "POST", "/api/v1/asks/"+id+"/reply", token, []byte(`{"outcome":"answered","selected":["Yes"]}`),
		"Content-Type", "application/json")
	if res.Status != http.StatusOK {
		t.Fatalf("reply = %d %s", res.Status, res.Body)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the agent's call did not return after the reply")
	}
	if r.err != nil || r.res.IsError {
		t.Fatalf("ask_question = %v, %v", r.res, r.err)
	}
	var reply ask.ToolReply
	if err := json.Unmarshal(mustJSON(t, r.res.StructuredContent), &reply); err != nil || reply.AskID != id || reply.Reply.Outcome != ask.OutcomeAnswered {
		t.Fatalf("ToolReply = %+v, %v", reply, err)
	}
	if types := fu.contentTypes(); !slices.Contains(types, "text/event-stream") {
		t.Errorf("no response streamed as SSE through the function URL: %v", types)
	}

	// The socket sees the ask closed, and no longer waiting; its view is the store's.
	eventually(t, "the closed ask, not waiting, on the socket", func() bool {
		view, _ := d.frames(t, inbox)
		a := view.Asks[id]
		return a != nil && a.Status == ask.Closed && !a.Waiting
	})
	view, _ := d.frames(t, inbox)
	stored, err := d.rt.Service.Find(context.Background(), space, id)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := eventstest.JSON(view.Asks[id]), eventstest.JSON(stored); got != want {
		t.Errorf("the socket's view of the ask:\n%s\nthe store's:\n%s", got, want)
	}

	// $disconnect forgets the connection.
	if resp, _ := d.rt.Sockets().Disconnect(context.Background(), wsEvent("$disconnect", inbox, nil, "")); resp.StatusCode != http.StatusOK {
		t.Fatalf("$disconnect = %d", resp.StatusCode)
	}
	if _, err := d.rt.Store.FindConnection(context.Background(), inbox, time.Now()); ask.ErrorCode(err) != ask.ENotFound {
		t.Fatalf("the connection after $disconnect: %v", err)
	}
	if _, failures := d.pump.counts(); failures != 0 {
		t.Errorf("%d stream batches reported failures", failures)
	}
}

// TestServerlessSockets covers the socket's other paths: refused handshakes, a connection that
// went away without a $disconnect (410: forgotten), a client that sends a message ($default:
// closed), two spaces kept apart, and the snapshot split when it is over API Gateway's 128 KB.
func TestServerlessSockets(t *testing.T) {
	d := deploy(t)
	ctx := context.Background()
	mine := d.owner(t, "sp_mine", "ada")
	other := d.owner(t, "sp_other", "bob")
	sockets := d.rt.Sockets()

	// Refusals, each a Problem, in the local socket's order.
	for _, tc := range []struct {
		name    string
		headers map[string]string
		status  int
		code    string
	}{
		{"no subprotocol", map[string]string{"Authorization": "Bearer " + mine}, 400, ask.ERequestInvalid},
		{"another origin", map[string]string{"Sec-WebSocket-Protocol": "loopback.v1", "Origin": "https://evil.example", "X-Loopback-Host": inboxHost, "Authorization": "Bearer " + mine}, 403, "origin.forbidden"},
		{"no credentials", map[string]string{"Sec-WebSocket-Protocol": "loopback.v1"}, 401, ask.EUnauthorized},
		{"unknown ticket", map[string]string{"Sec-WebSocket-Protocol": "loopback.v1, loopback.ticket.nope"}, 401, ask.EUnauthorized},
		{"bad token", map[string]string{"Sec-WebSocket-Protocol": "loopback.v1", "Authorization": "Bearer lb_nope"}, 401, ask.EUnauthorized},
	} {
		resp, err := sockets.Connect(ctx, wsEvent("$connect", "refused=", tc.headers, ""))
		var p struct{ Code string }
		json.Unmarshal([]byte(resp.Body), &p)
		if err != nil || resp.StatusCode != tc.status || p.Code != tc.code || contract.ValidateModel("Problem", []byte(resp.Body)) != nil {
			t.Errorf("%s: $connect = %d %s, %v; want %d %s", tc.name, resp.StatusCode, resp.Body, err, tc.status, tc.code)
		}
	}
	if _, err := d.rt.Store.FindConnection(ctx, "refused=", time.Now()); ask.ErrorCode(err) != ask.ENotFound {
		t.Fatalf("a refused handshake was recorded: %v", err)
	}

	// A program connects with its bearer token; another space's socket and a doomed one too.
	bearer := func(id, token string) {
		resp, err := sockets.Connect(ctx, wsEvent("$connect", id, map[string]string{
			"Sec-WebSocket-Protocol": "loopback.v1", "Authorization": "Bearer " + token}, ""))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("$connect %s = %d %s", id, resp.StatusCode, resp.Body)
		}
		d.conns.accept(id)
	}
	bearer("mine-a=", mine)
	bearer("mine-gone=", mine)
	bearer("mine-chatty=", mine)
	bearer("other-a=", other)
	for _, id := range []string{"mine-a=", "mine-gone=", "mine-chatty=", "other-a="} {
		eventually(t, "the snapshot on "+id, func() bool { return len(d.conns.received(id)) == 1 })
	}

	// mine-gone's client went away without a $disconnect reaching anyone; mine-chatty sends a
	// message, which clients never do: closed, as the local socket closes with 1008.
	d.conns.hangUp("mine-gone=")
	if resp, _ := sockets.Default(ctx, wsEvent("$default", "mine-chatty=", nil, `{"type":"hello"}`)); resp.StatusCode != 200 {
		t.Fatalf("$default = %d", resp.StatusCode)
	}
	if !d.conns.wasClosed("mine-chatty=") {
		t.Error("$default did not close the connection")
	}

	// A change in my space goes to mine-a only; the gone connection is forgotten on its 410.
	a, err := d.rt.Service.AskQuestion(ctx, ask.QuestionInput{Question: "Deploy?", Project: "p"}, ask.Origin{Space: "sp_mine"})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the change on mine-a", func() bool { return len(d.conns.received("mine-a=")) == 2 })
	eventually(t, "the gone connection forgotten", func() bool {
		_, err := d.rt.Store.FindConnection(ctx, "mine-gone=", time.Now())
		return ask.ErrorCode(err) == ask.ENotFound
	})
	for _, id := range []string{"mine-chatty=", "mine-gone="} {
		if n := len(d.conns.received(id)); n != 1 {
			t.Errorf("%s received %d frames, want only its snapshot", id, n)
		}
		if _, err := d.rt.Store.FindConnection(ctx, id, time.Now()); ask.ErrorCode(err) != ask.ENotFound {
			t.Errorf("%s is still recorded: %v", id, err)
		}
	}
	time.Sleep(300 * time.Millisecond) // the stream has long been read by now
	if n := len(d.conns.received("other-a=")); n != 1 {
		t.Errorf("another space's socket received %d frames, want only its snapshot", n)
	}
	_, list := d.frames(t, "mine-a=")
	if list[1].Type != events.TypeAskOpened || list[1].Ask.ID != a.ID {
		t.Errorf("mine-a's second frame = %s, want ask.opened of %s", list[1].Type, a.ID)
	}

	// A snapshot over 128 KB goes out as a snapshot frame that fits and ask.updated frames after
	// it: the merged view is the whole snapshot, and no frame is over the limit.
	big := strings.Repeat("A long question to fill the snapshot. ", 1200) // ~45 KB each
	for range 4 {
		if _, err := d.rt.Service.AskQuestion(ctx, ask.QuestionInput{Question: "Big?", Context: big, Project: "p"}, ask.Origin{Space: "sp_mine"}); err != nil {
			t.Fatal(err)
		}
	}
	bearer("mine-big=", mine)
	snap, err := d.rt.Service.Snapshot(ctx, "sp_mine")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the split snapshot", func() bool { return len(d.conns.received("mine-big=")) >= 3 })
	time.Sleep(300 * time.Millisecond)
	view, list := d.frames(t, "mine-big=")
	if list[0].Type != events.TypeSnapshot {
		t.Fatalf("first frame is %s", list[0].Type)
	}
	for i, b := range d.conns.received("mine-big=") {
		if len(b) > 128_000 {
			t.Errorf("frame %d is %d bytes, over API Gateway's 128 KB", i, len(b))
		}
	}
	if len(view.Asks) != len(snap.Open)+len(snap.Recent) {
		t.Errorf("the merged view has %d asks, the snapshot %d", len(view.Asks), len(snap.Open)+len(snap.Recent))
	}
}

// TestServerlessUploads runs an image through the AWS path: request_upload over MCP (its URL at
// the deployment's public address), the PUT through API Gateway (base64 body) into S3, a refused
// second PUT, and the file read back.
func TestServerlessUploads(t *testing.T) {
	d := deploy(t)
	token := d.owner(t, "sp_images", "ada")
	agent, _, _ := d.agent(t, token)
	var req mcp.CallToolRequest
	req.Params.Name = "request_upload"
	req.Params.Arguments = map[string]any{"contentType": "image/png"}
	res, err := agent.CallTool(context.Background(), req)
	if err != nil || res.IsError {
		t.Fatalf("request_upload = %v, %v", res, err)
	}
	var tk struct{ UploadID, UploadURL string }
	json.Unmarshal(mustJSON(t, res.StructuredContent), &tk)
	u, err := url.Parse(tk.UploadURL)
	if err != nil || u.Host != inboxHost || u.Scheme != "https" {
		t.Fatalf("uploadUrl %q: want it at https://%s (X-Loopback-Host)", tk.UploadURL, inboxHost)
	}
	var png1 bytes.Buffer
	png.Encode(&png1, image.NewGray(image.Rect(0, 0, 3, 2)))
	put := callAPI(t, d.rt, "PUT", u.Path, "", png1.Bytes(), "Content-Type", "image/png")
	if put.Status != http.StatusCreated {
		t.Fatalf("PUT = %d %s", put.Status, put.Body)
	}
	if again := callAPI(t, d.rt, "PUT", u.Path, "", png1.Bytes(), "Content-Type", "image/png"); again.Status != http.StatusGone {
		t.Fatalf("a second PUT = %d %s, want 410", again.Status, again.Body)
	}
	file := callAPI(t, d.rt, "GET", "/api/v1/files/"+tk.UploadID, token, nil)
	if file.Status != http.StatusOK || !bytes.Equal(file.Body, png1.Bytes()) || file.Header.Get("Content-Type") != "image/png" ||
		file.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("GET file = %d %s, %d bytes", file.Status, file.Header, len(file.Body))
	}
	other := d.owner(t, "sp_elsewhere", "bob")
	if res := callAPI(t, d.rt, "GET", "/api/v1/files/"+tk.UploadID, other, nil); res.Status != http.StatusNotFound {
		t.Fatalf("another space's GET = %d", res.Status)
	}
	// Routes API Gateway sends to the $default function answer with the contract's Problems.
	if res := callAPI(t, d.rt, "GET", "/api/v1/nothing", token, nil); res.Status != http.StatusNotFound {
		t.Fatalf("GET /api/v1/nothing = %d", res.Status)
	}
	// The sweeper runs on the same table.
	if _, err := d.rt.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestServerlessQuietWait: a blocking call with nothing to report (no progress token) ends within
// QuietMaxWait, before CloudFront would cut its silent response, with the await_reply result; the
// reply given meanwhile is kept, and await_reply returns it.
// TestServerlessQuietWait: a wait whose client sent no progress token has nothing to report, so
// it streams SSE comment lines instead (CloudFront would cut a response that sends nothing for
// 60 s) and goes on past QuietMaxWait until the person replies.
func TestServerlessQuietWait(t *testing.T) {
	d := deploy(t)
	token := d.owner(t, "sp_quiet", "ada")
	agent, fu, _ := d.agent(t, token)
	var req mcp.CallToolRequest
	req.Params.Name = "ask_question"
	req.Params.Arguments = map[string]any{"question": "Quiet?", "project": "loopback"}
	go func() {
		// Reply well after QuietMaxWait (700 ms here): the wait must still be there.
		time.Sleep(2 * time.Second)
		snap, err := d.rt.Service.Snapshot(context.Background(), "sp_quiet")
		if err != nil || len(snap.Open) != 1 {
			t.Errorf("snapshot = %v, %v", snap, err)
			return
		}
		if res := callAPI(t, d.rt, "POST", "/api/v1/asks/"+snap.Open[0].ID+"/reply", token, []byte(`{"outcome":"answered","selected":[],"text":"yes"}`),
			"Content-Type", "application/json"); res.Status != http.StatusOK {
			t.Errorf("reply = %d %s", res.Status, res.Body)
		}
	}()
	start := time.Now()
	res, err := agent.CallTool(context.Background(), req)
	if err != nil || res.IsError {
		t.Fatalf("the quiet wait = %+v, %v", res, err)
	}
	if took := time.Since(start); took < 2*time.Second {
		t.Fatalf("the quiet wait returned after %s, before the reply", took)
	}
	var reply ask.ToolReply
	if err := json.Unmarshal(mustJSON(t, res.StructuredContent), &reply); err != nil || reply.Reply.Text != "yes" {
		t.Fatalf("the ToolReply = %+v, %v", reply, err)
	}
	if !slices.Contains(fu.contentTypes(), "text/event-stream") {
		t.Errorf("the quiet wait was answered as %v, not as a stream of keepalives", fu.contentTypes())
	}
}
