package awsrt_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/awsrt"
)

// modernCall is one MCP 2026-07-28 request (no tasks) to one instance of the mcp function: its
// HTTP status, and the JSON-RPC response once it comes.
type modernCall struct {
	status int
	done   chan string // the response's JSON-RPC message
	ended  chan struct{}
}

// startModern posts a request with JSON-RPC id to the runtime rt (one Lambda instance) and reads
// its response in the background. meta adds to the request's _meta.
func startModern(t *testing.T, rt *awsrt.Runtime, token string, id int, method string, params map[string]any, meta map[string]any) *modernCall {
	t.Helper()
	req := modernRequest(token, id, method, "aws-waits", map[string]any{}, params, meta)
	fu := newFunctionURL(rt, inboxHost)
	res, err := fu.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	c := &modernCall{status: res.StatusCode, done: make(chan string, 1), ended: make(chan struct{})}
	go func() {
		defer close(c.ended)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var all strings.Builder
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, `"id"`) {
				c.done <- data
				return
			}
		}
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			c.done <- strings.TrimSpace(all.String())
		}
	}()
	return c
}

// TestServerlessWaitsAcrossInstances: the waits one credential holds are counted across Lambda
// instances (each runtime here is one instance: its own process memory, the same table), and a
// notifications/cancelled that reaches another instance than the wait ends the wait there within
// seconds, which frees the instance and the credential's place.
func TestServerlessWaitsAcrossInstances(t *testing.T) {
	d := deployWith(t, func(e *awsrt.Env) { e.MaxWaits = 2; e.QuietMaxWait = 20 * time.Second })
	token := d.owner(t, "sp_waits", "ada")
	instance := func() *awsrt.Runtime {
		rt, err := awsrt.New(moto.Config(), d.rt.Env)
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	a, b, c := instance(), instance(), instance()
	progress := map[string]any{"progressToken": "p"}
	ask := func(rt *awsrt.Runtime, id int, text string) *modernCall {
		return startModern(t, rt, token, id, "tools/call", map[string]any{"name": "ask_question",
			"arguments": map[string]any{"question": text, "project": "loopback"}}, progress)
	}
	first, second := ask(a, 1, "First?"), ask(b, 2, "Second?")
	if first.status != 200 || second.status != 200 {
		t.Fatalf("two waits, the bound 2: %d %d: %s", first.status, second.status, <-first.done)
	}
	eventually(t, "both asks show an agent waiting", func() bool {
		open, err := d.rt.Store.OpenAsks(context.Background(), "sp_waits")
		return err == nil && len(open) == 2 && open[0].Waiting && open[1].Waiting
	})
	third := ask(c, 3, "Third?")
	if third.status != http.StatusTooManyRequests {
		t.Fatalf("a third wait on a third instance: %d, want 429 (the bound counts across instances)", third.status)
	}
	<-third.ended

	// The client cancels call 1; the cancel reaches instance c, not a.
	cancelled := time.Now()
	n := startModern(t, c, token, 0, "notifications/cancelled", map[string]any{"requestId": 1, "reason": "Esc"}, nil)
	if n.status != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: %d", n.status)
	}
	// The invocation ends (a cancelled request gets no response, as MCP says).
	select {
	case <-first.ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the wait on another instance did not end within 5 s of the cancel")
	}
	took := time.Since(cancelled)
	t.Logf("the cancelled wait ended %s after the cancel reached another instance", took.Round(time.Millisecond))
	eventually(t, "the cancelled ask shows nobody waiting", func() bool {
		open, err := d.rt.Store.OpenAsks(context.Background(), "sp_waits")
		if err != nil {
			return false
		}
		for _, o := range open {
			if o.Question != nil && o.Question.Question == "First?" {
				return !o.Waiting
			}
		}
		return false
	})
	// Its place is free: a new wait is taken.
	again := ask(c, 4, "Again?")
	if again.status != 200 {
		t.Fatalf("a wait after the cancel: %d", again.status)
	}
	for _, call := range []struct {
		rt *awsrt.Runtime
		id int
		w  *modernCall
	}{{b, 2, second}, {c, 4, again}} {
		startModern(t, a, token, 0, "notifications/cancelled", map[string]any{"requestId": call.id}, nil)
		select {
		case <-call.w.ended:
		case <-time.After(10 * time.Second):
			t.Fatalf("call %d did not end on its cancel", call.id)
		}
	}
}
