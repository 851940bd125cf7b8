package mcptools_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// sessionStream is a 2025 session's standalone GET stream, opened by hand on a connection of
// its own as an HTTP/1.1 client opens it.
type sessionStream struct {
	conn net.Conn
	res  *http.Response
	body *bufio.Reader
}

// openStream opens the GET stream of the session of headers with token, and reads its head.
func (d *deployment) openStream(t *testing.T, token string, headers map[string]string) *sessionStream {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(d.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	req, _ := http.NewRequest("GET", d.MCP, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	// Nothing a test waits for on a stream takes this long: a read past it fails the test.
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatal(err)
	}
	return &sessionStream{conn: conn, res: res, body: bufio.NewReader(res.Body)}
}

// next reads the stream up to its next event or comment line: the event's data, or the comment.
func (s *sessionStream) next(t *testing.T) (data, comment string, err error) {
	t.Helper()
	for {
		l, err := s.body.ReadString('\n')
		if err != nil {
			return "", "", err
		}
		switch l = strings.TrimRight(l, "\n"); {
		case strings.HasPrefix(l, ":"):
			return "", l, nil
		case strings.HasPrefix(l, "data: "):
			return strings.TrimPrefix(l, "data: "), "", nil
		}
	}
}

// event reads the stream up to its next event, skipping comment lines.
func (s *sessionStream) event(t *testing.T) string {
	t.Helper()
	for {
		data, _, err := s.next(t)
		if err != nil {
			t.Fatalf("the stream ended before an event: %v", err)
		}
		if data != "" {
			return data
		}
	}
}

// ended reads the stream to its end and reports whether it ended as a chunked body does, and
// the connection closed after it.
func (s *sessionStream) ended(t *testing.T) bool {
	t.Helper()
	_ = s.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, s.body); err != nil {
		t.Logf("reading the stream to its end: %v", err)
		return false
	}
	_, err := s.conn.Read(make([]byte, 1))
	return err == io.EOF
}

// TestSessionStream: a 2025 session's GET stream is an SSE stream that carries what mcp-go sends
// to the session's client (a broadcast, a notification to this session) as `message` events, and
// a comment line every Progress while nothing else comes; the session's DELETE ends it.
func TestSessionStream(t *testing.T) {
	d := newTestDeployment(t, deployOpts{Progress: 50 * time.Millisecond})
	headers := initSession(t, d.MCP, d.Token, testClientInfo)
	other := initSession(t, d.MCP, d.Token, testClientInfo)
	s := d.openStream(t, d.Token, headers)
	o := d.openStream(t, d.Token, other)
	if s.res.StatusCode != 200 || s.res.Header.Get("Content-Type") != "text/event-stream" || s.res.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("GET stream: %d %v", s.res.StatusCode, s.res.Header)
	}
	// Comment lines while nothing happens.
	for comments := 0; comments < 2; {
		data, comment, err := s.next(t)
		if err != nil || data != "" {
			t.Fatalf("before any notification: event %q, %v", data, err)
		}
		if comment != "" {
			comments++
		}
	}
	// A broadcast reaches every session's stream; a notification to one session, its stream only.
	d.Handler.Broadcast("notifications/tools/list_changed", nil)
	for _, st := range []*sessionStream{s, o} {
		if e := st.event(t); e != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
			t.Errorf("the broadcast came as %s", e)
		}
	}
	for i := range 3 {
		if err := d.Handler.Notify(headers["Mcp-Session-Id"], "notifications/message", map[string]any{"level": "info", "data": i}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if e := s.event(t); !strings.Contains(e, fmt.Sprintf(`"data":%d`, i)) || !strings.Contains(e, `"method":"notifications/message"`) {
			t.Errorf("notification %d came as %s", i, e)
		}
	}
	// The session's requests are served as before while its stream is open.
	var tools struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	mustRPC(t, d.MCP, d.Token, headers, "tools/list", map[string]any{}, &tools)
	if len(tools.Tools) == 0 {
		t.Error("tools/list on the session with its stream open: no tools")
	}
	// The session's DELETE ends its stream, and no other.
	req, _ := http.NewRequest("DELETE", d.MCP, nil)
	req.Header.Set("Authorization", "Bearer "+d.Token)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("DELETE: %d", res.StatusCode)
	}
	if !s.ended(t) {
		t.Error("the deleted session's stream did not end")
	}
	d.Handler.Broadcast("notifications/tools/list_changed", nil)
	if e := o.event(t); !strings.Contains(e, "list_changed") {
		t.Errorf("the other session's stream, after the DELETE: %s", e)
	}
}

// TestSessionStreamEnds: a session's stream ends when its credential is revoked and when the
// server shuts down; a client that leaves gives its stream's place back (Config.Streams).
func TestSessionStreamEnds(t *testing.T) {
	d := newTestDeployment(t, deployOpts{Progress: time.Minute, MaxStreams: 1})
	agent, cred, err := gate.Issue(context.Background(), d.DB, ask.Credential{Space: testSpace, Role: ask.RoleAgent, Actor: ask.Actor{ID: "agent:s", Name: "s"}, Person: owner})
	if err != nil {
		t.Fatal(err)
	}
	s := d.openStream(t, agent, initSession(t, d.MCP, agent, testClientInfo))
	if s.res.StatusCode != 200 {
		t.Fatalf("GET stream: %d", s.res.StatusCode)
	}
	if err := d.DB.RevokeCredential(context.Background(), testSpace, cred.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !s.ended(t) {
		t.Error("the stream of a revoked credential did not end")
	}

	headers := initSession(t, d.MCP, d.Token, testClientInfo)
	s = d.openStream(t, d.Token, headers)
	if second := d.openStream(t, d.Token, headers); second.res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a second stream over --max-streams 1: %d", second.res.StatusCode)
	}
	s.conn.Close()
	eventually(t, "the stream's place given back once its client left", func() bool {
		st := d.openStream(t, d.Token, headers)
		if st.res.StatusCode == 200 {
			s = st
			return true
		}
		st.conn.Close()
		return false
	})
	d.letGo()
	if !s.ended(t) {
		t.Error("the stream did not end at shutdown")
	}
}

// TestSessionStreamsHoldLittle: a session with its stream open holds at most one goroutine (on
// Linux none: one poller hears every parked connection's client leave) and a few KiB of heap: not net/http's goroutines and buffers, nor
// mcp-go's forwarder, nor the session mcp-go kept since initialize with its channels
// (docs/benchmarks.md, "Fifth step").
func TestSessionStreamsHoldLittle(t *testing.T) {
	d := newTestDeployment(t, deployOpts{Progress: time.Minute})
	const n = 100
	settle := func() (goroutines int, heap uint64) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return runtime.NumGoroutine(), m.HeapAlloc
	}
	// A session with its stream: what mcp-go kept of the session since initialize counts too.
	_, h0 := settle()
	sessions := make([]map[string]string, n)
	for i := range sessions {
		sessions[i] = initSession(t, d.MCP, d.Token, testClientInfo)
	}
	g0, _ := settle()
	conns := make([]net.Conn, n)
	for i, headers := range sessions {
		// Raw connections that keep no buffers, so that the heap is the server's.
		conn, err := net.Dial("tcp", strings.TrimPrefix(d.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		req, _ := http.NewRequest("GET", d.MCP, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+d.Token)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		if err := req.Write(conn); err != nil {
			t.Fatal(err)
		}
		head := make([]byte, len("HTTP/1.1 200"))
		if _, err := io.ReadFull(conn, head); err != nil || string(head) != "HTTP/1.1 200" {
			t.Fatalf("GET stream: %q %v", head, err)
		}
		conns[i] = conn
	}
	goroutines, per := math.MaxInt, uint64(math.MaxUint64)
	most := 1.2 // a read each; on Linux one poller for all (hangup.go)
	if runtime.GOOS == "linux" {
		most = 0.1
	}
	eventually(t, fmt.Sprintf("%d streams to hold at most %.1f goroutines each", n, most), func() bool {
		g, h := settle()
		goroutines, per = g-g0, min(per, (max(h, h0)-h0)/n)
		return float64(goroutines)/n <= most
	})
	t.Logf("%d sessions with open streams: %d goroutines, %.1f KiB of live heap each", n, goroutines, float64(per)/1024)
	if most := uint64(8 << 10); per > most {
		t.Errorf("%d sessions with open streams hold %.1f KiB of live heap each, over %d KiB", n, float64(per)/1024, most>>10)
	}
	for _, c := range conns {
		c.Close()
	}
	eventually(t, "the streams' goroutines gone once their clients left", func() bool {
		g, _ := settle()
		return g <= g0+3
	})
}
