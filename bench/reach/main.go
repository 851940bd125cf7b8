// Command reach proves that every reply reaches its agent after a crash (issue 24): many agents
// wait on blocking calls at once, the server is killed (SIGKILL) and started again on the same
// data, the person answers a part of the asks before any agent comes back, and then every agent
// returns as a client whose call was cut does: list_open_asks for its own project, then await_reply
// on what it finds. Every answered ask's reply must reach the agent that asked it, however many
// other asks closed meanwhile; an ask nobody answered must still be listed open.
//
//	go build -o bin/loopback ./cmd/loopback
//	go run ./bench/reach -bin bin/loopback -agents 2000 -answer 800                  # SQLite
//	go run ./bench/reach -bin bin/loopback -agents 2000 -answer 800 -store dynamodb  # DynamoDB (moto)
//
// With -store dynamodb the binary keeps its asks in DynamoDB: at AWS_ENDPOINT_URL when set, else in
// a moto_server started here (make setup puts it in .venv/bin). `make test` runs small counts on
// both (test-reach).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loopback-hq/loopback/bench/internal/lbserver"
)

const token = "lb_reach-owner-token-0123456789abcdefghijklmn"

// resumeID finds the askId in a result that tells the agent to call await_reply.
var resumeID = regexp.MustCompile(`await_reply with \{"askId": "([a-z0-9]+)"\}`)

type openAsk struct {
	ID      string `json:"id"`
	Project string `json:"project"`
	Waiting bool   `json:"waiting"`
}

// openAsks lists the open asks, through the person's snapshot.
func openAsks(s *lbserver.Server) ([]openAsk, error) {
	var snap struct {
		Open []openAsk `json:"open"`
	}
	status, err := s.API("GET", "/api/v1/snapshot", "", &snap)
	if err == nil && status != 200 {
		err = fmt.Errorf("snapshot: %d", status)
	}
	return snap.Open, err
}

// each runs fn(i) for i in [0, n), at most conc at a time.
func each(n, conc int, fn func(i int)) {
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
}

// moto starts a moto_server on a free port and returns its URL and a stop.
func moto() (string, func(), error) {
	cmd := exec.Command("moto_server", "-H", "127.0.0.1", "-p", "0")
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1")
	errs, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("starting moto_server (make setup puts it in .venv/bin): %w", err)
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	re := regexp.MustCompile(`Running on (http://127\.0\.0\.1:\d+)`)
	sc := bufio.NewScanner(errs)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, errs)
			return m[1], stop, nil
		}
	}
	stop()
	return "", nil, errors.New("moto_server did not say where it listens")
}

func main() {
	bin := flag.String("bin", "bin/loopback", "the loopback binary")
	agents := flag.Int("agents", 2000, "agents waiting on a blocking call when the server is killed")
	answer := flag.Int("answer", 800, "asks the person answers after the restart, before the agents come back")
	store := flag.String("store", "sqlite", "sqlite, or dynamodb (AWS_ENDPOINT_URL, else a moto_server started here)")
	conc := flag.Int("concurrency", 32, "agents coming back at once, and replies the person sends at once")
	flag.Parse()
	if *answer > *agents {
		*answer = *agents
	}
	// What a failure must stop before exiting (os.Exit runs no deferred calls).
	var cleanups []func()
	cleanup := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "reach: "+format+"\n", args...)
		cleanup()
		os.Exit(1)
	}
	defer cleanup()
	dir, _ := os.MkdirTemp("", "loopback-reach-")
	cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	s := &lbserver.Server{Bin: *bin, Dir: dir, Addr: "127.0.0.1:0", Token: token,
		Args: []string{"--progress", "5s", "--max-waits", "100000", "--max-auth-failures", "0",
			// every agent asks on the one agent token: reach is measured, not the open-ask budgets
			"--max-open-asks", "100000", "--max-open-bytes", "2000000000", "--max-space-open-bytes", "2000000000"}}
	if *store == "dynamodb" {
		endpoint := os.Getenv("AWS_ENDPOINT_URL")
		if endpoint == "" {
			url, stop, err := moto()
			if err != nil {
				fail("%v", err)
			}
			cleanups = append(cleanups, stop)
			endpoint = url
		}
		s.Env = []string{"AWS_ENDPOINT_URL=" + endpoint, "AWS_ACCESS_KEY_ID=testing", "AWS_SECRET_ACCESS_KEY=testing", "AWS_REGION=us-east-1"}
		s.Args = append(s.Args, []string{"--store", "dynamodb", "--table", fmt.Sprintf("loopback-reach-%d", time.Now().UnixNano()), "--create"}...)
	}
	if err := s.Start(); err != nil {
		fail("%v", err)
	}
	cleanups = append(cleanups, s.Kill)

	// 1. Every agent asks and waits.
	t0 := time.Now()
	var cut, early, rewaits atomic.Int64
	var crashed atomic.Bool
	var earlyErr atomic.Value
	var calls sync.WaitGroup
	for i := range *agents {
		calls.Go(func() {
			res, err := s.Call(context.Background(), "ask_question", map[string]any{
				"question": fmt.Sprintf("Agent %d: go on?", i), "project": fmt.Sprintf("reach-%d", i)})
			// A wait the server ended early with its own words ("… call await_reply with
			// {"askId": …}"): the agent waits again, as it is told.
			for err == nil && res["isError"] == true && !crashed.Load() {
				m := resumeID.FindStringSubmatch(fmt.Sprint(res["content"]))
				if m == nil {
					break
				}
				rewaits.Add(1)
				res, err = s.Call(context.Background(), "await_reply", map[string]any{"askId": m[1]})
			}
			switch {
			case crashed.Load() && err != nil:
				cut.Add(1) // the crash cut it, as it should
			default: // it returned before the crash: refused, or failed
				early.Add(1)
				earlyErr.CompareAndSwap(nil, fmt.Sprintf("%v %v", err, res))
			}
		})
	}
	// Every ask is stored, and no call has returned: every agent is waiting on its call. (The
	// asks' waiting flags say so too, but on a loaded emulator a lease renewal may lag and a flag
	// blink; the calls themselves are what the crash must cut.)
	var open []openAsk
	waiting := 0
	for deadline := time.Now().Add(30 * time.Minute); ; time.Sleep(3 * time.Second) {
		var err error
		if n := early.Load(); n > 0 {
			fail("%d calls returned before the crash, such as: %v\nthe server's last errors:\n%s", n, earlyErr.Load(), strings.Join(s.Log.ErrorLines(5), "\n"))
		}
		if open, err = openAsks(s); err == nil && len(open) == *agents {
			waiting = 0
			for _, a := range open {
				if a.Waiting {
					waiting++
				}
			}
			break
		}
		if time.Now().After(deadline) {
			fail("only %d of %d asks open after 30 minutes (%v)", len(open), *agents, err)
		}
	}
	asked := time.Since(t0)

	// 2. The server is killed with every agent waiting, and started again on the same data.
	crashed.Store(true)
	s.Kill()
	calls.Wait()
	if int(cut.Load()) != *agents {
		fail("%d of %d calls returned before the crash", *agents-int(cut.Load()), *agents)
	}
	t1 := time.Now()
	if err := s.Start(); err != nil {
		fail("restart: %v", err)
	}
	restarted := time.Since(t1)

	// 3. The person answers some of the asks before any agent is back.
	t2 := time.Now()
	replied := map[string]string{} // project → the text the person replied on its ask
	var mu sync.Mutex
	each(*answer, *conc, func(i int) {
		a := open[i]
		text := "for " + a.ID
		status, err := s.API("POST", "/api/v1/asks/"+a.ID+"/reply", `{"outcome":"answered","selected":[],"text":"`+text+`"}`, nil)
		if err != nil || status != 200 {
			fail("reply on %s: %d %v", a.ID, status, err)
		}
		mu.Lock()
		replied[a.Project] = text
		mu.Unlock()
	})
	answered := time.Since(t2)

	// 4. Every agent comes back: list_open_asks for its project, await_reply on a closed ask.
	t3 := time.Now()
	var reached, stillOpen, lost, wrong atomic.Int64
	var problems []string
	problem := func(format string, args ...any) {
		mu.Lock()
		if len(problems) < 10 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
		mu.Unlock()
	}
	each(*agents, *conc, func(i int) {
		project := fmt.Sprintf("reach-%d", i)
		list, err := s.Call(context.Background(), "list_open_asks", map[string]any{"project": project})
		if err != nil {
			lost.Add(1)
			problem("agent %d: list_open_asks: %v", i, err)
			return
		}
		sc, _ := list["structuredContent"].(map[string]any)
		asks, _ := sc["asks"].([]any)
		recent, _ := sc["recent"].([]any)
		want, answeredMine := replied[project]
		switch {
		case !answeredMine && len(asks) == 1 && len(recent) == 0:
			stillOpen.Add(1) // an agent would wait on it with await_reply
			return
		case !answeredMine:
			lost.Add(1)
			problem("agent %d: its unanswered ask is not listed open alone: %v", i, sc)
			return
		case len(recent) != 1 || len(asks) != 0:
			lost.Add(1)
			problem("agent %d: its answered ask is not listed as recently closed alone: %v", i, sc)
			return
		}
		id := recent[0].(map[string]any)["askId"].(string)
		res, err := s.Call(context.Background(), "await_reply", map[string]any{"askId": id})
		if err != nil || res["isError"] == true {
			lost.Add(1)
			problem("agent %d: await_reply %s: %v %v", i, id, err, res)
			return
		}
		got, _ := res["structuredContent"].(map[string]any)
		reply, _ := got["reply"].(map[string]any)
		if got["askId"] != id || reply["text"] != want {
			wrong.Add(1)
			problem("agent %d: await_reply %s gave %v, want the text %q", i, id, got, want)
			return
		}
		reached.Add(1)
	})
	returned := time.Since(t3)

	fmt.Printf("reach (%s): %d agents waiting, the server killed (SIGKILL) and restarted, %d asks answered before the agents came back\n", *store, *agents, *answer)
	fmt.Printf("replies: %d given, %d reached their agent through list_open_asks + await_reply, %d lost, %d wrong; %d unanswered asks listed open for their agent\n",
		len(replied), reached.Load(), lost.Load(), wrong.Load(), stillOpen.Load())
	fmt.Printf("asks marked waiting when the server was killed: %d of %d; waits the server ended early and the agent resumed with await_reply: %d\n", waiting, *agents, rewaits.Load())
	fmt.Printf("times: %d calls waiting in %s; restart %s; %d replies in %s; %d agents back in %s (%.1f ms per agent, %d at once)\n",
		*agents, asked.Round(time.Millisecond), restarted.Round(time.Millisecond), *answer, answered.Round(time.Millisecond),
		*agents, returned.Round(time.Millisecond), float64(returned.Microseconds())/1000/float64(*agents)*float64(*conc), *conc)
	for _, p := range problems {
		fmt.Println("  ", p)
	}
	if int(reached.Load()) != len(replied) || lost.Load() > 0 || wrong.Load() > 0 || int(stillOpen.Load()) != *agents-*answer {
		cleanup()
		os.Exit(1)
	}
}
