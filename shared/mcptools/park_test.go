package mcptools_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
)

// parkedCall is a blocking tools/call sent by hand on a connection of its own, as an HTTP/1.1
// client sends it: the server parks its wait (park.go).
type parkedCall struct {
	conn net.Conn
	r    *bufio.Reader
}

// callRequest is a tools/call request for the protocol revision of headers (a session's, or
// 2026-07-28's with its _meta), with a progress token when token is set.
func (d *deployment) callRequest(t *testing.T, headers map[string]string, tool string, args map[string]any, token any) *http.Request {
	t.Helper()
	params := map[string]any{"name": tool, "arguments": args}
	meta := map[string]any{}
	if token != nil {
		meta["progressToken"] = token
	}
	if headers[mcp.HeaderProtocolVersion] == mcp.ProtocolVersion20260728 {
		meta[mcp.MetaKeyProtocolVersion] = mcp.ProtocolVersion20260728
		meta[mcp.MetaKeyClientInfo] = map[string]any{"name": "park-test", "version": "1.0"}
		meta[mcp.MetaKeyClientCapabilities] = map[string]any{}
	}
	if len(meta) > 0 {
		params["_meta"] = meta
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": params})
	req, _ := http.NewRequest("POST", d.MCP, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+d.Token)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return req
}

// park sends req on a connection of its own and reads nothing yet.
func (d *deployment) park(t *testing.T, req *http.Request) *parkedCall {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(d.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	return &parkedCall{conn: conn, r: bufio.NewReader(conn)}
}

// sseEvents reads an SSE body to its end: the data of each event, and how many comment lines.
func sseEvents(t *testing.T, body io.Reader) (events []string, comments int) {
	t.Helper()
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		switch l := sc.Text(); {
		case strings.HasPrefix(l, ":"):
			comments++
		case strings.HasPrefix(l, "data: "):
			events = append(events, strings.TrimPrefix(l, "data: "))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	return events, comments
}

// TestParkedAnswerIsMCPGos: a parked wait's answer is what mcp-go answers a call that waits the
// ordinary way (here, on a writer that cannot be hijacked), byte for byte but for the ask's id, on
// both protocol revisions, with and without a progress token; the parked stream is chunked, ends
// with that one response and closes, and carries progress notifications or comment lines while it
// waits.
func TestParkedAnswerIsMCPGos(t *testing.T) {
	d := newTestDeployment(t, deployOpts{Progress: 50 * time.Millisecond})
	legacy := initSession(t, d.MCP, d.Token, testClientInfo)
	modern := map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: "tools/call", mcp.HeaderName: "ask_question"}
	for _, tc := range []struct {
		name    string
		headers map[string]string
		token   any
	}{
		{"2025-11-25", legacy, nil},
		{"2025-11-25 with progress", legacy, "tok-1"},
		{"2026-07-28", modern, nil},
		{"2026-07-28 with progress", modern, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Parked.
			c := d.park(t, d.callRequest(t, tc.headers, "ask_question", question("park"), tc.token))
			a := d.waitingAsk(t, 1)
			res, err := http.ReadResponse(c.r, nil) // the head is sent when the wait parks
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" || len(res.TransferEncoding) != 1 || res.TransferEncoding[0] != "chunked" || !res.Close {
				t.Fatalf("parked response: %d %v %v close=%v", res.StatusCode, res.Header, res.TransferEncoding, res.Close)
			}
			// A few beats while the person thinks: read the stream until they have come.
			body := bufio.NewReader(res.Body)
			var seen strings.Builder
			for beats := 0; beats < 2; {
				l, err := body.ReadString('\n')
				if err != nil {
					t.Fatalf("the stream ended while waiting, after %q: %v", seen.String(), err)
				}
				seen.WriteString(l)
				if strings.HasPrefix(l, ":") || strings.Contains(l, `"notifications/progress"`) {
					beats++
				}
			}
			d.reply(t, a.ID, map[string]any{"outcome": "answered", "selected": []string{"SQLite"}})
			events, comments := sseEvents(t, io.MultiReader(strings.NewReader(seen.String()), body))
			if len(events) == 0 {
				t.Fatal("no event in the parked stream")
			}
			parked := events[len(events)-1]
			progress := 0
			for _, e := range events[:len(events)-1] {
				if !strings.Contains(e, `"method":"notifications/progress"`) || !strings.Contains(e, fmt.Sprintf(`"progressToken":%s`, mustMarshal(tc.token))) {
					t.Fatalf("a stray event before the answer: %s", e)
				}
				progress++
			}
			if tc.token != nil && progress == 0 || tc.token == nil && (progress > 0 || comments < 2) {
				t.Errorf("while waiting: %d progress notifications, %d comment lines", progress, comments)
			}
			if _, err := c.conn.Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("the connection was not closed after the answer: %v", err)
			}

			// The ordinary way: the same call on a writer with no Hijack.
			rec := httptest.NewRecorder()
			done := make(chan struct{})
			go func() {
				defer close(done)
				d.Handler.ServeHTTP(rec, d.callRequest(t, tc.headers, "ask_question", question("park"), tc.token))
			}()
			b := d.waitingAsk(t, 1)
			d.reply(t, b.ID, map[string]any{"outcome": "answered", "selected": []string{"SQLite"}})
			<-done
			ordinary := rec.Body.String()
			if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
				evs, _ := sseEvents(t, strings.NewReader(ordinary))
				ordinary = evs[len(evs)-1]
			}
			ordinary = strings.TrimSpace(ordinary)
			if got, want := strings.ReplaceAll(parked, a.ID, "ASK"), strings.ReplaceAll(ordinary, b.ID, "ASK"); got != want {
				t.Errorf("the parked answer differs from mcp-go's:\nparked   %s\nordinary %s", got, want)
			}
			if !strings.Contains(parked, `"selected":["SQLite"]`) {
				t.Errorf("the answer carries no reply: %s", parked)
			}
		})
	}
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestParkedWaitsHoldOneGoroutine: a parked wait holds at most one goroutine (on Linux none: one
// poller hears every parked connection's client leave, hangup.go; elsewhere a read), not
// net/http's two and mcp-go's forwarder; a client that leaves ends its wait (the ask stops
// showing an agent waiting) and its goroutine.
func TestParkedWaitsHoldOneGoroutine(t *testing.T) {
	d := newTestDeployment(t, deployOpts{Progress: time.Second})
	headers := initSession(t, d.MCP, d.Token, testClientInfo)
	const n = 40
	settle := func() int {
		runtime.GC()
		return runtime.NumGoroutine()
	}
	before := settle()
	calls := make([]*parkedCall, n)
	for i := range calls {
		calls[i] = d.park(t, d.callRequest(t, headers, "ask_question", question(fmt.Sprint("p", i)), nil))
	}
	eventually(t, "every call waiting", func() bool {
		open, _ := d.snapshot(t)
		waiting := 0
		for _, a := range open {
			if a.Waiting {
				waiting++
			}
		}
		return waiting == n
	})
	// What the calls hold once the goroutines that parked them have ended (they end on their
	// own, just after the calls park): waited for, and failed after testwait.Within.
	during := 0
	most := 1.2
	if runtime.GOOS == "linux" {
		most = 0.1
	}
	eventually(t, fmt.Sprintf("%d parked calls to hold at most %.1f goroutines each", n, most), func() bool {
		during = settle()
		return float64(during-before)/n <= most
	})
	for _, c := range calls {
		c.conn.Close()
	}
	eventually(t, "no call waiting once their clients left", func() bool {
		open, _ := d.snapshot(t)
		for _, a := range open {
			if a.Waiting {
				return false
			}
		}
		return len(open) == n
	})
	eventually(t, "the waits' goroutines gone", func() bool { return settle() <= before+3 })
}

// TestParkedWaitsAnswerAtShutdown: shutting down ends a parked wait with the result that tells its
// agent to call await_reply.
func TestParkedWaitsAnswerAtShutdown(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	headers := initSession(t, d.MCP, d.Token, testClientInfo)
	c := d.park(t, d.callRequest(t, headers, "ask_question", question("shutdown"), nil))
	d.waitingAsk(t, 1)
	d.letGo()
	res, err := http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatal(err)
	}
	events, _ := sseEvents(t, res.Body)
	if len(events) != 1 || !strings.Contains(events[0], "Loopback is restarting") || !strings.Contains(events[0], `"isError":true`) {
		t.Fatalf("a parked wait at shutdown answered %q", events)
	}
}

// TestParkedWaitsHearCancelled: a client that gives up on a parked call sends
// notifications/cancelled with its id (the TypeScript SDK does on a timeout, and keeps the
// connection): the wait ends and the ask stops showing an agent waiting. The same id from another
// session, or another credential, ends nothing.
func TestParkedWaitsHearCancelled(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	headers := initSession(t, d.MCP, d.Token, testClientInfo)
	c := d.park(t, d.callRequest(t, headers, "ask_question", question("cancelled"), nil))
	a := d.waitingAsk(t, 1)
	cancel := func(token string, headers map[string]string) {
		body := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":41,"reason":"timed out"}}`
		req, _ := http.NewRequest("POST", d.MCP, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	cancel(d.Token, initSession(t, d.MCP, d.Token, testClientInfo)) // another session of the same credential
	other := d.issue(t, testSpace, ask.RoleAgent, ask.Actor{ID: "agent:b", Name: "b"}, ask.Actor{ID: "owner"})
	cancel(other, initSession(t, d.MCP, other, testClientInfo))
	// A cancel that reaches a parked call ends its wait before its own response comes back
	// (forwardCancel), so the person's reply, made now, reaches the call only if neither did.
	d.reply(t, a.ID, map[string]any{"outcome": "answered", "selected": []string{"SQLite"}})
	res, err := http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if events, _ := sseEvents(t, res.Body); len(events) != 1 || !strings.Contains(events[0], `"selected":["SQLite"]`) {
		t.Fatalf("a cancel from another session or credential ended the wait: the call answered %q", events)
	}

	// The call's own session and credential end it.
	c = d.park(t, d.callRequest(t, headers, "ask_question", question("cancelled"), nil))
	b := d.waitingAsk(t, 1) // the first ask closed with its answer
	cancel(d.Token, headers)
	d.waitFor(t, b.ID, false)
	res, err = http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if events, _ := sseEvents(t, res.Body); len(events) != 1 || !strings.Contains(events[0], "was cancelled") {
		t.Fatalf("a cancelled parked call answered %q", events)
	}
}

// TestParkedWaitsHoldLittleHeap: once parked, a wait keeps only its own small state (the wait,
// its timers, the connection, the headers its answer needs), not what handling the request
// needed: net/http's response and connection buffers, the request, mcp-go's per-request session.
// Measured as the live heap (after a collection) per parked call, clients on raw connections
// that hold no buffers: 19.0–19.3 KiB before the parked wait let go of the request's
// context, 5.4–6.0 KiB after (docs/benchmarks.md, "Waiting agents").
func TestParkedWaitsHoldLittleHeap(t *testing.T) {
	d := newTestDeployment(t, deployOpts{Progress: time.Minute})
	headers := initSession(t, d.MCP, d.Token, testClientInfo)
	const n = 80 // under the open asks one credential may hold (ask.MaxOpenAsksPerCredential)
	live := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := live()
	conns := make([]net.Conn, n)
	for i := range conns {
		conn, err := net.Dial("tcp", strings.TrimPrefix(d.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		if err := d.callRequest(t, headers, "ask_question", question(fmt.Sprint("heap", i%10)), nil).Write(conn); err != nil {
			t.Fatal(err)
		}
		conns[i] = conn
	}
	eventually(t, "every call waiting", func() bool {
		open, _ := d.snapshot(t)
		waiting := 0
		for _, a := range open {
			if a.Waiting {
				waiting++
			}
		}
		return waiting == n
	})
	// The least of three readings: the test's own goroutines and the store allocate meanwhile.
	per := uint64(math.MaxUint64)
	for range 3 {
		per = min(per, (max(live(), before)-before)/n)
	}
	t.Logf("%d parked calls: %.1f KiB of live heap each", n, float64(per)/1024)
	if most := uint64(10 << 10); per > most {
		t.Errorf("%d parked calls hold %.1f KiB of live heap each, over %d KiB", n, float64(per)/1024, most>>10)
	}
}
