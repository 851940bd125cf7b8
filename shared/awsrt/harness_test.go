package awsrt_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/contract"
)

// --- the @connections stand-in ----------------------------------------------------------------

// connections stands in for API Gateway's management API: it records every post, answers 410
// for a connection that is not open (never opened, closed by the client, or closed by a
// DeleteConnection), as API Gateway does. moto's apigatewaymanagementapi accepts any id and keeps
// posts out of reach, so the tests need their own.
type connections struct {
	srv *httptest.Server

	mu     sync.Mutex
	open   map[string]bool
	frames map[string][][]byte
	closed map[string]bool // closed by a DeleteConnection
	posts  int
}

func newConnections(t *testing.T) *connections {
	c := &connections{open: map[string]bool{}, frames: map[string][][]byte{}, closed: map[string]bool{}}
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *connections) serve(w http.ResponseWriter, r *http.Request) {
	id, ok := strings.CutPrefix(r.URL.Path, "/@connections/")
	if !ok || r.Header.Get("Authorization") == "" {
		http.Error(w, `{"message":"Forbidden"}`, http.StatusForbidden)
		return
	}
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.open[id] {
		w.Header().Set("X-Amzn-ErrorType", "GoneException")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusGone)
		io.WriteString(w, `{"message":"Gone"}`)
		return
	}
	switch r.Method {
	case http.MethodPost:
		c.posts++
		c.frames[id] = append(c.frames[id], body)
		w.WriteHeader(http.StatusOK)
	case http.MethodDelete:
		delete(c.open, id)
		c.closed[id] = true
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

// accept opens a connection, as API Gateway does once $connect answered 200.
func (c *connections) accept(id string) {
	c.mu.Lock()
	c.open[id] = true
	c.mu.Unlock()
}

// hangUp closes a connection from the client's side without a $disconnect reaching anyone.
func (c *connections) hangUp(id string) {
	c.mu.Lock()
	delete(c.open, id)
	c.mu.Unlock()
}

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

// --- the stream, as Lambda's event source mapping reads it -----------------------------------

// pump reads the table's stream from moto and hands its records to the stream-fanout handler as
// Lambda would: events.DynamoDBEvent, made from the JSON Lambda sends. It takes a fresh shard
// iterator on every poll (moto's iterators go wrong after a cancelled transaction), from just
// after the last record handled; a batch whose response names a failed record is read again
// from that record.
type pump struct {
	t       *testing.T
	client  *dynamodbstreams.Client
	arn     string
	handler func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

	mu       sync.Mutex
	after    map[string]string // shard → last sequence number handled
	handled  int
	failures int
}

func newPump(t *testing.T, cfg aws.Config, db *dynamodb.Client, table string, handler func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)) *pump {
	out, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	return &pump{t: t, client: dynamodbstreams.NewFromConfig(cfg), arn: aws.ToString(out.Table.LatestStreamArn),
		handler: handler, after: map[string]string{}}
}

// run polls every interval until the test ends.
func (p *pump) run(interval time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := p.once(ctx); err != nil && ctx.Err() == nil {
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

// once reads every shard once and hands over what it found, one batch per shard.
func (p *pump) once(ctx context.Context) error {
	desc, err := p.client.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(p.arn)})
	if err != nil {
		return err
	}
	for _, sh := range desc.StreamDescription.Shards {
		shard := aws.ToString(sh.ShardId)
		p.mu.Lock()
		after := p.after[shard]
		p.mu.Unlock()
		in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(p.arn), ShardId: aws.String(shard), ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon}
		if after != "" {
			in.ShardIteratorType, in.SequenceNumber = streamtypes.ShardIteratorTypeAfterSequenceNumber, aws.String(after)
		}
		it, err := p.client.GetShardIterator(ctx, in)
		if err != nil {
			return err
		}
		out, err := p.client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator, Limit: aws.Int32(100)})
		if err != nil {
			return err
		}
		if len(out.Records) == 0 {
			continue
		}
		ev, err := lambdaEvent(p.arn, out.Records)
		if err != nil {
			return err
		}
		resp, err := p.handler(ctx, ev)
		if err != nil {
			return err
		}
		last := aws.ToString(out.Records[len(out.Records)-1].Dynamodb.SequenceNumber)
		handled := len(out.Records)
		if len(resp.BatchItemFailures) > 0 {
			// Retry from the failed record: everything before it is done.
			p.mu.Lock()
			p.failures++
			p.mu.Unlock()
			failed := resp.BatchItemFailures[0].ItemIdentifier
			last, handled = after, 0
			for i, r := range out.Records {
				if aws.ToString(r.Dynamodb.SequenceNumber) == failed {
					handled = i
					break
				}
				last = aws.ToString(r.Dynamodb.SequenceNumber)
			}
		}
		p.mu.Lock()
		p.after[shard] = last
		p.handled += handled
		p.mu.Unlock()
	}
	return nil
}

func (p *pump) counts() (handled, failures int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.handled, p.failures
}

// lambdaEvent turns records read with dynamodbstreams into the event Lambda delivers, by way of
// the JSON Lambda sends (DynamoDB JSON images, base64 binaries).
func lambdaEvent(arn string, records []streamtypes.Record) (events.DynamoDBEvent, error) {
	var list []map[string]any
	for _, r := range records {
		d := r.Dynamodb
		change := map[string]any{
			"Keys": streamImage(d.Keys), "SequenceNumber": aws.ToString(d.SequenceNumber),
			"SizeBytes": aws.ToInt64(d.SizeBytes), "StreamViewType": string(d.StreamViewType),
		}
		if d.ApproximateCreationDateTime != nil {
			change["ApproximateCreationDateTime"] = d.ApproximateCreationDateTime.Unix()
		}
		if d.NewImage != nil {
			change["NewImage"] = streamImage(d.NewImage)
		}
		if d.OldImage != nil {
			change["OldImage"] = streamImage(d.OldImage)
		}
		list = append(list, map[string]any{
			"eventID": aws.ToString(r.EventID), "eventName": string(r.EventName), "eventVersion": "1.1",
			"eventSource": "aws:dynamodb", "awsRegion": "us-east-1", "eventSourceARN": arn, "dynamodb": change,
		})
	}
	b, err := json.Marshal(map[string]any{"Records": list})
	if err != nil {
		return events.DynamoDBEvent{}, err
	}
	var ev events.DynamoDBEvent
	return ev, json.Unmarshal(b, &ev)
}

func streamImage(img map[string]streamtypes.AttributeValue) map[string]any {
	out := map[string]any{}
	for k, v := range img {
		out[k] = streamValue(v)
	}
	return out
}

func streamValue(v streamtypes.AttributeValue) any {
	switch v := v.(type) {
	case *streamtypes.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *streamtypes.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *streamtypes.AttributeValueMemberB:
		return map[string]any{"B": v.Value} // []byte: base64 in JSON, as Lambda sends it
	case *streamtypes.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *streamtypes.AttributeValueMemberNULL:
		return map[string]any{"NULL": true}
	case *streamtypes.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}
	case *streamtypes.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}
	case *streamtypes.AttributeValueMemberBS:
		return map[string]any{"BS": v.Value}
	case *streamtypes.AttributeValueMemberL:
		var l []any
		for _, e := range v.Value {
			l = append(l, streamValue(e))
		}
		return map[string]any{"L": l}
	case *streamtypes.AttributeValueMemberM:
		return map[string]any{"M": streamImage(v.Value)}
	}
	panic(fmt.Sprintf("unknown attribute value %T", v))
}

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
	h := map[string]string{"host": "api123.execute-api.us-east-1.amazonaws.com", "user-agent": "test"}
	if token != "" {
		h["authorization"] = "Bearer " + token
	}
	for i := 0; i+1 < len(header); i += 2 {
		h[strings.ToLower(header[i])] = header[i+1]
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "$default", RawPath: u.Path, RawQueryString: u.RawQuery, Headers: h,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			AccountID: "123456789012", APIID: "api123", DomainName: "api123.execute-api.us-east-1.amazonaws.com",
			DomainPrefix: "api123", Stage: "$default", RequestID: "req", RouteKey: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: u.Path, Protocol: "HTTP/1.1", SourceIP: "192.0.2.1", UserAgent: "test"},
		},
	}
	if len(body) > 0 {
		if json.Valid(body) {
			ev.Body = string(body)
		} else {
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
		}
		h["content-length"] = fmt.Sprint(len(body))
	}
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
	out.Body = []byte(res.Body)
	if res.IsBase64Encoded {
		if out.Body, err = base64.StdEncoding.DecodeString(res.Body); err != nil {
			t.Fatal(err)
		}
	}
	if ct := out.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
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

// --- Lambda function URL with response streaming ------------------------------------------------

// functionURL is an http.RoundTripper that hands each request to the mcp function as Lambda's
// function URL would (events.LambdaFunctionURLRequest, through lambdaurl's own wrapper) and
// streams the response body back as the handler writes it. The invocation's context is the
// function's (a deadline), not the client's: on Lambda a client that goes away does not stop it.
type functionURL struct {
	invoke func(context.Context, *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error)
	host   string // X-Loopback-Host, as CloudFront's viewer function sets it

	mu    sync.Mutex
	types []string // Content-Type of each response, in order
}

func newFunctionURL(rt *awsrt.Runtime, forwardedHost string) *functionURL {
	return &functionURL{invoke: lambdaurl.Wrap(rt.MCP()), host: forwardedHost}
}

func (f *functionURL) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			return nil, err
		}
		r.Body.Close()
	}
	h := map[string]string{}
	for k, vs := range r.Header {
		h[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	h["host"] = "abc123.lambda-url.us-east-1.on.aws"
	if f.host != "" {
		h["x-loopback-host"] = f.host
	}
	ev := &events.LambdaFunctionURLRequest{
		Version: "2.0", RawPath: r.URL.Path, RawQueryString: r.URL.RawQuery, Headers: h, Body: string(body),
		RequestContext: events.LambdaFunctionURLRequestContext{
			AccountID: "123456789012", RequestID: "req", DomainName: "abc123.lambda-url.us-east-1.on.aws", APIID: "abc123",
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: r.Method, Path: r.URL.Path, Protocol: "HTTP/1.1", SourceIP: "192.0.2.1"},
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	res, err := f.invoke(ctx, ev)
	if err != nil {
		cancel()
		return nil, err
	}
	out := &http.Response{StatusCode: res.StatusCode, Header: http.Header{}, Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	for k, v := range res.Headers {
		out.Header.Set(k, v)
	}
	f.mu.Lock()
	f.types = append(f.types, out.Header.Get("Content-Type"))
	f.mu.Unlock()
	rc, ok := res.Body.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(res.Body)
	}
	out.Body = &cancelOnClose{ReadCloser: rc, cancel: cancel}
	out.ContentLength = -1
	return out, nil
}

func (f *functionURL) contentTypes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.types...)
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// --- API Gateway WebSocket ----------------------------------------------------------------------

func wsEvent(route, id string, headers map[string]string, body string) events.APIGatewayWebsocketProxyRequest {
	eventType := map[string]string{"$connect": "CONNECT", "$disconnect": "DISCONNECT"}[route]
	if eventType == "" {
		eventType = "MESSAGE"
	}
	return events.APIGatewayWebsocketProxyRequest{
		Headers: headers, Body: body,
		RequestContext: events.APIGatewayWebsocketProxyRequestContext{
			RouteKey: route, EventType: eventType, ConnectionID: id, Stage: "prod", APIID: "ws123",
			DomainName: "ws123.execute-api.us-east-1.amazonaws.com", RequestID: "req", MessageDirection: "IN",
			ConnectedAt: time.Now().UnixMilli(), RequestTimeEpoch: time.Now().UnixMilli(),
		},
	}
}

// eventually polls cond until it holds, for a few seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b)
}
