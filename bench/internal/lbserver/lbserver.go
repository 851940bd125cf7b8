// Package lbserver runs the loopback binary for the benchmarks that need a whole server (soak,
// reach): it starts `loopback serve` on a data folder, reads the address and agent token it
// prints, kills it as a crash would, and speaks to it as an agent (MCP 2026-07-28, no session) and
// as the person (the HTTP API).
package lbserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
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

// Start runs the binary and reads the address and agent token it prints.
func (s *Server) Start() error {
	s.Cmd = exec.Command(s.Bin, append([]string{"serve", "--addr", s.Addr, "--data", s.Dir}, s.Args...)...)
	s.Cmd.Env = append(append(os.Environ(), s.Env...), "LOOPBACK_TOKEN="+s.Token)
	out, _ := s.Cmd.StdoutPipe()
	s.Log = &TailBuffer{}
	s.Cmd.Stderr = s.Log
	if err := s.Cmd.Start(); err != nil {
		return err
	}
	s.Agent = ""
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if api, ok := strings.CutPrefix(strings.TrimSpace(line), "API:"); ok {
			s.Addr = strings.TrimPrefix(strings.TrimSuffix(strings.TrimSpace(api), "/api/v1"), "http://")
		}
		if i := strings.Index(line, "Bearer lb_"); i >= 0 && s.Agent == "" {
			s.Agent = strings.Trim(strings.Fields(line[i+7:])[0], `"}`)
		}
		if strings.HasPrefix(line, "One agent token") {
			break
		}
	}
	go io.Copy(io.Discard, out)
	if s.Agent == "" {
		s.Kill()
		return fmt.Errorf("the server printed no agent token: %s", s.Log.String())
	}
	return nil
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
