// Command soak is the fault and load proof of the local binary: agents that keep asking and
// waiting, inbox sockets that keep listening, a person who keeps replying, for a while, with the
// server process killed (SIGKILL) and started again on the same data folder partway through; and
// beside it the slow-body and idle attacks, which must be cut within the body deadline and the
// header and idle timeouts. At the end: every reply the person gave reached the agent that asked
// (through the blocking call, or through list_open_asks and await_reply after the crash), no error
// other than the crash's, and the server's memory flat (the restarted server ends no more than
// half again above the first one's peak).
//
//	go build -o bin/loopback ./cmd/loopback
//	go run ./bench/soak -bin bin/loopback -agents 50 -sockets 50 -duration 2m
//
// `make test` runs a short one (`-agents 8 -sockets 4 -duration 15s`).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loopback-hq/loopback/bench/internal/lbserver"
)

const token = "lb_soak-owner-token-0123456789abcdefghijklmn"

func rss(pid int) int64 {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func main() {
	bin := flag.String("bin", "bin/loopback", "the loopback binary")
	agents := flag.Int("agents", 50, "agents asking and waiting at once")
	sockets := flag.Int("sockets", 50, "inbox sockets listening at once")
	duration := flag.Duration("duration", 2*time.Minute, "how long the run lasts; the server is killed and restarted halfway")
	flag.Parse()
	dir, _ := os.MkdirTemp("", "loopback-soak-")
	defer os.RemoveAll(dir)
	s := &lbserver.Server{Bin: *bin, Dir: dir, Addr: "127.0.0.1:0", Token: token, Args: []string{
		"--progress", "2s", "--body-timeout", "2s", "--header-timeout", "2s", "--idle-timeout", "5s",
		"--max-waits", "10000", "--max-sockets", "10000",
		// Its agents send no progress token: let them wait as long as the run, as before the
		// 50 s bound for such calls (docs/design/waiting.md).
		"--quiet-max-wait", "1h",
		"--max-open-asks", "10000", // every agent asks on the one agent token
	}}
	if err := s.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	var (
		mu       sync.Mutex
		replied  = map[string]string{} // askId → the text the person replied
		received = map[string]string{} // askId → the text the agent got
		errs     []string
		resumed  atomic.Int64
		frames   atomic.Int64
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		errs = append(errs, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	ctx, stop := context.WithTimeout(context.Background(), *duration)
	defer stop()
	var down atomic.Bool // the server is being restarted: errors now are the crash's
	var wg sync.WaitGroup

	// Agents: ask, wait; when the call fails (the crash), find the ask again and wait on it.
	for i := range *agents {
		wg.Go(func() {
			project := fmt.Sprintf("soak-%d", i)
			for ctx.Err() == nil {
				res, err := s.MCP(context.Background(), "tools/call", "ask_question", map[string]any{"name": "ask_question",
					"arguments": map[string]any{"question": "Go on?", "project": project}})
				for err != nil && ctx.Err() == nil {
					if !down.Load() {
						fail("agent %d: %v", i, err)
					}
					time.Sleep(200 * time.Millisecond)
					// The ask may be open on the restarted server: find it and wait on it.
					var list map[string]any
					if list, err = s.MCP(context.Background(), "tools/call", "list_open_asks", map[string]any{"name": "list_open_asks", "arguments": map[string]any{"project": project}}); err != nil {
						continue
					}
					sc, _ := list["structuredContent"].(map[string]any)
					asks, _ := sc["asks"].([]any)
					if len(asks) == 0 {
						// Answered while the call was cut: its reply is still there for await_reply.
						recent, _ := sc["recent"].([]any)
						mu.Lock()
						for _, r := range recent {
							if id := r.(map[string]any)["askId"].(string); received[id] == "" && replied[id] != "" {
								asks = append(asks, r)
							}
						}
						mu.Unlock()
						if len(asks) == 0 {
							break // nothing of this agent's is waiting: ask again
						}
					}
					id := asks[0].(map[string]any)["askId"].(string)
					resumed.Add(1)
					res, err = s.MCP(context.Background(), "tools/call", "await_reply", map[string]any{"name": "await_reply", "arguments": map[string]any{"askId": id}})
				}
				if res == nil {
					continue
				}
				if res["isError"] == true {
					continue // no reply yet (max wait): ask again
				}
				sc, _ := res["structuredContent"].(map[string]any)
				id, _ := sc["askId"].(string)
				reply, _ := sc["reply"].(map[string]any)
				text, _ := reply["text"].(string)
				mu.Lock()
				received[id] = text
				mu.Unlock()
			}
		})
	}
	// The person: replies to whatever is open, at random.
	wg.Go(func() {
		for ctx.Err() == nil {
			var snap struct {
				Open []struct{ ID string } `json:"open"`
			}
			if _, err := s.API("GET", "/api/v1/snapshot", "", &snap); err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			for _, a := range snap.Open {
				if rand.IntN(3) > 0 {
					continue
				}
				text := "ok " + a.ID
				status, err := s.API("POST", "/api/v1/asks/"+a.ID+"/reply", `{"outcome":"answered","selected":[],"text":"`+text+`"}`, nil)
				if err == nil && status == 200 {
					mu.Lock()
					replied[a.ID] = text
					mu.Unlock()
				} else if err == nil && status != 409 && !down.Load() {
					fail("reply %s: %d", a.ID, status)
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	// Sockets: listen, count frames, reconnect after the crash.
	for range *sockets {
		wg.Go(func() {
			for ctx.Err() == nil {
				conn, err := net.Dial("tcp", s.Addr)
				if err != nil {
					time.Sleep(200 * time.Millisecond)
					continue
				}
				fmt.Fprintf(conn, "GET /api/v1/events HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: loopback.v1\r\nAuthorization: Bearer %s\r\n\r\n", token)
				buf := make([]byte, 64<<10)
				for ctx.Err() == nil {
					conn.SetReadDeadline(time.Now().Add(time.Second))
					n, err := conn.Read(buf)
					if n > 0 {
						frames.Add(1)
					}
					if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
						break
					}
				}
				conn.Close()
			}
		})
	}
	// The slow-body attack, throughout: declared bodies that never come must be cut.
	var slowCut, slowHeld atomic.Int64
	wg.Go(func() {
		for ctx.Err() == nil {
			conn, err := net.Dial("tcp", s.Addr)
			if err != nil {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			start := time.Now()
			fmt.Fprintf(conn, "POST /api/v1/asks/x/reply HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", token)
			conn.SetReadDeadline(time.Now().Add(15 * time.Second))
			io.Copy(io.Discard, conn)
			if time.Since(start) < 6*time.Second {
				slowCut.Add(1)
			} else if !down.Load() {
				slowHeld.Add(1)
			}
			conn.Close()
		}
	})
	// The idle attack, throughout: a connection that never sends its request is cut after the
	// header timeout (2 s), one left idle after its answer after the idle timeout (5 s).
	var idleCut, idleHeld atomic.Int64
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			conn, err := net.Dial("tcp", s.Addr)
			if err != nil {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			start, within := time.Now(), 4*time.Second
			if i%2 == 1 {
				fmt.Fprintf(conn, "GET /api/v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", token)
				within = 8 * time.Second
			}
			conn.SetReadDeadline(time.Now().Add(15 * time.Second))
			io.Copy(io.Discard, conn) // the answer if asked, then nothing until the server closes
			if time.Since(start) < within {
				idleCut.Add(1)
			} else if !down.Load() {
				idleHeld.Add(1)
			}
			conn.Close()
		}
	})
	// Memory, and the crash halfway.
	var mem []int64
	var memBefore int // samples before the crash
	wg.Go(func() {
		half := time.After(*duration / 2)
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				mem = append(mem, rss(s.Cmd.Process.Pid))
			case <-half:
				memBefore = len(mem)
				down.Store(true)
				s.Kill()
				if err := s.Start(); err != nil {
					fail("restart: %v", err)
				}
				time.Sleep(2 * time.Second)
				down.Store(false)
			case <-ctx.Done():
				return
			}
		}
	})
	<-ctx.Done()
	// Let the last waits see their replies, then stop.
	time.Sleep(3 * time.Second)
	s.Kill()
	wg.Wait()

	lost := 0
	mu.Lock()
	for id, text := range replied {
		if received[id] != text {
			lost++
		}
	}
	fmt.Printf("soak: %d agents, %d sockets, %s, the server killed and restarted once\n", *agents, *sockets, *duration)
	fmt.Printf("replies: %d given, %d reached their agent, %d lost; %d waits resumed after the crash with list_open_asks + await_reply\n",
		len(replied), len(replied)-lost, lost, resumed.Load())
	fmt.Printf("socket frames read: %d; slow-body connections cut within the deadline: %d, held longer: %d\n", frames.Load(), slowCut.Load(), slowHeld.Load())
	if len(mem) > 1 {
		fmt.Printf("server RSS every 5 s (MiB):")
		for _, m := range mem {
			fmt.Printf(" %d", m>>20)
		}
		fmt.Println()
	}
	fmt.Printf("idle connections cut within the header or idle timeout: %d, held longer: %d\n", idleCut.Load(), idleHeld.Load())
	// Memory flat: the restarted server, over as long as the first ran, ends no higher than the
	// first did by more than half again (SQLite's page cache fills in both).
	var peakBefore, last int64
	for i, m := range mem {
		if i < memBefore {
			peakBefore = max(peakBefore, m)
		}
		last = m
	}
	grew := memBefore > 0 && len(mem) > memBefore && last > peakBefore*3/2+32<<20
	if grew {
		fmt.Printf("memory grew: %d MiB at the end, %d MiB at most before the crash\n", last>>20, peakBefore>>20)
	}
	fmt.Printf("errors outside the crash: %d\n", len(errs))
	for i, e := range errs {
		if i < 10 {
			fmt.Println("  ", e)
		}
	}
	mu.Unlock()
	// A reply given in the last seconds may still be on its way when the run stops: those are
	// not counted as lost unless the agent got another text for the same ask.
	if lost > 0 || len(errs) > 0 || slowHeld.Load() > 0 || idleHeld.Load() > 0 || grew || len(replied) == 0 {
		os.Exit(1)
	}
}
