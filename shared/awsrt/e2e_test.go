package awsrt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
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
	"github.com/loopback-hq/loopback/shared/mcptools"
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

	// stream is the fan-out's handler the pump calls; delivered, every batch it was handed (a
	// test hands one again, as Lambda does when it retries a batch); handled, every batch whose
	// invocation has returned.
	stream    func(context.Context, lambdaevents.DynamoDBEvent) (lambdaevents.DynamoDBEventResponse, error)
	mu        sync.Mutex
	delivered []lambdaevents.DynamoDBEvent
	handled   []lambdaevents.DynamoDBEvent
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
	d := &deployment{rt: rt, conns: conns, table: table, stream: rt.Stream()}
	d.pump = newPump(t, moto.Config(), moto.DynamoDB(), table, func(ctx context.Context, ev lambdaevents.DynamoDBEvent) (lambdaevents.DynamoDBEventResponse, error) {
		d.mu.Lock()
		d.delivered = append(d.delivered, ev)
		d.mu.Unlock()
		res, err := d.stream(ctx, ev)
		d.mu.Lock()
		d.handled = append(d.handled, ev)
		d.mu.Unlock()
		return res, err
	})
	d.pump.run(50 * time.Millisecond)
	return d
}

// streamed waits until the invocation handed a record of ask id has returned: whatever the fan-out
// does with that change is done.
func (d *deployment) streamed(t *testing.T, id string) {
	t.Helper()
	eventually(t, "the stream's invocation for ask "+id, func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, ev := range d.handled {
			for _, r := range ev.Records {
				for _, v := range r.Change.NewImage {
					if v.DataType() == lambdaevents.DataTypeString && strings.Contains(v.String(), id) {
						return true
					}
				}
			}
		}
		return false
	})
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
	var reply mcptools.ToolReply
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
// went away without a $disconnect (410: forgotten), a client that sends a frame the socket does
// not take ($default: answered, left open), two spaces kept apart, and the snapshot split when it
// is over API Gateway's 128 KB.
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
	// frame the socket does not take: answered with request.failed in $default's response (the
	// route is two-way), and left open (contract revision 8), as the local socket answers it.
	d.conns.hangUp("mine-gone=")
	resp, err := sockets.Default(ctx, wsEvent("$default", "mine-chatty=", nil, `{"type":"hello"}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("$default = %d, %v", resp.StatusCode, err)
	}
	if d.conns.wasClosed("mine-chatty=") {
		t.Error("$default closed a connection for a frame it refused")
	}
	if e := answerFrame(t, resp); e.Type != events.TypeRequestFailed || e.Problem.Code != ask.ERequestInvalid {
		t.Errorf("$default answered %+v, want a request.failed", e)
	}
	if n := len(d.conns.received("mine-chatty=")); n != 1 {
		t.Errorf("mine-chatty received %d frames through @connections, want only its snapshot", n)
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
	if n := len(d.conns.received("mine-gone=")); n != 1 {
		t.Errorf("mine-gone received %d frames, want only its snapshot", n)
	}
	if _, err := d.rt.Store.FindConnection(ctx, "mine-gone=", time.Now()); ask.ErrorCode(err) != ask.ENotFound {
		t.Errorf("mine-gone is still recorded: %v", err)
	}
	d.streamed(t, a.ID)
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
	// Every ask of the snapshot has arrived, in the snapshot frame or an ask.updated after it.
	eventually(t, "the split snapshot, whole", func() bool {
		view, list := d.frames(t, "mine-big=")
		return len(list) >= 3 && len(view.Asks) >= len(snap.Open)+len(snap.Recent)
	})
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

// TestServerlessUploads runs images through the AWS path, straight to S3: request_upload over MCP
// gives a presigned PUT to the bucket and a command, which is run exactly as printed (curl, a
// path with spaces); the bucket's ObjectCreated event, in the shape S3 sends it, goes to the
// upload-check handler; a review naming the upload (sent before the event, so it checks the
// object on the spot and the event then finds the verdict given) opens, the person's inbox reads it (snapshot, then the file: a redirect to a presigned GET on
// the deployment's origin, followed as CloudFront would to the bucket). The same command again is
// refused by S3 (412, a non-zero exit); an SVG labelled PNG is deleted and refused, and a review
// naming it is refused with the reason; bytes that arrive after the ticket expired are refused
// (moto does not enforce a presigned URL's expiry: the checker compares the object's
// LastModified with the ticket's expiry, which is also what catches it on S3 past the grace).
func TestServerlessUploads(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is needed to run the printed command: install curl")
	}
	d := deploy(t)
	ctx := context.Background()
	token := d.owner(t, "sp_images", "ada")
	agent, _, _ := d.agent(t, token)
	dir := filepath.Join(t.TempDir(), "screen shots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var png1 bytes.Buffer
	png.Encode(&png1, image.NewGray(image.Rect(0, 0, 3, 2)))

	tk := requestUpload(t, agent)
	if tk.MaxBytes != 20<<20 {
		t.Errorf("maxBytes = %d, want 20 MiB (the AWS default)", tk.MaxBytes)
	}
	if u, err := url.Parse(tk.UploadURL); err != nil || !strings.HasPrefix(u.Path, "/"+d.rt.Env.Bucket+"/uploads/") ||
		u.Query().Get("X-Amz-Signature") == "" || !strings.Contains(u.Query().Get("X-Amz-SignedHeaders"), "if-none-match") {
		t.Fatalf("uploadUrl %q: want a presigned PUT into the bucket, If-None-Match signed in", tk.UploadURL)
	}
	if !strings.Contains(tk.Command, `-H 'If-None-Match: *'`) || !strings.Contains(tk.Command, `-H 'Content-Type: image/png'`) {
		t.Fatalf("the command does not send the signed headers: %s", tk.Command)
	}
	if left := time.Until(tk.ExpiresAt); left > ask.UploadTTL || left < ask.UploadTTL-time.Minute {
		t.Errorf("the ticket expires in %s, want %s", left, ask.UploadTTL)
	}
	line, out, err := runCommand(t, tk.Command, writeFile(t, dir, "after fix.png", png1.Bytes()))
	if err != nil {
		t.Fatalf("%s\n→ %v: %s", line, err, out)
	}

	// The review is sent, and opens, before the event: it checks the object on the spot.
	var req mcp.CallToolRequest
	req.Params.Name = "request_review"
	req.Params.Arguments = map[string]any{"title": "The fix", "project": "alpha", "content": []map[string]any{
		{"type": "image", "uploadId": tk.UploadID, "caption": "after the fix"},
	}}
	// A progress token: the call waits MaxWait, not the 700 ms quiet wait the steps below outlast
	// on a loaded machine.
	req.Params.Meta = &mcp.Meta{ProgressToken: "review-1"}
	review := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := agent.CallTool(ctx, req)
		if err != nil {
			t.Errorf("request_review: %v", err)
		}
		review <- res
	}()
	var id string
	eventually(t, "the review opens", func() bool {
		snap, err := d.rt.Service.Snapshot(ctx, "sp_images")
		if err == nil && len(snap.Open) == 1 {
			id = snap.Open[0].ID
		}
		return id != ""
	})
	d.objectCreated(t, tk.UploadID, "sp_images")
	shown := callAPI(t, d.rt, "GET", "/api/v1/asks/"+id, token, nil)
	var a ask.Ask
	if json.Unmarshal(shown.Body, &a); a.Review == nil || len(a.Review.Content) != 1 || a.Review.Content[0].UploadID != tk.UploadID {
		t.Fatalf("the review shows %s", shown.Body)
	}
	file := callAPI(t, d.rt, "GET", "/api/v1/files/"+tk.UploadID, token, nil)
	loc := file.Header.Get("Location")
	if file.Status != http.StatusFound || !strings.HasPrefix(loc, "/uploads/") || file.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("GET file = %d %v, want a 302 to a presigned GET on this origin", file.Status, file.Header)
	}
	// S3's response overrides are signed in (moto ignores response-content-disposition).
	q, _ := url.Parse(loc)
	if q.Query().Get("response-content-type") != "image/png" || !strings.Contains(q.Query().Get("response-content-disposition"), tk.UploadID+".png") ||
		q.Query().Get("X-Amz-Signature") == "" {
		t.Fatalf("the redirect %s: want a presigned GET with the type and file name", loc)
	}
	body, header := d.cloudFront(t, loc)
	if !bytes.Equal(body, png1.Bytes()) || header.Get("Content-Type") != "image/png" {
		t.Fatalf("the redirected read: %d bytes, %v", len(body), header)
	}
	other := d.owner(t, "sp_elsewhere", "bob")
	if res := callAPI(t, d.rt, "GET", "/api/v1/files/"+tk.UploadID, other, nil); res.Status != http.StatusNotFound {
		t.Fatalf("another space's GET = %d", res.Status)
	}
	if res := callAPI(t, d.rt, "POST", "/api/v1/asks/"+id+"/reply", token, []byte(`{"outcome":"approved"}`), "Content-Type", "application/json"); res.Status != http.StatusOK {
		t.Fatalf("reply = %d %s", res.Status, res.Body)
	}
	if res := <-review; res == nil || res.IsError {
		t.Fatalf("request_review = %+v", res)
	}

	// The same command again: S3 refuses it (If-None-Match: *), curl says so and exits non-zero.
	if _, out, err := runCommand(t, tk.Command, writeFile(t, dir, "after fix.png", png1.Bytes())); err == nil || !strings.Contains(out, "PreconditionFailed") {
		t.Fatalf("the command a second time: %v, %s", err, out)
	}
	d.objectCreated(t, tk.UploadID, "sp_images") // a repeated event changes nothing
	if u, err := d.rt.Store.StoredUpload(ctx, "sp_images", tk.UploadID); err != nil || u.Size != int64(png1.Len()) {
		t.Fatalf("after a repeated event: %+v, %v", u, err)
	}

	// An SVG labelled PNG: S3 takes it (it checks no bytes), the checker deletes and refuses it.
	svg := requestUpload(t, agent)
	svgFile := writeFile(t, dir, "logo.png", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`))
	if _, out, err := runCommand(t, svg.Command, svgFile); err != nil {
		t.Fatalf("the SVG's PUT: %v %s", err, out)
	}
	d.objectCreated(t, svg.UploadID, "sp_images")
	d.wantRefused(t, svg.UploadID, "SVG")
	req.Params.Arguments = map[string]any{"title": "Logo", "project": "alpha", "content": []map[string]any{
		{"type": "image", "uploadId": svg.UploadID},
	}}
	res, err := agent.CallTool(ctx, req)
	if err != nil || !res.IsError || !strings.Contains(toolText(res), "refused") || !strings.Contains(toolText(res), "SVG") {
		t.Fatalf("a review naming the refused SVG = %v, %v", toolText(res), err)
	}

	// Bytes sent after the ticket expired: refused, by the object's LastModified.
	d.rt.Uploads.TTL, d.rt.Uploads.ArrivalGrace = time.Second, -1
	late := requestUpload(t, agent)
	// S3 dates an object to the second: the PUT must come in a second after the expiry's.
	eventually(t, "the clock past the late ticket's expiry, to the second", func() bool {
		return time.Now().Truncate(time.Second).After(late.ExpiresAt)
	})
	if _, out, err := runCommand(t, late.Command, writeFile(t, dir, "late.png", png1.Bytes())); err != nil {
		t.Fatalf("the late PUT (moto does not enforce expiry): %v %s", err, out)
	}
	d.objectCreated(t, late.UploadID, "sp_images")
	d.wantRefused(t, late.UploadID, "after its upload address expired")
}

// ticket is the UploadTicket request_upload returned.
type ticket struct {
	UploadID, UploadURL, Command string
	ExpiresAt                    time.Time
	MaxBytes                     int64
}

func requestUpload(t *testing.T, agent *client.Client) ticket {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name = "request_upload"
	req.Params.Arguments = map[string]any{"contentType": "image/png"}
	res, err := agent.CallTool(context.Background(), req)
	if err != nil || res.IsError {
		t.Fatalf("request_upload = %v, %v", res, err)
	}
	var tk ticket
	if err := json.Unmarshal(mustJSON(t, res.StructuredContent), &tk); err != nil {
		t.Fatal(err)
	}
	return tk
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runCommand runs a ticket's command as printed, FILE replaced by path, and returns its output.
func runCommand(t *testing.T, command, path string) (line, out string, err error) {
	t.Helper()
	line = strings.ReplaceAll(command, "FILE", path)
	b, err := exec.Command("sh", "-c", line).CombinedOutput()
	return line, string(b), err
}

func toolText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return strings.Join(out, "\n")
}

// objectCreated delivers to the upload-check handler the event S3 sends when an object is put
// under the upload's key (its shape: Records[].eventName, s3.bucket.name, s3.object.key
// form-encoded), as the bucket's notification would.
func (d *deployment) objectCreated(t *testing.T, uploadID, space string) {
	t.Helper()
	key, err := ask.UploadBlobKey(space, uploadID)
	if err != nil {
		t.Fatal(err)
	}
	var ev lambdaevents.S3Event
	raw := fmt.Sprintf(`{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"us-east-1","eventName":"ObjectCreated:Put",
		"s3":{"s3SchemaVersion":"1.0","bucket":{"name":%q,"arn":"arn:aws:s3:::%s"},"object":{"key":%q,"size":1}}}]}`,
		d.rt.Env.Bucket, d.rt.Env.Bucket, url.QueryEscape(blobs3.Prefix+key.String()))
	if err := json.Unmarshal([]byte(raw), &ev); err != nil {
		t.Fatal(err)
	}
	if err := d.rt.CheckUploads(context.Background(), ev); err != nil {
		t.Fatalf("upload-check: %v", err)
	}
	// The same object as EventBridge delivers it (template.yaml's route) finds its verdict given.
	bridge := fmt.Sprintf(`{"version":"0","detail-type":"Object Created","source":"aws.s3","detail":{"bucket":{"name":%q},"object":{"key":%q}}}`,
		d.rt.Env.Bucket, blobs3.Prefix+key.String())
	if err := d.rt.CheckUploadEvent(context.Background(), json.RawMessage(bridge)); err != nil {
		t.Fatalf("upload-check (EventBridge): %v", err)
	}
}

// wantRefused: the upload is refused with a reason containing why, and its object is gone.
func (d *deployment) wantRefused(t *testing.T, uploadID, why string) {
	t.Helper()
	u, err := d.rt.Store.UploadByID(context.Background(), "sp_images", uploadID)
	if err != nil || u.State != ask.UploadRefused || !strings.Contains(u.Refusal, why) {
		t.Fatalf("upload %s = %+v, %v; want it refused (%s)", uploadID, u, err, why)
	}
	key, _ := ask.UploadBlobKey("sp_images", uploadID)
	if _, _, err := d.rt.Blobs.StatBlob(context.Background(), key); !errors.Is(err, ask.ErrBlobNotFound) {
		t.Fatalf("the refused object is still there: %v", err)
	}
}

// cloudFront follows a file read's redirect as the deployment's CloudFront does: /uploads/* goes
// to the bucket with its query (the presigned GET), and nosniff and the sandbox CSP are added.
// (moto is addressed path-style: the bucket's name goes first.)
func (d *deployment) cloudFront(t *testing.T, location string) ([]byte, http.Header) {
	t.Helper()
	resp, err := http.Get(moto.URL + "/" + d.rt.Env.Bucket + location)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the presigned GET = %d %s", resp.StatusCode, b)
	}
	return b, resp.Header
}

// TestServerlessQuietWait: a call whose client sent no progress token cannot hear that it is
// alive, and such clients cut a call at their request timeout (the official SDKs at 60 s) whatever
// comes meanwhile: so its wait ends at QuietMaxWait (700 ms here; 50 s by default) with Loopback's
// own result naming the askId and await_reply, streamed as SSE with comment lines meanwhile
// (CloudFront would cut a response that sent nothing for 60 s). The person replies after that;
// await_reply returns the reply.
func TestServerlessQuietWait(t *testing.T) {
	d := deploy(t)
	token := d.owner(t, "sp_quiet", "ada")
	agent, fu, _ := d.agent(t, token)
	var req mcp.CallToolRequest
	req.Params.Name = "ask_question"
	req.Params.Arguments = map[string]any{"question": "Quiet?", "project": "loopback"}
	start := time.Now()
	res, err := agent.CallTool(context.Background(), req)
	took := time.Since(start)
	if err != nil || !res.IsError {
		t.Fatalf("the quiet wait = %+v, %v; want Loopback's no reply yet", res, err)
	}
	snap, err := d.rt.Service.Snapshot(context.Background(), "sp_quiet")
	if err != nil || len(snap.Open) != 1 {
		t.Fatalf("snapshot = %v, %v", snap, err)
	}
	id := snap.Open[0].ID
	text := res.Content[0].(mcp.TextContent).Text
	if !strings.Contains(text, id) || !strings.Contains(text, "await_reply") {
		t.Fatalf("the result does not name the ask and await_reply: %s", text)
	}
	if took < 700*time.Millisecond || took > 5*time.Second {
		t.Fatalf("the quiet wait returned after %s, want QuietMaxWait (700 ms)", took)
	}
	if !slices.Contains(fu.contentTypes(), "text/event-stream") {
		t.Errorf("the quiet wait was answered as %v, not as a stream of keepalives", fu.contentTypes())
	}
	if res := callAPI(t, d.rt, "POST", "/api/v1/asks/"+id+"/reply", token, []byte(`{"outcome":"answered","selected":[],"text":"yes"}`),
		"Content-Type", "application/json"); res.Status != http.StatusOK {
		t.Fatalf("reply = %d %s", res.Status, res.Body)
	}
	req.Params.Name = "await_reply"
	req.Params.Arguments = map[string]any{"askId": id}
	res, err = agent.CallTool(context.Background(), req)
	if err != nil || res.IsError {
		t.Fatalf("await_reply = %+v, %v", res, err)
	}
	var reply mcptools.ToolReply
	if err := json.Unmarshal(mustJSON(t, res.StructuredContent), &reply); err != nil || reply.Reply.Text != "yes" {
		t.Fatalf("the ToolReply = %+v, %v", reply, err)
	}
}
