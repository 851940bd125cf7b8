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
//
// Then it measures the floor in the same run, with the same clients: a bare WebSocket server
// (floor.go: this program run with -floor-serve, the same WebSocket library Loopback uses, no
// store, no gate, no JSON) that, on each POST, writes the body as one message to every socket.
// The posted frame is as long as Loopback's ask.updated was. Loopback's figures are then given as
// ratios to the floor's.
package main

import (
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

	"github.com/gorilla/websocket"

	"github.com/loopback-hq/loopback/bench/internal/lbserver"
	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/sqlite"
)

var (
	clientKind  string
	deflate     bool
	withFloor   bool
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
	flag.StringVar(&clientKind, "client", "epoll", "how the clients read: epoll (one goroutine for all, Linux) or goroutines (gorilla/websocket, a goroutine each)")
	floorServe := flag.Bool("floor-serve", false, "be the floor's bare WebSocket server (what the benchmark starts for its floor)")
	floorReady := flag.String("ready-file", "", "with -floor-serve: once listening, write where (JSON, as loopback serve --ready-file) to this file")
	noFloor := flag.Bool("no-floor", false, "skip the floor")
	flag.BoolVar(&deflate, "deflate", false, "offer permessage-deflate, as browsers do (the server then deflates frames of 1 KiB or more)")
	flag.Parse()
	if *floorServe {
		serveFloor(*floorReady)
		return
	}
	withFloor = !*noFloor
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
	srv, err := start(bin, []string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--debug-addr", debugAddr, "--max-sockets", "100000"}, lbserver.ReadyFile(dir), "LOOPBACK_TOKEN="+token)
	if err != nil {
		return err
	}
	defer srv.stop()
	srv.debug = "http://" + debugAddr
	lb, err := fanout(srv, sockets, len(ids), warmup, func(i int) (*http.Request, []byte) {
		req, _ := newReply(srv.base, ids[i])
		return req, []byte(`"id":"` + ids[i] + `"`)
	})
	if err != nil {
		return err
	}
	srv.stop()

	fmt.Printf("\n%d sockets, %d replies (after %d warm-up), %s/%s, %d CPUs, server %s\n",
		sockets, replies, warmup, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), bin)
	fmt.Printf("reply → last socket has ask.updated: p50 %v  p99 %v  max %v\n", pct(lb.lat, 50), pct(lb.lat, 99), pct(lb.lat, 100))
	fmt.Printf("reply → HTTP 200 (for comparison):   p50 %v  p99 %v\n", pct(lb.http, 50), pct(lb.http, 99))
	lb.printMemory(sockets)
	if !withFloor {
		return nil
	}

	// The floor: the same clients on a bare server that writes a frame of the same length.
	self, err := os.Executable()
	if err != nil {
		return err
	}
	floor, err := start(self, []string{"-floor-serve"}, filepath.Join(dir, "floor-ready.json"))
	if err != nil {
		return err
	}
	defer floor.stop()
	frameLen := lb.frameLen
	fl, err := fanout(floor, sockets, len(ids), warmup, func(i int) (*http.Request, []byte) {
		id := fmt.Sprintf("floor-%06d", i)
		frame := []byte(`{"type":"ask.updated","ask":{"id":"` + id + `","status":"closed","pad":"`)
		frame = append(frame, bytes.Repeat([]byte("x"), max(0, frameLen-len(frame)-3))...)
		frame = append(frame, `"}}`...)
		req, _ := http.NewRequest("POST", floor.base+"/fire", bytes.NewReader(frame))
		return req, []byte(`"id":"` + id + `"`)
	})
	if err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	fmt.Printf("\nfloor (a bare WebSocket server writing a %d-byte frame to every socket, same clients):\n", frameLen)
	fmt.Printf("post → last socket has the frame:    p50 %v  p99 %v  max %v\n", pct(fl.lat, 50), pct(fl.lat, 99), pct(fl.lat, 100))
	fl.printMemory(sockets)
	fmt.Printf("\nLoopback / floor: p50 %.2f×  p99 %.2f×;  RSS per socket %.2f×\n",
		ratio(pct(lb.lat, 50), pct(fl.lat, 50)), ratio(pct(lb.lat, 99), pct(fl.lat, 99)),
		float64(lb.rss1-lb.rss0)/float64(max(1, fl.rss1-fl.rss0)))
	return nil
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(max(1, b)) }

// server is a process the benchmark started: Loopback, or the floor.
type server struct {
	cmd   *exec.Cmd
	base  string
	debug string // pprof, when served
	once  sync.Once
}

// start runs bin with args and --ready-file ready, and waits for that file (Loopback's, or the
// floor's, which writes one the same way) to learn where the server listens.
func start(bin string, args []string, ready string, env ...string) (*server, error) {
	os.Remove(ready)
	cmd := exec.Command(bin, append(args, "--ready-file", ready)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd}
	r, err := lbserver.WaitReady(ready, 30*time.Second)
	if err != nil {
		s.stop()
		return nil, err
	}
	s.base = r.URL
	return s, nil
}

func (s *server) stop() {
	s.once.Do(func() {
		s.cmd.Process.Signal(os.Interrupt)
		s.cmd.Wait()
	})
}

// measured is what one fan-out run saw.
type measured struct {
	lat, http                []time.Duration
	rss0, rss1, heap0, heap1 int64
	g0, g1                   int
	frameLen                 int
}

func (m measured) printMemory(sockets int) {
	n := int64(sockets)
	fmt.Printf("server RSS:  %.1f MiB → %.1f MiB: %.1f KiB per socket\n", mib(m.rss0), mib(m.rss1), float64(m.rss1-m.rss0)/1024/float64(n))
	if m.heap0 > 0 {
		fmt.Printf("server heap+stacks: %.1f MiB → %.1f MiB: %.1f KiB per socket (heap and goroutine stacks in use, after a GC)\n", mib(m.heap0), mib(m.heap1), float64(m.heap1-m.heap0)/1024/float64(n))
		fmt.Printf("goroutines:  %d → %d: %.1f per socket\n", m.g0, m.g1, float64(m.g1-m.g0)/float64(n))
	}
}

// fanout opens the sockets on srv, measures its memory with them idle, then sends each of n
// triggers (the first warmup not counted) and times it until every socket has the frame that
// holds its marker (and "status":"closed").
func fanout(srv *server, sockets, n, warmup int, trigger func(i int) (*http.Request, []byte)) (m measured, err error) {
	ctx := context.Background()
	pid := srv.cmd.Process.Pid
	time.Sleep(500 * time.Millisecond)
	if m.rss0, m.heap0, m.g0, err = measure(pid, srv.debug); err != nil {
		return m, err
	}

	// Open the sockets; each reader notes when it sees the frame being timed.
	type target struct {
		id   []byte
		seen atomic.Int64 // sockets that have it
		done chan struct{}
		last atomic.Int64 // unix nanos of the last socket to see it
		len  atomic.Int64
	}
	var current atomic.Pointer[target]
	var opened sync.WaitGroup
	conns := make([]*websocket.Conn, sockets)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	// onMessage is every client's: it notes when the last socket has the frame being timed.
	onMessage := func(b []byte) {
		t := current.Load()
		if t != nil && bytes.HasPrefix(b, []byte(`{"type":"ask.updated"`)) && bytes.Contains(b, t.id) && bytes.Contains(b, []byte(`"status":"closed"`)) {
			now := time.Now().UnixNano()
			t.len.Store(int64(len(b)))
			if t.seen.Add(1) == int64(sockets) {
				t.last.Store(now)
				close(t.done)
			}
		}
	}
	var epoll *epollReader
	if clientKind == "epoll" {
		if epoll, err = newEpollReader(); err != nil {
			return m, err
		}
		defer epoll.close()
	}
	began := time.Now()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	// The clients are gorilla/websocket's. With -client goroutines each reads on a goroutine of
	// its own (coder/websocket's Read, used before, hands every read to a second goroutine of the
	// connection's, which doubled what the clients took of the two cores they share with the
	// server); with -client epoll (the default) one goroutine reads them all (epoll_linux.go).
	dialer := websocket.Dialer{Subprotocols: []string{"loopback.v1"}, ReadBufferSize: 4096, WriteBufferSize: 512, EnableCompression: deflate}
	wsBase := "ws" + strings.TrimPrefix(srv.base, "http")
	for i := range sockets {
		c, res, err := dialer.DialContext(ctx, wsBase+"/api/v1/events", http.Header{"Authorization": {"Bearer " + token}})
		if err != nil {
			return m, fmt.Errorf("socket %d: %w", i, err)
		}
		res.Body.Close()
		c.SetReadLimit(16 << 20)
		conns[i] = c
		if epoll != nil {
			if _, _, err := c.ReadMessage(); err != nil { // the snapshot
				return m, fmt.Errorf("socket %d: %w", i, err)
			}
			if err := epoll.add(c); err != nil {
				return m, err
			}
			continue
		}
		opened.Add(1)
		go func() {
			first := true
			for {
				_, b, err := c.ReadMessage()
				if err != nil {
					return
				}
				if first {
					first = false
					opened.Done()
					continue
				}
				onMessage(b)
			}
		}()
	}
	if epoll != nil {
		go epoll.run(onMessage)
	}
	opened.Wait()
	fmt.Printf("opened %d sockets on %s (every first frame received) in %v\n", sockets, srv.base, time.Since(began).Round(time.Millisecond))
	time.Sleep(*idle) // idle
	if m.rss1, m.heap1, m.g1, err = measure(pid, srv.debug); err != nil {
		return m, err
	}
	if *heapProfile != "" && srv.debug != "" {
		if err := saveProfile(srv.debug+"/debug/pprof/heap?gc=1", *heapProfile); err != nil {
			return m, err
		}
	}

	profiled := make(chan error, 1)
	if *cpuProfile != "" && srv.debug != "" {
		secs := max(1, (n-warmup)/10)
		go func() {
			profiled <- saveProfile(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", srv.debug, secs), *cpuProfile)
		}()
	} else {
		profiled <- nil
	}
	for i := range n {
		req, marker := trigger(i)
		t := &target{id: marker, done: make(chan struct{})}
		current.Store(t)
		sent := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return m, err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			return m, fmt.Errorf("trigger %d: %s", i, res.Status)
		}
		answered := time.Since(sent)
		select {
		case <-t.done:
		case <-time.After(30 * time.Second):
			return m, fmt.Errorf("trigger %d: only %d of %d sockets got it", i, t.seen.Load(), sockets)
		}
		if i >= warmup {
			m.lat = append(m.lat, time.Duration(t.last.Load()-sent.UnixNano()))
			m.http = append(m.http, answered)
		}
		m.frameLen = int(t.len.Load())
		time.Sleep(50 * time.Millisecond)
	}
	return m, <-profiled
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
