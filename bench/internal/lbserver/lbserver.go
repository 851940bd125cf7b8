// Package lbserver runs the loopback binary for the benchmarks that need a whole server (soak,
// reach): it starts `loopback serve` on a data folder, learns its address from the ready file
// (--ready-file) and the agent token from the data folder where the server keeps it, kills it as
// a crash would, and speaks to it as an agent (MCP 2026-07-28, no session) and as the person (the
// HTTP API). WaitReady is also what the other benchmarks that start a server use.
package lbserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Server is one loopback serve process, started again on the same folder after a Kill.
type Server struct {
	Bin, Dir string
	// Addr is where to listen: "127.0.0.1:0" the first time; Start sets the address taken, so
	// that a restart listens there again.
	Addr  string
	Token string   // the owner's (LOOPBACK_TOKEN)
	Args  []string // serve's flags beyond --addr and --data
	Env   []string // added to this process's environment

	Cmd   *exec.Cmd
	Agent string      // the agent token the server printed
	Log   *TailBuffer // the server's log (stderr), its last lines for a failure's report
}

// Start runs the binary and waits for its ready file; the agent token is the one the server
// keeps in its data folder (agent.token), read there, not from the welcome text.
func (s *Server) Start() error {
	ready := ReadyFile(s.Dir)
	os.Remove(ready)
	s.Cmd = exec.Command(s.Bin, append([]string{"serve", "--addr", s.Addr, "--data", s.Dir, "--ready-file", ready}, s.Args...)...)
	s.Cmd.Env = append(append(os.Environ(), s.Env...), "LOOPBACK_TOKEN="+s.Token)
	s.Log = &TailBuffer{}
	s.Cmd.Stdout = io.Discard
	s.Cmd.Stderr = s.Log
	if err := s.Cmd.Start(); err != nil {
		return err
	}
	r, err := WaitReady(ready, 30*time.Second)
	if err != nil {
		s.Kill()
		return fmt.Errorf("%w: %s", err, s.Log.String())
	}
	s.Addr = r.Addr
	b, err := os.ReadFile(filepath.Join(s.Dir, "agent.token"))
	if s.Agent = strings.TrimSpace(string(b)); err != nil || s.Agent == "" {
		s.Kill()
		return fmt.Errorf("no agent token kept in %s (%v): %s", s.Dir, err, s.Log.String())
	}
	return nil
}

// Ready is what `loopback serve --ready-file PATH` writes once it listens: where it is, and no
// token.
type Ready struct {
	Addr string `json:"addr"` // host:port
	URL  string `json:"url"`
	API  string `json:"api"` // URL + /api/v1
	MCP  string `json:"mcp"` // URL + /mcp
}

// ReadyFile is where a benchmark asks the server it starts on data folder dir to write its
// ready file.
func ReadyFile(dir string) string { return filepath.Join(dir, "bench-ready.json") }

// WaitReady waits up to timeout for the ready file at path (the server writes it whole, by
// renaming it into place) and reads it.
func WaitReady(path string, timeout time.Duration) (Ready, error) {
	var r Ready
	for deadline := time.Now().Add(timeout); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if err == nil {
			if err := json.Unmarshal(b, &r); err != nil || r.Addr == "" {
				return r, fmt.Errorf("the ready file %s: %q (%v)", path, b, err)
			}
			return r, nil
		}
		if time.Now().After(deadline) {
			return r, fmt.Errorf("the server wrote no ready file in %v", timeout)
		}
	}
}

// Kill ends the process at once, as a crash would, and waits for it.
func (s *Server) Kill() {
	if s.Cmd == nil || s.Cmd.Process == nil || s.Cmd.ProcessState != nil {
		return
	}
	s.Cmd.Process.Signal(syscall.SIGKILL)
	s.Cmd.Wait()
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}

// Call calls an MCP tool as the agent and returns its result.
func (s *Server) Call(ctx context.Context, tool string, args map[string]any) (map[string]any, error) {
	return s.MCP(ctx, "tools/call", tool, map[string]any{"name": tool, "arguments": args})
}

// MCP sends one MCP 2026-07-28 request (no session, no tasks) as the agent and returns its
// result; name is the Mcp-Name header's (the tool's, for tools/call).
func (s *Server) MCP(ctx context.Context, method, name string, params map[string]any) (map[string]any, error) {
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+s.Addr+"/mcp", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.Agent)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		for _, l := range strings.Split(string(b), "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok {
				b = []byte(d)
			}
		}
	}
	var msg struct {
		Result map[string]any
		Error  any
	}
	if err := json.Unmarshal(b, &msg); err != nil || msg.Error != nil || msg.Result == nil {
		return nil, fmt.Errorf("%s: %d %.300s", name, res.StatusCode, b)
	}
	return msg.Result, nil
}

// API sends one request to the HTTP API as the person, decoding the answer into v when given.
func (s *Server) API(method, path, body string, v any) (int, error) {
	req, _ := http.NewRequest(method, "http://"+s.Addr+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.Token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if v != nil {
		err = json.NewDecoder(res.Body).Decode(v)
	} else {
		io.Copy(io.Discard, res.Body)
	}
	return res.StatusCode, err
}

// TailBuffer keeps the last 64 KiB written to it.
type TailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 64<<10 {
		t.buf = t.buf[len(t.buf)-64<<10:]
	}
	return len(p), nil
}

func (t *TailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// ErrorLines are the log's lines at level ERROR, the last n of them.
func (t *TailBuffer) ErrorLines(n int) []string {
	var out []string
	for _, l := range strings.Split(t.String(), "\n") {
		if strings.Contains(l, "level=ERROR") || strings.Contains(l, `"level":"ERROR"`) {
			out = append(out, l)
		}
	}
	return out[max(0, len(out)-n):]
}
