package mcptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// syncBuffer is a log sink the server's goroutines write to at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the log's JSON lines with msg "mcp" or "api".
func (b *syncBuffer) lines(t *testing.T) (all string, requests []map[string]any) {
	t.Helper()
	b.mu.Lock()
	all = b.buf.String()
	b.mu.Unlock()
	for _, l := range strings.Split(strings.TrimSpace(all), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("a log line that is not JSON: %q", l)
		}
		if m["msg"] == "mcp" || m["msg"] == "api" {
			requests = append(requests, m)
		}
	}
	return all, requests
}

// TestRequestLog: one structured line per MCP request and per API request, in Lambda's JSON
// format: the JSON-RPC method, tool, protocol revision, client, the credential's id (never its
// token), the HTTP status, the JSON-RPC error or tool error when there was one, and the duration.
func TestRequestLog(t *testing.T) {
	var log syncBuffer
	d := newTestDeployment(t, deployOpts{Log: &log})

	d.modern(t, modernCall{method: "tools/call", tasks: true, params: map[string]any{"name": "ask_question", "arguments": question("logged")}}).result(t)
	a := d.waitingAsk(t, 1)
	d.modern(t, modernCall{method: "tasks/get", tasks: true, params: map[string]any{"taskId": "no-such-task"}})
	d.modern(t, modernCall{method: "tools/call", params: map[string]any{"name": "no_such_tool", "arguments": map[string]any{}}})
	legacy := d.connect(t, clientOpts{Legacy: true})
	toolErr(t, callTool(t, legacy, "ask_question", map[string]any{"question": "No project?"}))
	d.getAsk(t, a.ID)

	all, lines := log.lines(t)
	if strings.Contains(all, d.Token) || strings.Contains(all, "Bearer ") {
		t.Fatalf("the log holds a token:\n%s", all)
	}
	find := func(what string, match func(map[string]any) bool) map[string]any {
		t.Helper()
		for _, l := range lines {
			if match(l) {
				for _, k := range []string{"method", "path", "status", "ms", "credential"} {
					if l[k] == nil || l[k] == "" {
						t.Errorf("%s: the line has no %s: %v", what, k, l)
					}
				}
				if c, _ := l["credential"].(string); !strings.HasPrefix(c, "cred_") {
					t.Errorf("%s: credential %q is not a credential's id", what, c)
				}
				return l
			}
		}
		t.Fatalf("no log line for %s in:\n%s", what, all)
		return nil
	}
	created := find("the task-creating call", func(l map[string]any) bool {
		return l["rpc"] == "tools/call" && l["tool"] == "ask_question" && l["protocol"] == mcp.ProtocolVersion20260728
	})
	if created["msg"] != "mcp" || created["client"] != "ext-test 1.0" || created["status"] != 200.0 || created["rpc_error"] != nil {
		t.Errorf("the task-creating call's line: %v", created)
	}
	if l := find("tasks/get of an unknown task", func(l map[string]any) bool { return l["rpc"] == "tasks/get" }); l["rpc_error"] != float64(mcp.INVALID_PARAMS) || l["status"] != 400.0 {
		t.Errorf("tasks/get's line: %v", l)
	}
	if l := find("an unknown tool", func(l map[string]any) bool { return l["tool"] == "no_such_tool" }); l["rpc_error"] == nil {
		t.Errorf("mcp-go's error is not on the line: %v", l)
	}
	if l := find("the invalid legacy call", func(l map[string]any) bool {
		return l["rpc"] == "tools/call" && l["protocol"] == "2025-11-25" && l["tool"] == "ask_question"
	}); l["tool_error"] != true || l["client"] == "" {
		t.Errorf("the invalid call's line: %v", l)
	}
	if l := find("the API read", func(l map[string]any) bool { return l["msg"] == "api" && l["path"] == "/api/v1/asks/"+a.ID }); l["method"] != "GET" || l["status"] != 200.0 {
		t.Errorf("the API line: %v", l)
	}
}

// TestRequestLogClientGone: a blocking call whose client goes away mid-wait is logged as gone,
// not as a tool error: the client received nothing, and nothing failed. Both ways a call waits
// are covered: parked (HTTP/1.1 with SSE) and held (a client that takes only JSON).
func TestRequestLogClientGone(t *testing.T) {
	for _, accept := range []string{"application/json, text/event-stream", "application/json"} {
		t.Run(accept, func(t *testing.T) {
			var log syncBuffer
			d := newTestDeployment(t, deployOpts{Log: &log})
			session := initSession(t, d.MCP, d.Token, testClientInfo)
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call",
				"params": map[string]any{"name": "ask_question", "arguments": question("gone")}})
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "POST", d.MCP, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", accept)
			req.Header.Set("Authorization", "Bearer "+d.Token)
			for k, v := range session {
				req.Header.Set(k, v)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				if res, err := http.DefaultClient.Do(req); err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			}()
			a := d.waitingAsk(t, 1)
			cancel() // the client goes away
			<-done
			d.waitFor(t, a.ID, false)
			var line map[string]any
			eventually(t, "the call's line is written", func() bool {
				_, lines := log.lines(t)
				for _, l := range lines {
					if l["rpc"] == "tools/call" && l["tool"] == "ask_question" {
						line = l
						return true
					}
				}
				return false
			})
			if line["client_gone"] != true || line["tool_error"] != nil {
				t.Fatalf("the line of a call whose client left: %v", line)
			}
		})
	}
}
