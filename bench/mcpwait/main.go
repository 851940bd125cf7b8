// Command mcpwait measures how Loopback's local binary waits for people, from outside the process
// as an agent meets it:
//
//  1. latency: a person's reply → the waiting ask_question call returns, against a bare HTTP
//     round trip (GET /api/v1/whoami) to the same process in the same run;
//  2. memory: N concurrent waiting calls, as the server process's resident memory per call.
//
// Usage (from the repository root; `make bench-mcp` runs it):
//
//	go build -o bin/loopback ./cmd/loopback
//	go run ./bench/mcpwait -bin bin/loopback -replies 200 -waiters 10000
//	go run ./bench/mcpwait -bin bin/loopback -agents 1000 -settle 150s  # per waiting agent, both revisions
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/loopback-hq/loopback/bench/internal/lbserver"
)

// serveArgs are extra flags for `loopback serve`, such as --debug-addr to profile the server. It
// starts with the open-ask budgets lifted: one credential holds every waiting ask here.
var serveArgs = []string{"--max-streams", "1000000", "--max-open-asks", "1000000", "--max-open-bytes", "2000000000", "--max-space-open-bytes", "2000000000"}

// debugAddr is where the server serves its profiles; empty: nowhere.
var debugAddr string

// ramp spreads the agents' arrival (-agents).
var ramp time.Duration

// settle is how long the waiting calls sit before the server's memory is read.
var settle time.Duration

const token = "lb_bench-0123456789abcdefghijklmnopqrstuvwxyz"

func main() {
	bin := flag.String("bin", "bin/loopback", "the loopback binary")
	replies := flag.Int("replies", 200, "replies to time")
	waiters := flag.Int("waiters", 10000, "concurrent waiting calls for the memory figure")
	flag.DurationVar(&settle, "settle", 35*time.Second, "how long the waits sit idle before memory is read (Go's runtime forces a collection every 2 minutes)")
	debugAddrFlag := flag.String("debug-addr", "", "pass --debug-addr to the server, and hold the waits until Enter is pressed")
	extra := flag.String("serve-flags", "", "more flags for `loopback serve`, space-separated (such as --progress 1m)")
	agents := flag.Int("agents", 0, "instead: this many waiting agents, each its own client (a 2025-11-25 one with its session's GET stream open), for the memory per waiting agent")
	flag.DurationVar(&ramp, "ramp", 0, "with -agents: start the agents evenly over this long (0: as fast as the server takes them, 32 at a time)")
	protocol := flag.String("protocol", "both", "with -agents: 2025-11-25, 2026-07-28 or both (one after the other)")
	tasks := flag.Int("tasks", 0, "instead: this many waiting tasks (MCP 2026-07-28 Tasks extension), for the memory and store figures per task")
	flag.Parse()
	if debugAddr = *debugAddrFlag; debugAddr != "" {
		serveArgs = append(serveArgs, "--debug-addr", debugAddr)
	}
	serveArgs = append(serveArgs, strings.Fields(*extra)...)
	raiseFileLimit()
	if *agents > 0 {
		revisions := []string{rev2025, rev2026}
		if *protocol != "both" {
			revisions = []string{*protocol}
		}
		if err := runAgents(*bin, *agents, revisions); err != nil {
			fmt.Fprintln(os.Stderr, "mcpwait:", err)
			os.Exit(1)
		}
		return
	}
	if *tasks > 0 {
		if err := runTasks(*bin, *tasks); err != nil {
			fmt.Fprintln(os.Stderr, "mcpwait:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*bin, *replies, *waiters); err != nil {
		fmt.Fprintln(os.Stderr, "mcpwait:", err)
		os.Exit(1)
	}
}

func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

type server struct {
	cmd     *exec.Cmd
	base    string
	dir     string // the data folder
	session string
	client  *http.Client
}

func start(bin string) (*server, error) {
	dir, err := os.MkdirTemp("", "loopback-bench-")
	if err != nil {
		return nil, err
	}
	ready := lbserver.ReadyFile(dir)
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--ready-file", ready, "--progress", "15s", "--max-waits", "1000000", "--quiet-max-wait", "1h"}, serveArgs...)...)
	cmd.Env = append(os.Environ(), "LOOPBACK_TOKEN="+token)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, dir: dir, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 0}}}
	r, err := lbserver.WaitReady(ready, 30*time.Second)
	if err != nil {
		s.stop()
		return nil, err
	}
	s.base = r.URL
	return s, s.initialize()
}

func (s *server) stop() { s.cmd.Process.Kill(); s.cmd.Wait() }

func (s *server) post(ctx context.Context, body string) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(ctx, "POST", s.base+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if s.session != "" {
		req.Header.Set("Mcp-Session-Id", s.session)
	}
	return s.client.Do(req)
}

func (s *server) initialize() error {
	res, err := s.post(context.Background(), `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpwait","version":"1"}}}`)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	s.session = res.Header.Get("Mcp-Session-Id")
	return nil
}

// ask starts a blocking ask_question and returns a channel that yields when its result arrives.
func (s *server) ask(ctx context.Context, project string, client *http.Client) (<-chan error, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_question","arguments":{"question":"Go?","options":[{"label":"Yes"},{"label":"No"}],"project":%q}}}`, project)
	req, _ := http.NewRequestWithContext(ctx, "POST", s.base+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", s.session)
	done := make(chan error, 1)
	go func() {
		res, err := client.Do(req)
		if err != nil {
			done <- err
			return
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err == nil && !bytes.Contains(b, []byte(`"selected":["Yes"]`)) {
			err = fmt.Errorf("unexpected result: %.200s", b)
		}
		done <- err
	}()
	return done, nil
}

func (s *server) get(path string, v any) error {
	req, _ := http.NewRequest("GET", s.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if v == nil {
		_, err = io.Copy(io.Discard, res.Body)
		return err
	}
	return json.NewDecoder(res.Body).Decode(v)
}

func (s *server) reply(id string) error {
	req, _ := http.NewRequest("POST", s.base+"/api/v1/asks/"+id+"/reply", strings.NewReader(`{"outcome":"answered","selected":["Yes"]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := s.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		return fmt.Errorf("reply: %d", res.StatusCode)
	}
	return nil
}

type snapshot struct {
	Open []struct {
		ID      string `json:"id"`
		Waiting bool   `json:"waiting"`
	} `json:"open"`
}

// waitingAsks lists the open asks an agent is waiting on.
func (s *server) waitingAsks() ([]string, error) {
	var snap snapshot
	if err := s.get("/api/v1/snapshot", &snap); err != nil {
		return nil, err
	}
	var ids []string
	for _, a := range snap.Open {
		if a.Waiting {
			ids = append(ids, a.ID)
		}
	}
	return ids, nil
}

func run(bin string, replies, waiters int) error {
	s, err := start(bin)
	if err != nil {
		return err
	}
	defer s.stop()
	fmt.Printf("machine: %d CPUs; %s\n", numCPU(), bin)

	// 1. Latency.
	var replyToReturn, roundTrip []time.Duration
	for range replies {
		done, err := s.ask(context.Background(), "latency", s.client)
		if err != nil {
			return err
		}
		var id string
		for id == "" {
			ids, err := s.waitingAsks()
			if err != nil {
				return err
			}
			if len(ids) > 0 {
				id = ids[0]
			}
		}
		t0 := time.Now()
		if err := s.get("/api/v1/whoami", nil); err != nil {
			return err
		}
		roundTrip = append(roundTrip, time.Since(t0))
		t0 = time.Now()
		if err := s.reply(id); err != nil {
			return err
		}
		if err := <-done; err != nil {
			return err
		}
		replyToReturn = append(replyToReturn, time.Since(t0))
	}
	p50r, p99r := percentiles(replyToReturn)
	p50h, p99h := percentiles(roundTrip)
	fmt.Printf("reply → waiting call returns (%d replies): p50 %v  p99 %v\n", replies, p50r, p99r)
	fmt.Printf("bare HTTP round trip (GET /api/v1/whoami):   p50 %v  p99 %v\n", p50h, p99h)
	fmt.Printf("ratio: p50 %.2f×  p99 %.2f×\n", float64(p50r)/float64(p50h), float64(p99r)/float64(p99h))

	// 2. Memory per waiting call.
	time.Sleep(time.Second)
	before, err := rss(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: waiters}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var failed atomic.Int64
	var wg sync.WaitGroup
	started := time.Now()
	for i := range waiters {
		done, _ := s.ask(ctx, "memory-"+strconv.Itoa(i%50), client)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := <-done; err != nil && ctx.Err() == nil {
				failed.Add(1)
			}
		}()
	}
	var waiting int
	for time.Since(started) < 5*time.Minute {
		ids, err := s.waitingAsks()
		if err != nil {
			return err
		}
		if waiting = len(ids); waiting >= waiters {
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
	fmt.Printf("%d waiting calls (%d seen waiting, %d errors; all waiting after %v, read %v later): server RSS %d MiB → %d MiB, %.1f KiB per waiting call\n",
		waiters, waiting, failed.Load(), allWaiting.Round(time.Second), settle, before>>20, after>>20, float64(after-before)/1024/float64(waiters))
	if debugAddr != "" {
		gcd := afterForcedGCs(s)
		fmt.Printf("after forced GCs: server RSS %d MiB, %.1f KiB per waiting call\n", gcd>>20, float64(gcd-before)/1024/float64(waiters))
		fmt.Println("profiles at http://" + debugAddr + "/debug/pprof/ — press Enter to finish")
		bufio.NewReader(os.Stdin).ReadString('\n')
	}
	if failed.Load() > 0 || waiting < waiters {
		return fmt.Errorf("%d calls failed, %d of %d waiting", failed.Load(), waiting, waiters)
	}
	return nil
}

// afterForcedGCs has the server collect three times (its profile endpoint's gc=1) and returns
// its resident memory 5 s later: what is live, against what was garbage not yet given back.
func afterForcedGCs(s *server) int64 {
	for range 3 {
		if res, err := http.Get("http://" + debugAddr + "/debug/pprof/heap?gc=1"); err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	}
	time.Sleep(5 * time.Second)
	gcd, _ := rss(s.cmd.Process.Pid)
	return gcd
}

func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)]
}

// rss reads a process's resident memory from /proc.
func rss(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS")
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return bytes.Count(b, []byte("processor\t:"))
}
