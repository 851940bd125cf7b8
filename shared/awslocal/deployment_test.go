package awslocal_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/coder/websocket"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awslocal"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/awstest"
	"github.com/loopback-hq/loopback/shared/blobs3"
	"github.com/loopback-hq/loopback/shared/dynamo"
	"github.com/loopback-hq/loopback/shared/samtemplate"
)

var moto *awstest.Server

func TestMain(m *testing.M) { awstest.Main(m, &moto) }

func loadTemplate(t *testing.T) *samtemplate.Template {
	t.Helper()
	tmpl, err := samtemplate.Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// startDeployment runs template.yaml's functions behind the local API Gateways, on a table and a
// bucket of their own named after name, served over real HTTP (base) until the test ends. o gives
// what a test sets beyond the template, the store and the public URL.
func startDeployment(t *testing.T, name string, o awslocal.Options) (d *awslocal.Deployment, base, table string) {
	t.Helper()
	ctx := context.Background()
	table, bucket := awstest.Name(name), awstest.Name(name+"-images")
	if err := dynamo.CreateTable(ctx, moto.DynamoDB(), table); err != nil {
		t.Fatal(err)
	}
	if err := blobs3.CreateBucket(ctx, moto.S3(), bucket); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base = "http://" + ln.Addr().String()
	o.Template, o.Config, o.Table, o.Bucket = loadTemplate(t), moto.Config(), table, bucket
	if o.Parameters == nil {
		o.Parameters = map[string]string{}
	}
	o.Parameters["PublicUrl"] = base
	o.StreamPoll, o.Logger = 50*time.Millisecond, slog.Default()
	if d, err = awslocal.New(ctx, o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	srv := httptest.NewUnstartedServer(d.Handler(http.NotFoundHandler()))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	run, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); d.Run(run) }()
	t.Cleanup(func() { stop(); <-done })
	return d, base, table
}

// TestDeployment: template.yaml's functions behind the local API Gateways over real HTTP — the
// HTTP API's routes (and $default's 404 Problem for a route the template lacks), a real
// WebSocket whose snapshot comes from the stream's fan-out through @connections — and no call
// of any function outside what its policy allows.
func TestDeployment(t *testing.T) {
	ctx := context.Background()
	d, base, table := startDeployment(t, "awslocal", awslocal.Options{})

	token, _, err := awsrt.Bootstrap(ctx, dynamo.New(moto.DynamoDB(), table), "sp_local", "ada")
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if status, body := call("GET", "/api/v1/whoami"); status != 200 || !strings.Contains(body, `"space":"sp_local"`) {
		t.Fatalf("GET /api/v1/whoami = %d %s", status, body)
	}
	if status, body := call("GET", "/api/v1/no-such-route"); status != 404 || !strings.Contains(body, `"code":"route.not_found"`) {
		t.Fatalf("GET /api/v1/no-such-route = %d %s, want $default's 404 Problem", status, body)
	}
	// CloudFront compresses the behaviours template.yaml gives `Compress: true` (/api/*, the
	// inbox), and only those: not /.well-known/* (nor /mcp, /hooks/*, /slack/*, /oauth/*, /auth/*).
	for path, want := range map[string]bool{"/api/v1/whoami": true, "/": true, "/.well-known/oauth-protected-resource": false} {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Accept-Encoding", "gzip")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if got := strings.Contains(res.Header.Get("Vary"), "Accept-Encoding"); got != want {
			t.Errorf("GET %s: Vary %q, want Accept-Encoding in it: %v", path, res.Header.Get("Vary"), want)
		}
	}
	// Paths net/http's mux would redirect get the API's 404 Problem, as on AWS: no 307, no HTML.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"/api", "//api/v1/whoami", "/api/./v1/whoami", "/api/v1/../v1/whoami"} {
		req, _ := http.NewRequest("GET", base+p, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 404 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") || !strings.Contains(string(b), `"code":"route.not_found"`) {
			t.Errorf("GET %s = %d %s %s, want the API's 404 Problem", p, res.StatusCode, res.Header.Get("Content-Type"), b)
		}
	}
	status, body := call("POST", "/api/v1/events/tickets")
	if status != 201 {
		t.Fatalf("POST /api/v1/events/tickets = %d %s", status, body)
	}
	var tk struct{ Ticket string }
	json.Unmarshal([]byte(body), &tk)

	dial, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	conn, res, err := websocket.Dial(dial, "ws"+strings.TrimPrefix(base, "http")+"/api/v1/events", &websocket.DialOptions{
		Subprotocols: []string{"loopback.v1", "loopback.ticket." + tk.Ticket},
		HTTPHeader:   http.Header{"Origin": {base}},
	})
	if err != nil {
		t.Fatalf("opening the event socket: %v (%v)", err, res)
	}
	defer conn.CloseNow()
	if conn.Subprotocol() != "loopback.v1" {
		t.Errorf("$connect selected %q, want loopback.v1", conn.Subprotocol())
	}
	_, frame, err := conn.Read(dial)
	if err != nil {
		t.Fatalf("no snapshot on the socket: %v", err)
	}
	if !strings.Contains(string(frame), `"type":"snapshot"`) {
		t.Fatalf("first frame = %s, want the snapshot", frame)
	}
	// A reconnect offers its watermark (contract revision 6): $connect sees the handshake's query
	// string, as API Gateway passes it, and the greeting is a delta; a malformed one is refused
	// with the handshake, 400.
	ws := "ws" + strings.TrimPrefix(base, "http") + "/api/v1/events"
	bearer := &websocket.DialOptions{Subprotocols: []string{"loopback.v1"}, HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}}
	delta, _, err := websocket.Dial(dial, ws+"?since="+url.QueryEscape(ask.FormatTime(time.Now())), bearer)
	if err != nil {
		t.Fatalf("opening the event socket with since: %v", err)
	}
	defer delta.CloseNow()
	if _, frame, err := delta.Read(dial); err != nil || !strings.Contains(string(frame), `"since":"`) {
		t.Fatalf("first frame with a watermark = %s, %v; want a delta (since set)", frame, err)
	}
	if _, res, err := websocket.Dial(dial, ws+"?since=yesterday", bearer); err == nil || res == nil || res.StatusCode != http.StatusBadRequest {
		t.Fatalf("a malformed watermark: %v %v; want the handshake refused with 400", err, res)
	}

	// A frame the socket does not take is answered ($default, in its route response) with a
	// request.failed frame, and the socket stays open (contract revision 8; socketreply_test.go
	// has the rest).
	conn.Write(dial, websocket.MessageText, []byte(`{"type":"hello"}`))
	if _, frame, err := conn.Read(dial); err != nil || !strings.Contains(string(frame), `"type":"request.failed"`) {
		t.Fatalf("the answer to a frame the socket does not take = %s, %v; want request.failed", frame, err)
	}

	for id, calls := range d.Calls {
		if m := calls.Missing(); len(m) > 0 {
			t.Errorf("%s used %v, which template.yaml does not allow it", id, m)
		}
	}
	if used := d.Calls["WsConnectFunction"].Used(); !slices.Contains(used, "dynamodb:PutItem") {
		t.Errorf("WsConnectFunction's calls = %v, want its PutItem of the connection among them", used)
	}
}

// TestCallsWarnOfMissingActions: a call the function's policy does not allow is named — here a
// Query of an index by a function allowed Query on the table only.
func TestCallsWarnOfMissingActions(t *testing.T) {
	ctx := context.Background()
	table := awstest.Name("awslocal-iam")
	if err := dynamo.CreateTable(ctx, moto.DynamoDB(), table); err != nil {
		t.Fatal(err)
	}
	calls := &awslocal.Calls{Logger: slog.Default(), Function: &samtemplate.Function{ID: "Narrow", Statements: []samtemplate.Statement{
		{Actions: []string{"dynamodb:GetItem", "dynamodb:Query"}, Resource: "!GetAtt AskTable.Arn"},
	}}}
	cfg := moto.Config()
	cfg.APIOptions = append(cfg.APIOptions, calls.Middleware)
	db := dynamodb.NewFromConfig(cfg)
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}, "sk": &types.AttributeValueMemberS{Value: "b"}}
	if _, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(table), IndexName: aws.String("head"),
		KeyConditionExpression: aws.String("head = :h"), ExpressionAttributeValues: map[string]types.AttributeValue{":h": &types.AttributeValueMemberS{Value: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: key}); err != nil {
		t.Fatal(err)
	}
	if got, want := calls.Missing(), []string{"dynamodb:PutItem", "dynamodb:Query on an index"}; !slices.Equal(got, want) {
		t.Errorf("missing = %v, want %v", got, want)
	}
}
