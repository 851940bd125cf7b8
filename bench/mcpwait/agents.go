package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// runAgents measures memory per waiting agent (issue 30): n agents of one protocol revision,
// each its own client with its own connections, as an agent process is. A 2025-11-25 agent
// does what the SDKs do: initialize, notifications/initialized, then it opens the session's
// standalone GET stream and keeps it open, then it makes a blocking ask_question call. A
// 2026-07-28 agent has no session and no GET stream: it makes the blocking call. The figure is
// the server's resident memory growth, read settle after every call is seen waiting, divided
// by n: everything an agent holds on the server (its session's stream, its idle keep-alive
// connection, its waiting call).
func runAgents(bin string, n int, revisions []string) error {
	for _, rev := range revisions {
		if err := runAgentsOf(bin, n, rev); err != nil {
			return fmt.Errorf("%s: %w", rev, err)
		}
	}
	return nil
}

func runAgentsOf(bin string, n int, revision string) error {
	s, err := start(bin)
	if err != nil {
		return err
	}
	defer s.stop()
	time.Sleep(time.Second)
	before, err := rss(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var streams, failed atomic.Int64
	var firstErr sync.Once
	fail := func(err error) {
		if ctx.Err() != nil {
			return
		}
		failed.Add(1)
		firstErr.Do(func() { fmt.Println("first error:", err) })
	}
	started := time.Now()
	// 32 agents start at a time, as a fleet of agents comes up, spread over -ramp; each then waits.
	sem := make(chan struct{}, 32)
	for i := range n {
		if ramp > 0 {
			time.Sleep(time.Until(started.Add(ramp * time.Duration(i) / time.Duration(n))))
		}
		sem <- struct{}{}
		go func() {
			a := &agent{s: s, revision: revision, project: fmt.Sprintf("agents-%d", i%50),
				client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}
			err := a.connect(ctx, &streams)
			<-sem
			if err != nil {
				fail(err)
				return
			}
			if err := a.call(ctx); err != nil {
				fail(err)
			}
		}()
	}
	var waiting int
	for time.Since(started) < 5*time.Minute {
		ids, err := s.waitingAsks()
		if err != nil {
			return err
		}
		if waiting = len(ids); waiting >= n || int(failed.Load())+waiting >= n {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	allWaiting := time.Since(started)
	time.Sleep(settle)
	after, err := rss(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Printf("%d agents on %s, started over %v (%d waiting, %d GET streams open, %d errors; all waiting after %v, read %v later): server RSS %d MiB → %d MiB, %.1f KiB per waiting agent\n",
		n, revision, ramp, waiting, streams.Load(), failed.Load(), allWaiting.Round(time.Second), settle, before>>20, after>>20, float64(after-before)/1024/float64(n))
	if debugAddr != "" {
		gcd := afterForcedGCs(s)
		fmt.Printf("after forced GCs: server RSS %d MiB, %.1f KiB per waiting agent\n", gcd>>20, float64(gcd-before)/1024/float64(n))
		fmt.Println("profiles at http://" + debugAddr + "/debug/pprof/ — press Enter to finish")
		bufio.NewReader(os.Stdin).ReadString('\n')
	}
	if failed.Load() > 0 || waiting < n {
		return fmt.Errorf("%d agents failed, %d of %d waiting", failed.Load(), waiting, n)
	}
	if revision == rev2025 && int(streams.Load()) != n {
		return fmt.Errorf("%d of %d GET streams open", streams.Load(), n)
	}
	return nil
}

const (
	rev2025 = "2025-11-25"
	rev2026 = "2026-07-28"
)

// agent is one MCP client: its own connections, its own session (2025-11-25).
type agent struct {
	s        *server
	revision string
	project  string
	client   *http.Client
	session  string
}

func (a *agent) request(ctx context.Context, method string, body []byte) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, method, a.s.base+"/mcp", bytes.NewReader(body))
	if body == nil {
		req.Body = nil
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("MCP-Protocol-Version", a.revision)
	if a.session != "" {
		req.Header.Set("Mcp-Session-Id", a.session)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	} else {
		req.Header.Set("Accept", "text/event-stream")
	}
	return req
}

// connect does what an agent does before it calls a tool: for 2025-11-25, initialize,
// notifications/initialized and the standalone GET stream (counted in streams while open).
func (a *agent) connect(ctx context.Context, streams *atomic.Int64) error {
	if a.revision != rev2025 {
		return nil
	}
	res, err := a.client.Do(a.request(ctx, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpwait-agent","version":"1"}}}`)))
	if err != nil {
		return err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if a.session = res.Header.Get("Mcp-Session-Id"); res.StatusCode != 200 || a.session == "" {
		return fmt.Errorf("initialize: %d, session %q", res.StatusCode, a.session)
	}
	res, err = a.client.Do(a.request(ctx, http.MethodPost, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)))
	if err != nil {
		return err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		return fmt.Errorf("notifications/initialized: %d", res.StatusCode)
	}
	res, err = a.client.Do(a.request(ctx, http.MethodGet, nil))
	if err != nil {
		return err
	}
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		res.Body.Close()
		return fmt.Errorf("GET stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	streams.Add(1)
	go func() {
		defer res.Body.Close()
		defer streams.Add(-1)
		io.Copy(io.Discard, res.Body)
	}()
	return nil
}

// call makes the blocking ask_question call and waits for its result.
func (a *agent) call(ctx context.Context) error {
	params := map[string]any{"name": "ask_question",
		"arguments": map[string]any{"question": "Go?", "options": []map[string]any{{"label": "Yes"}, {"label": "No"}}, "project": a.project}}
	if a.revision == rev2026 {
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    rev2026,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "mcpwait-agent", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	req := a.request(ctx, http.MethodPost, body)
	if a.revision == rev2026 {
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "ask_question")
	}
	res, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if !bytes.Contains(b, []byte(`"result"`)) {
		return fmt.Errorf("tools/call: %d %.300s", res.StatusCode, b)
	}
	return nil
}
