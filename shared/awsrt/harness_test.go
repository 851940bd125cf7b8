package awsrt_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/awslocal"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/contract"
	lbevents "github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/samtemplate"
	"github.com/loopback-hq/loopback/shared/testwait"
)

// --- the @connections endpoint (shared/awslocal) ----------------------------------------------

// connections is awslocal's @connections endpoint, as aws-local serves it, with recording peers
// in place of sockets: what each connection received, and whether a DeleteConnection closed it.
type connections struct {
	*awslocal.Connections
	srv *httptest.Server

	mu     sync.Mutex
	frames map[string][][]byte
	closed map[string]bool // closed by a DeleteConnection
}

func newConnections(t *testing.T) *connections {
	c := &connections{Connections: awslocal.NewConnections(), frames: map[string][][]byte{}, closed: map[string]bool{}}
	c.srv = httptest.NewServer(c.Connections)
	t.Cleanup(c.srv.Close)
	return c
}

// recorder is one connection's peer.
type recorder struct {
	c  *connections
	id string
}

func (r recorder) Send(_ context.Context, data []byte) error {
	r.c.mu.Lock()
	r.c.frames[r.id] = append(r.c.frames[r.id], data)
	r.c.mu.Unlock()
	return nil
}

func (r recorder) Close() {
	r.c.mu.Lock()
	r.c.closed[r.id] = true
	r.c.mu.Unlock()
}

// accept opens a connection, as API Gateway does once $connect answered 200.
func (c *connections) accept(id string) { c.Open(id, recorder{c, id}) }

// hangUp closes a connection from the client's side without a $disconnect reaching anyone.
func (c *connections) hangUp(id string) { c.Gone(id) }

func (c *connections) received(id string) [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.frames[id]...)
}

func (c *connections) wasClosed(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed[id]
}

// --- the stream, as Lambda's event source mapping reads it (awslocal.Pump) ---------------------

// pump is awslocal's event source mapping with template.yaml's settings for the fan-out,
// reading from the start of the stream (the tests' tables are new).
type pump struct {
	*awslocal.Pump
	t *testing.T
}

func newPump(t *testing.T, cfg aws.Config, db *dynamodb.Client, table string, handler func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)) *pump {
	out, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := samtemplate.Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	source := *tmpl.Function("StreamFanoutFunction").Stream
	source.StartingPosition = "TRIM_HORIZON"
	return &pump{t: t, Pump: &awslocal.Pump{Client: dynamodbstreams.NewFromConfig(cfg), ARN: aws.ToString(out.Table.LatestStreamArn),
		Source: source, Handler: handler, Region: "us-east-1", Logger: slog.Default()}}
}

// run polls every interval until the test ends.
func (p *pump) run(interval time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := p.Once(ctx); err != nil && ctx.Err() == nil {
				p.t.Errorf("reading the stream: %v", err)
				return
			}
			select {
			case <-time.After(interval):
			case <-ctx.Done():
			}
		}
	}()
	p.t.Cleanup(func() { cancel(); <-done })
}

func (p *pump) counts() (handled, failures int) { return p.Counts() }

// --- API Gateway HTTP API (payload 2.0) ---------------------------------------------------------

// apiResponse is what API Gateway made of a function's answer.
type apiResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// callAPI sends one request to the api-* handler as API Gateway's HTTP API would: an
// APIGatewayV2HTTPRequest, the body base64-encoded when it is binary. Every JSON answer is
// checked against the contract.
func callAPI(t *testing.T, rt *awsrt.Runtime, method, target, token string, body []byte, header ...string) apiResponse {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(method, target, bytes.NewReader(body))
	r.Header.Set("User-Agent", "test")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	if len(body) > 0 && r.Header.Get("Content-Type") == "" && json.Valid(body) {
		r.Header.Set("Content-Type", "application/json")
	}
	ev := awslocal.APIRequest(r, body, "$default", nil, "api123")
	res, err := httpadapter.NewV2(rt.API()).ProxyWithContext(context.Background(), ev)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	out := apiResponse{Status: res.StatusCode, Header: http.Header{}}
	for k, v := range res.Headers {
		out.Header.Set(k, v)
	}
	for k, vs := range res.MultiValueHeaders {
		for _, v := range vs {
			out.Header.Add(k, v)
		}
	}
	for _, c := range res.Cookies { // payload 2.0 carries Set-Cookie apart
		out.Header.Add("Set-Cookie", c)
	}
	out.Body = []byte(res.Body)
	if res.IsBase64Encoded {
		if out.Body, err = base64.StdEncoding.DecodeString(res.Body); err != nil {
			t.Fatal(err)
		}
	}
	// (A HEAD's body never reaches the client; its GET is checked.)
	if ct := out.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") && method != http.MethodHead {
		err := contract.ValidateResponse(method, u.Path, out.Status, ct, out.Body)
		if (errors.Is(err, contract.ErrUndeclaredStatus) || errors.Is(err, contract.ErrUnknownOperation)) && out.Status >= 400 {
			err = contract.ValidateModel("Problem", out.Body)
		}
		if err != nil {
			t.Errorf("%s %s → %d breaks the contract: %v\n%s", method, target, out.Status, err, out.Body)
		}
	}
	return out
}

// --- Lambda function URL with response streaming (awslocal.FunctionURL) ------------------------

// functionURL is awslocal's function URL in front of the mcp function, as an http.RoundTripper,
// noting the Content-Type of each response.
type functionURL struct {
	*awslocal.FunctionURL

	mu    sync.Mutex
	types []string // Content-Type of each response, in order
}

func newFunctionURL(rt *awsrt.Runtime, forwardedHost string) *functionURL {
	f := &functionURL{FunctionURL: awslocal.NewFunctionURL(rt.MCP(), time.Minute)}
	f.ForwardedHost = forwardedHost
	return f
}

func (f *functionURL) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := f.FunctionURL.RoundTrip(r)
	if err == nil {
		f.mu.Lock()
		f.types = append(f.types, res.Header.Get("Content-Type"))
		f.mu.Unlock()
	}
	return res, err
}

func (f *functionURL) contentTypes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.types...)
}

// --- API Gateway WebSocket ----------------------------------------------------------------------

func wsEvent(route, id string, headers map[string]string, body string) events.APIGatewayWebsocketProxyRequest {
	eventType := map[string]string{"$connect": "CONNECT", "$disconnect": "DISCONNECT"}[route]
	if eventType == "" {
		eventType = "MESSAGE"
	}
	return awslocal.WebSocketEvent(route, eventType, id, "ws123", "prod", time.Now(), headers, nil, body)
}

// answerFrame is what $default's response sends back on its connection (a route response): one
// frame, checked against the contract's ServerEvent.
func answerFrame(t *testing.T, resp events.APIGatewayProxyResponse) lbevents.ServerEvent {
	t.Helper()
	if err := contract.ValidateModel("ServerEvent", []byte(resp.Body)); err != nil {
		t.Fatalf("$default's response body breaks the contract: %v\n%s", err, resp.Body)
	}
	var e lbevents.ServerEvent
	if err := json.Unmarshal([]byte(resp.Body), &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// eventually polls cond until it holds (testwait.Eventually, the one copy).
var eventually = testwait.Eventually

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b)
}

// modernRequest is an MCP 2026-07-28 request to the mcp function's URL, as client with the client
// capabilities caps; meta adds to params' _meta. id 0 makes it a notification. Mcp-Name is the
// tool's or the task's the params name.
func modernRequest(token string, id int, method, client string, caps, params, meta map[string]any) *http.Request {
	m := map[string]any{
		mcp.MetaKeyProtocolVersion:    mcp.ProtocolVersion20260728,
		mcp.MetaKeyClientInfo:         map[string]any{"name": client, "version": "1.0"},
		mcp.MetaKeyClientCapabilities: caps,
	}
	for k, v := range meta {
		m[k] = v
	}
	params["_meta"] = m
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id != 0 {
		msg["id"] = id
	}
	body, _ := json.Marshal(msg)
	req, _ := http.NewRequest("POST", "https://abc123.lambda-url.us-east-1.on.aws/mcp", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
	req.Header.Set(mcp.HeaderMethod, method)
	for _, key := range []string{"name", "taskId"} {
		if n, ok := params[key].(string); ok {
			req.Header.Set(mcp.HeaderName, n)
		}
	}
	return req
}
