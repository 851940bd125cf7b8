package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// runTasks measures waiting tasks (MCP 2026-07-28, the Tasks extension): N agents each start a
// blocking tool that answers at once with a task, as Claude Code does. A waiting task holds no
// goroutine and no connection, only rows (the ask, the task, its lease), so the figures are the
// server's resident memory and its database per task, and a poll's latency with N stored.
func runTasks(bin string, n int) error {
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
	dbBefore := dbSize(s.dir)
	const workers = 16
	ids := make([]string, n)
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	started := time.Now()
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				id, err := s.startTask(fmt.Sprintf("tasks-%d", i%50))
				if err != nil {
					if failed.Add(1) == 1 {
						fmt.Fprintln(os.Stderr, "task:", err)
					}
					continue
				}
				ids[i] = id
			}
		})
	}
	wg.Wait()
	took := time.Since(started)
	time.Sleep(settle)
	after, err := rss(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	dbAfter := dbSize(s.dir)
	var polls []time.Duration
	for i := 0; i < 1000 && i < n; i++ {
		id := ids[(i*7919)%n]
		if id == "" {
			continue
		}
		t0 := time.Now()
		if err := s.getTask(id); err != nil {
			return err
		}
		polls = append(polls, time.Since(t0))
	}
	p50, p99 := percentiles(polls)
	fmt.Printf("%d waiting tasks (%d errors) created in %v (%.0f a second, %d agents at once)\n", n, failed.Load(), took.Round(time.Second), float64(n)/took.Seconds(), workers)
	fmt.Printf("server RSS %d MiB → %d MiB: %.2f KiB per waiting task; database %d MiB → %d MiB: %.2f KiB per task\n",
		before>>20, after>>20, float64(after-before)/1024/float64(n), dbBefore>>20, dbAfter>>20, float64(dbAfter-dbBefore)/1024/float64(n))
	fmt.Printf("tasks/get with %d tasks stored (%d polls): p50 %v  p99 %v\n", n, len(polls), p50, p99)
	if failed.Load() > 0 {
		return fmt.Errorf("%d tasks failed", failed.Load())
	}
	return nil
}

// modern posts one 2026-07-28 request that declares the Tasks extension and returns its result.
func (s *server) modern(method, name string, params map[string]any) (map[string]any, error) {
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "mcpwait", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest("POST", s.base+"/mcp", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	res, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	var msg struct {
		Result map[string]any
		Error  any
	}
	if err := json.Unmarshal(b, &msg); err != nil || msg.Error != nil {
		return nil, fmt.Errorf("%s: %d %.200s", method, res.StatusCode, b)
	}
	return msg.Result, nil
}

func (s *server) startTask(project string) (string, error) {
	r, err := s.modern("tools/call", "ask_question", map[string]any{"name": "ask_question",
		"arguments": map[string]any{"question": "Go?", "options": []map[string]any{{"label": "Yes"}, {"label": "No"}}, "project": project}})
	if err != nil {
		return "", err
	}
	id, _ := r["taskId"].(string)
	if r["resultType"] != "task" || id == "" {
		return "", fmt.Errorf("not a task: %v", r)
	}
	return id, nil
}

func (s *server) getTask(id string) error {
	r, err := s.modern("tasks/get", id, map[string]any{"taskId": id})
	if err == nil && r["status"] != "working" {
		err = fmt.Errorf("task %s is %v", id, r["status"])
	}
	return err
}

// dbSize is the size of the server's SQLite database, its write-ahead log included.
func dbSize(dir string) int64 {
	var n int64
	matches, _ := filepath.Glob(filepath.Join(dir, "loopback.db*"))
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil && !strings.HasSuffix(m, "-shm") {
			n += fi.Size()
		}
	}
	return n
}
