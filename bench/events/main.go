// Command events measures the event socket of the local binary: it starts `loopback serve` as its
// own process, opens many sockets on it, and times how long a reply takes to reach every one of
// them, and what the sockets cost the server in memory.
//
//	make build && go run ./bench/events -bin bin/loopback -sockets 1000 -replies 50
//
// For each reply (POST /api/v1/asks/{id}/reply) it records the time from sending the request to
// the moment the LAST socket has the ask's ask.updated frame, and reports p50, p99 and max over the
// replies. Memory per socket is the server's growth, with every socket open and idle, divided by
// the number of sockets: resident set size (from /proc), and heap and goroutines (from the
// server's pprof endpoint, --debug-addr) after a forced GC.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/sqlite"
)

var (
	heapProfile *string
	cpuProfile  *string
	idle        *time.Duration
)

const token = "lb_bench-owner-token-0123456789abcdefghijklmnopqrstuv"

func main() {
	bin := flag.String("bin", "bin/loopback", "the loopback binary to measure")
	sockets := flag.Int("sockets", 1000, "event sockets to open")
	replies := flag.Int("replies", 50, "replies to time")
	warmup := flag.Int("warmup", 5, "replies sent first and not counted")
	cpuProfile = flag.String("cpuprofile", "", "save a CPU profile of the server while it fans replies out (the first replies/10 seconds) to this file")
	idle = flag.Duration("idle", 5*time.Second, "how long the sockets sit idle before the server's memory is measured")
	heapProfile = flag.String("heapprofile", "", "save the server's heap profile, with every socket open and idle, to this file")
	flag.Parse()
	if err := run(*bin, *sockets, *replies, *warmup); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(bin string, sockets, replies, warmup int) error {
	if err := raiseFileLimit(2*sockets + 256); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "loopback-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// Asks to reply to, made before the server starts (each reply closes one).
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "loopback.db"))
	if err != nil {
		return err
	}
	svc := ask.NewService(db)
	var ids []string
	for i := range warmup + replies {
		a, err := svc.AskQuestion(ctx, ask.QuestionInput{
			Question: fmt.Sprintf("Ship change %d?", i), Project: "bench",
			Options: []ask.Choice{{Label: "Yes"}, {Label: "No"}},
		}, ask.Origin{Space: "local", Client: "bench 1.0", RaisedBy: &ask.Actor{ID: "owner"}})
		if err != nil {
			return err
		}
		ids = append(ids, a.ID)
	}
	db.Close()

	debugAddr, err := freeAddr()
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", dir, "--debug-addr", debugAddr, "--max-sockets", "100000")
	cmd.Env = append(os.Environ(), "LOOPBACK_TOKEN="+token)
	cmd.Stderr = io.Discard
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	base, err := readBase(out)
	if err != nil {
		return err
	}
	go io.Copy(io.Discard, out)
	debug := "http://" + debugAddr
	pid := cmd.Process.Pid

	time.Sleep(500 * time.Millisecond)
	rss0, heap0, g0, err := measure(pid, debug)
	if err != nil {
		return err
	}

	// Open the sockets; each reader notes when it sees the ask.updated of the ask being timed.
	type target struct {
		id   []byte
		seen atomic.Int64 // sockets that have it
		done chan struct{}
		last atomic.Int64 // unix nanos of the last socket to see it
	}
	var current atomic.Pointer[target]
	var opened sync.WaitGroup
	conns := make([]*websocket.Conn, sockets)
	start := time.Now()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	for i := range sockets {
		c, _, err := websocket.Dial(ctx, base+"/api/v1/events", &websocket.DialOptions{
			Subprotocols: []string{"loopback.v1"}, HTTPClient: client,
			HTTPHeader: http.Header{"Authorization": {"Bearer " + token}},
		})
		if err != nil {
			return fmt.Errorf("socket %d: %w", i, err)
		}
		c.SetReadLimit(16 << 20)
		conns[i] = c
		opened.Add(1)
		go func() {
			first := true
			for {
				_, b, err := c.Read(ctx)
				if err != nil {
					return
				}
				if first {
					first = false
					opened.Done()
					continue
				}
				t := current.Load()
				if t != nil && bytes.HasPrefix(b, []byte(`{"type":"ask.updated"`)) && bytes.Contains(b, t.id) && bytes.Contains(b, []byte(`"status":"closed"`)) {
					now := time.Now().UnixNano()
					if t.seen.Add(1) == int64(sockets) {
						t.last.Store(now)
						close(t.done)
					}
				}
			}
		}()
	}
	opened.Wait()
	fmt.Printf("opened %d sockets (every snapshot received) in %v\n", sockets, time.Since(start).Round(time.Millisecond))
	time.Sleep(*idle) // idle
	rss1, heap1, g1, err := measure(pid, debug)
	if err != nil {
		return err
	}
	if *heapProfile != "" {
		if err := saveProfile(debug+"/debug/pprof/heap?gc=1", *heapProfile); err != nil {
			return err
		}
	}

	profiled := make(chan error, 1)
	if *cpuProfile != "" {
		secs := max(1, replies/10)
		go func() {
			profiled <- saveProfile(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", debug, secs), *cpuProfile)
		}()
	} else {
		profiled <- nil
	}
	var lat, http []time.Duration
	for i, id := range ids {
		t := &target{id: []byte(`"id":"` + id + `"`), done: make(chan struct{})}
		current.Store(t)
		sent := time.Now()
		req, _ := newReply(base, id)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			return fmt.Errorf("reply %d: %s", i, res.Status)
		}
		answered := time.Since(sent)
		select {
		case <-t.done:
		case <-time.After(30 * time.Second):
			return fmt.Errorf("reply %d: only %d of %d sockets got it", i, t.seen.Load(), sockets)
		}
		if i >= warmup {
			lat = append(lat, time.Duration(t.last.Load()-sent.UnixNano()))
			http = append(http, answered)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := <-profiled; err != nil {
		return err
	}
	for _, c := range conns {
		c.CloseNow()
	}

	fmt.Printf("\n%d sockets, %d replies (after %d warm-up), %s/%s, %d CPUs, server %s\n",
		sockets, replies, warmup, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), bin)
	fmt.Printf("reply → last socket has ask.updated: p50 %v  p99 %v  max %v\n", pct(lat, 50), pct(lat, 99), pct(lat, 100))
	fmt.Printf("reply → HTTP 200 (for comparison):   p50 %v  p99 %v\n", pct(http, 50), pct(http, 99))
	n := int64(sockets)
	fmt.Printf("server RSS:  %.1f MiB → %.1f MiB: %.1f KiB per socket\n", mib(rss0), mib(rss1), float64(rss1-rss0)/1024/float64(n))
	if heap0 > 0 {
		fmt.Printf("server heap+stacks: %.1f MiB → %.1f MiB: %.1f KiB per socket (heap and goroutine stacks in use, after a GC)\n", mib(heap0), mib(heap1), float64(heap1-heap0)/1024/float64(n))
		fmt.Printf("goroutines:  %d → %d: %.1f per socket\n", g0, g1, float64(g1-g0)/float64(n))
	}
	return nil
}

func saveProfile(url, file string) error {
	res, err := http.Get(url)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, res.Body)
	return err
}

func newReply(base, id string) (*http.Request, error) {
	req, err := http.NewRequest("POST", base+"/api/v1/asks/"+id+"/reply", strings.NewReader(`{"outcome":"answered","selected":["Yes"]}`))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	if i < 1 {
		i = 1
	}
	return s[i-1].Round(10 * time.Microsecond)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// measure returns the server's resident set, and (from pprof, after a GC) its heap in use and
// goroutine count; heap is 0 when pprof is not served.
func measure(pid int, debug string) (rss, heap int64, goroutines int, err error) {
	heap, goroutines = pprofStats(debug)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0, err
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		return 0, 0, 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb * 1024, heap, goroutines, nil
}

func pprofStats(debug string) (heap int64, goroutines int) {
	get := func(path string) string {
		res, err := http.Get(debug + path)
		if err != nil {
			return ""
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	// Heap in use and goroutine stacks in use, after a GC.
	profile := get("/debug/pprof/heap?gc=1&debug=1")
	if os.Getenv("BENCH_VERBOSE") != "" {
		for _, l := range strings.Split(profile, "\n") {
			if strings.HasPrefix(l, "# Heap") || strings.HasPrefix(l, "# Stack") || strings.HasPrefix(l, "# Sys") || strings.HasPrefix(l, "# NumGC") {
				fmt.Println(l)
			}
		}
	}
	for _, re := range []string{`# HeapInuse = (\d+)`, `# Stack = (\d+)`} {
		if m := regexp.MustCompile(re).FindStringSubmatch(profile); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			heap += n
		}
	}
	if m := regexp.MustCompile(`goroutine profile: total (\d+)`).FindStringSubmatch(get("/debug/pprof/goroutine?debug=1")); m != nil {
		goroutines, _ = strconv.Atoi(m[1])
	}
	return heap, goroutines
}

func readBase(out io.Reader) (string, error) {
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if api, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "API:"); ok {
			return strings.TrimSuffix(strings.TrimSpace(api), "/api/v1"), nil
		}
	}
	return "", fmt.Errorf("the server printed no address")
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// raiseFileLimit lifts this process's open-file limit (which the server inherits) to at least n,
// as far as the hard limit allows.
func raiseFileLimit(n int) error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return err
	}
	if l.Cur >= uint64(n) {
		return nil
	}
	l.Cur = min(max(uint64(n), l.Cur), l.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return err
	}
	if l.Cur < uint64(n) {
		return fmt.Errorf("open-file limit is %d (hard); %d sockets need about %d", l.Max, n/2, n)
	}
	return nil
}
