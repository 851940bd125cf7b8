// Command coldstart measures each Lambda's binary size and cold start on this machine: it builds
// every function under functions/ as the Makefile's build-<LogicalId> targets do (for the host's
// architecture, so that it can run here; the arm64 sizes come from `make build-lambdas`), runs
// each binary as Lambda's provided runtime would, with AWS_LAMBDA_RUNTIME_API pointed at a small
// stand-in for Lambda's runtime API, and times:
//
//   - init: process start → the function asks for its first event (GET …/invocation/next),
//     which is when Lambda's init phase ends;
//   - first invoke: that event handed over → the function's response, its first requests to
//     moto (DynamoDB) included, as a cold start's first request does.
//
// The functions' environment points at a moto_server it starts (a table and bucket made as the
// template makes them), so the first invocation does real work against it.
//
// Usage (from the repository root; `make bench-lambdas` runs it):
//
//	go run ./bench/coldstart -runs 20
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/awstest"
	"github.com/loopback-hq/loopback/shared/blobs3"
	"github.com/loopback-hq/loopback/shared/dynamo"
)

// function is one Lambda and the event its first invocation gets.
// function is one Lambda of the template, named as its folder was before the HTTP API's
// functions came to share functions/api; dir is the main package it runs.
type function struct {
	name, dir string
	event     func(token string) any
}

func apiEvent(method, path string) func(string) any {
	return func(token string) any {
		return map[string]any{
			"version": "2.0", "routeKey": "$default", "rawPath": path,
			"headers": map[string]string{"authorization": "Bearer " + token, "host": "api.example"},
			"requestContext": map[string]any{"http": map[string]any{"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "192.0.2.1"},
				"domainName": "api.example", "stage": "$default"},
		}
	}
}

func wsEvent(route string) func(string) any {
	return func(token string) any {
		return map[string]any{
			"headers":        map[string]string{"Sec-WebSocket-Protocol": "loopback.v1", "Authorization": "Bearer " + token},
			"requestContext": map[string]any{"routeKey": route, "connectionId": "bench=" + ask.NewID()[:8], "stage": "prod", "domainName": "ws.example"},
		}
	}
}

var functions = []function{
	{"api-whoami", "api", apiEvent("GET", "/api/v1/whoami")},
	{"api-snapshot", "api", apiEvent("GET", "/api/v1/snapshot")},
	{"api-asks-list", "api", apiEvent("GET", "/api/v1/asks")},
	{"api-asks-read", "api", apiEvent("GET", "/api/v1/asks/nope")},
	{"api-asks-reply", "api", apiEvent("POST", "/api/v1/asks/nope/reply")},
	{"api-tickets", "api", apiEvent("POST", "/api/v1/events/tickets")},
	{"api-files", "api", apiEvent("GET", "/api/v1/files/up_aaaaaaaaaaaaaaaaaaaaaaaaaa")},
	{"api-default", "api", apiEvent("GET", "/api/v1/nothing")},
	{"ws-connect", "ws-connect", wsEvent("$connect")},
	{"ws-disconnect", "ws-disconnect", wsEvent("$disconnect")},
	{"api-asks-reply ($default)", "api", wsEvent("$default")},
	{"stream-fanout", "stream-fanout", func(string) any { return map[string]any{"Records": []any{}} }},
	{"mcp", "mcp", func(token string) any {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`
		return map[string]any{
			"version": "2.0", "rawPath": "/mcp", "body": body,
			"headers":        map[string]string{"authorization": "Bearer " + token, "content-type": "application/json", "accept": "application/json, text/event-stream"},
			"requestContext": map[string]any{"http": map[string]any{"method": "POST", "path": "/mcp", "sourceIp": "192.0.2.1"}, "domainName": "fn.example"},
		}
	}},
	{"sweeper", "sweeper", func(string) any { return map[string]any{} }},
}

func main() {
	runs := flag.Int("runs", 20, "cold starts per function")
	flag.Parse()
	if err := run(*runs); err != nil {
		fmt.Fprintln(os.Stderr, "coldstart:", err)
		os.Exit(1)
	}
}

func run(runs int) error {
	ctx := context.Background()
	moto, err := awstest.Start()
	if err != nil {
		return err
	}
	defer moto.Close()
	table, bucket := awstest.Name("coldstart"), awstest.Name("coldstart-images")
	if err := dynamo.CreateTable(ctx, moto.DynamoDB(), table); err != nil {
		return err
	}
	if err := blobs3.CreateBucket(ctx, moto.S3(), bucket); err != nil {
		return err
	}
	store := dynamo.New(moto.DynamoDB(), table)
	token, _, err := awsrt.Bootstrap(ctx, store, "sp_bench", "bench")
	if err != nil {
		return err
	}

	stub, err := newRuntimeAPI()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "coldstart")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	nowhere := filepath.Join(dir, "none")
	env := append(os.Environ(),
		"AWS_LAMBDA_RUNTIME_API="+stub.addr, "AWS_REGION="+awstest.Region, "AWS_ENDPOINT_URL="+moto.URL,
		"AWS_ACCESS_KEY_ID=testing", "AWS_SECRET_ACCESS_KEY=testing", "AWS_CONFIG_FILE="+nowhere, "AWS_SHARED_CREDENTIALS_FILE="+nowhere,
		"LOOPBACK_TABLE="+table, "LOOPBACK_BUCKET="+bucket, "LOOPBACK_CONNECTIONS_URL=http://"+stub.addr,
		"AWS_LAMBDA_FUNCTION_NAME=bench", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256", "AWS_LAMBDA_FUNCTION_VERSION=$LATEST")

	fmt.Printf("%-26s %10s %14s %14s %16s %16s\n", "function", "bytes", "init p50", "init p90", "1st invoke p50", "1st invoke p90")
	built := map[string]bool{}
	for _, f := range functions {
		bin := filepath.Join(dir, f.dir)
		if !built[f.dir] {
			build := exec.Command("go", "build", "-trimpath", "-tags", "lambda.norpc", "-ldflags", "-s -w", "-o", bin, "./functions/"+f.dir)
			build.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := build.CombinedOutput(); err != nil {
				return fmt.Errorf("building %s: %v\n%s", f.dir, err, out)
			}
			built[f.dir] = true
		}
		st, err := os.Stat(bin)
		if err != nil {
			return err
		}
		body, _ := json.Marshal(f.event(token))
		var inits, invokes []time.Duration
		for range runs {
			i, v, err := stub.coldStart(bin, env, body)
			if err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
			inits, invokes = append(inits, i), append(invokes, v)
		}
		fmt.Printf("%-26s %10d %14s %14s %16s %16s\n", f.name, st.Size(), pct(inits, 50), pct(inits, 90), pct(invokes, 50), pct(invokes, 90))
	}
	return nil
}

func pct(d []time.Duration, p int) string {
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)].Round(10 * time.Microsecond).String()
}

// runtimeAPI stands in for Lambda's runtime API: the first GET …/invocation/next of a process
// gets the event; the response is read whole; the next GET marks the invocation over.
type runtimeAPI struct {
	addr string

	next     chan chan []byte // a waiting GET …/next asks for its event here
	response chan struct{}
}

func newRuntimeAPI() (*runtimeAPI, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &runtimeAPI{addr: ln.Addr().String(), next: make(chan chan []byte), response: make(chan struct{}, 1)}
	go http.Serve(ln, http.HandlerFunc(r.serve))
	return r, nil
}

func (r *runtimeAPI) serve(w http.ResponseWriter, req *http.Request) {
	switch {
	case strings.HasSuffix(req.URL.Path, "/invocation/next"):
		event := make(chan []byte)
		select {
		case r.next <- event:
		case <-req.Context().Done():
			return
		}
		select {
		case body := <-event:
			w.Header().Set("Lambda-Runtime-Aws-Request-Id", "req-"+ask.NewID()[:8])
			w.Header().Set("Lambda-Runtime-Deadline-Ms", fmt.Sprint(time.Now().Add(time.Minute).UnixMilli()))
			w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:bench")
			w.Header().Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000")
			w.Write(body)
		case <-req.Context().Done():
		}
	case strings.HasSuffix(req.URL.Path, "/response"), strings.HasSuffix(req.URL.Path, "/error"):
		io.Copy(io.Discard, req.Body)
		w.WriteHeader(http.StatusAccepted)
		select {
		case r.response <- struct{}{}:
		default:
		}
	case strings.HasPrefix(req.URL.Path, "/@connections/"):
		w.Header().Set("X-Amzn-ErrorType", "GoneException")
		w.WriteHeader(http.StatusGone)
		io.WriteString(w, `{"message":"Gone"}`)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// coldStart starts the binary, times it to its first GET …/next, hands it the event, times the
// response, and stops it.
func (r *runtimeAPI) coldStart(bin string, env []string, event []byte) (initTime, invoke time.Duration, err error) {
	cmd := exec.Command(bin)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	timeout := time.After(30 * time.Second)
	var ev chan []byte
	select {
	case ev = <-r.next:
	case <-timeout:
		return 0, 0, fmt.Errorf("no GET /next within 30 s:\n%s", stderr.String())
	}
	initTime = time.Since(start)
	sent := time.Now()
	ev <- event
	select {
	case <-r.response:
	case <-timeout:
		return 0, 0, fmt.Errorf("no response within 30 s:\n%s", stderr.String())
	}
	return initTime, time.Since(sent), nil
}
