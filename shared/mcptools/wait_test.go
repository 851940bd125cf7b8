package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/mcptools"
)

// TestWaitingFollowsTheCall: waiting is true exactly while a call waits, for both protocol eras.
func TestWaitingFollowsTheCall(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			d := newTestDeployment(t, deployOpts{})
			c := d.connect(t, clientOpts{Legacy: legacy})
			id := d.newQuestion(t, asAgent)
			if d.getAsk(t, id).Waiting {
				t.Fatal("a new ask nobody waits on shows waiting")
			}
			p := startTool(t, c, "await_reply", map[string]any{"askId": id})
			d.waitFor(t, id, true)
			d.reply(t, id, map[string]any{"outcome": "answered", "selected": []string{"No"}})
			toolReply(t, p.result(t))
			d.waitFor(t, id, false)
		})
	}
}

// TestTwoWaitersOnOneAsk: waiting stays true while any agent still follows the ask.
func TestTwoWaitersOnOneAsk(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	c := d.connect(t, clientOpts{})
	id := d.newQuestion(t, asAgent)
	first := startTool(t, c, "await_reply", map[string]any{"askId": id})
	d.waitFor(t, id, true)
	second := startTool(t, c, "await_reply", map[string]any{"askId": id})
	eventually(t, "two leases on the ask", func() bool {
		n, err := d.DB.LiveLeases(context.Background(), testSpace, id, time.Now())
		return err == nil && n == 2
	})
	first.cancel()
	<-first.done
	eventually(t, "one lease on the ask", func() bool {
		n, err := d.DB.LiveLeases(context.Background(), testSpace, id, time.Now())
		return err == nil && n == 1
	})
	if !d.getAsk(t, id).Waiting {
		t.Fatal("one agent stopped waiting and the ask no longer shows the other")
	}
	d.reply(t, id, map[string]any{"outcome": "dismissed"})
	if tr := toolReply(t, second.result(t)); tr.Reply.Outcome != ask.OutcomeDismissed {
		t.Fatalf("reply %+v", tr.Reply)
	}
	d.waitFor(t, id, false)
}

// TestCancelEndsTheWaitNotTheAsk: a client that cancels stops waiting; the ask stays open and the
// person's later reply reaches await_reply.
func TestCancelEndsTheWaitNotTheAsk(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			d := newTestDeployment(t, deployOpts{})
			c := d.connect(t, clientOpts{Legacy: legacy})

			p := startTool(t, c, "ask_question", question("loopback"))
			id := d.waitingAsk(t, 1).ID
			p.cancel()
			<-p.done
			if p.err == nil {
				t.Fatalf("a cancelled call returned a result: %v", resultText(p.res))
			}
			d.waitFor(t, id, false)
			if a := d.getAsk(t, id); a.Status != string(ask.AwaitingHuman) || len(a.Thread) != 0 {
				t.Fatalf("after the client went the ask is %s with %d turns, want it open and untouched", a.Status, len(a.Thread))
			}

			// The same client waits again, and gets the reply.
			again := startTool(t, c, "await_reply", map[string]any{"askId": id})
			d.waitFor(t, id, true)
			reply := map[string]any{"outcome": "answered", "selected": []string{"SQLite"}, "text": "after all"}
			d.reply(t, id, reply)
			tr := toolReply(t, again.result(t))
			got, _ := json.Marshal(tr.Reply)
			want, _ := json.Marshal(reply)
			if tr.AskID != id || !jsonEqual(t, got, want) {
				t.Fatalf("await_reply returned %s on %s, want %s on %s", got, tr.AskID, want, id)
			}
		})
	}
}

// TestAwaitReplyAfterTheReply: the person moved while no agent waited: await_reply returns at
// once, and never marks the ask waiting.
func TestAwaitReplyAfterTheReply(t *testing.T) {
	d := newTestDeployment(t, deployOpts{MaxWait: time.Minute})
	c := d.connect(t, clientOpts{})
	id := d.newQuestion(t, asAgent)
	reply := map[string]any{"outcome": "answered", "selected": []string{"Yes"}, "text": "go"}
	d.reply(t, id, reply)

	// Changes are published as they commit, so any change await_reply made is queued here by the
	// time it returns.
	sub := d.Hub.Subscribe(testSpace, 16)
	defer sub.Close()

	for i := range 2 { // and again: the reply stays there to be picked up
		start := time.Now()
		tr := toolReply(t, callTool(t, c, "await_reply", map[string]any{"askId": id}))
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("await_reply %d took %v on an ask already answered", i, took)
		}
		got, _ := json.Marshal(tr.Reply)
		want, _ := json.Marshal(reply)
		if !jsonEqual(t, got, want) {
			t.Fatalf("await_reply returned %s, want %s", got, want)
		}
	}
	select {
	case ch := <-sub.C():
		t.Fatalf("await_reply on an answered ask changed it (waiting: %v)", ch.Ask.Waiting)
	default:
	}
}

// TestAwaitReplyOnAFollowUp: when the person asked back, await_reply returns the follow_up at once.
func TestAwaitReplyOnAFollowUp(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	c := d.connect(t, clientOpts{})
	id := d.newQuestion(t, asAgent)
	d.reply(t, id, map[string]any{"outcome": "follow_up", "question": "Which one is cheaper?"})
	tr := toolReply(t, callTool(t, c, "await_reply", map[string]any{"askId": id}))
	if tr.Reply.Outcome != ask.OutcomeFollowUp || tr.Reply.Question != "Which one is cheaper?" {
		t.Fatalf("reply %+v", tr.Reply)
	}
}

// TestMaxWait: a wait that reaches the deployment's limit ends as a tool error naming the askId and
// await_reply; the ask stays open; the reply made afterwards comes back from await_reply intact.
func TestMaxWait(t *testing.T) {
	const limit = 300 * time.Millisecond
	d := newTestDeployment(t, deployOpts{MaxWait: limit, Progress: 50 * time.Millisecond})
	c := d.connect(t, clientOpts{})

	start := time.Now()
	p := startTool(t, c, "request_review", review("loopback", ""))
	id := d.waitingAsk(t, 1).ID
	msg := toolErr(t, p.result(t))
	if took := time.Since(start); took < limit {
		t.Errorf("the call gave up after %v, before the limit of %v", took, limit)
	}
	for _, w := range []string{id, "await_reply", `{"askId": "` + id + `"}`} {
		if !strings.Contains(msg, w) {
			t.Errorf("the message %q does not say %q", msg, w)
		}
	}
	d.waitFor(t, id, false)
	if a := d.getAsk(t, id); a.Status != string(ask.AwaitingHuman) {
		t.Fatalf("after the limit the ask is %s, want it still open", a.Status)
	}

	// await_reply hits the same limit when the person is still away.
	msg = toolErr(t, callTool(t, c, "await_reply", map[string]any{"askId": id}))
	if !strings.Contains(msg, id) || !strings.Contains(msg, "await_reply") {
		t.Errorf("await_reply's limit message %q names neither the ask nor what to do", msg)
	}
	d.waitFor(t, id, false)

	// The person replies while no agent waits; the next await_reply has it, word for word.
	reply := map[string]any{"outcome": "changes_requested", "feedback": "Rename `x` to `count`.\n\nAnd add a test — a *real* one."}
	d.reply(t, id, reply)
	tr := toolReply(t, callTool(t, c, "await_reply", map[string]any{"askId": id}))
	got, _ := json.Marshal(tr.Reply)
	want, _ := json.Marshal(reply)
	if tr.AskID != id || !jsonEqual(t, got, want) {
		t.Fatalf("await_reply returned %s on %s, want %s on %s", got, tr.AskID, want, id)
	}
}

// TestProgress: with a progressToken, progress notifications arrive during the wait, with rising
// progress and the caller's token, and the result still arrives; without one, none are sent.
func TestProgress(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			d := newTestDeployment(t, deployOpts{Progress: 50 * time.Millisecond})
			c := d.connect(t, clientOpts{Legacy: legacy})
			var mu sync.Mutex
			var progress []map[string]any
			c.OnNotification(func(n mcp.JSONRPCNotification) {
				if n.Method != "notifications/progress" {
					return
				}
				mu.Lock()
				progress = append(progress, n.Params.AdditionalFields)
				mu.Unlock()
			})
			count := func() int {
				mu.Lock()
				defer mu.Unlock()
				return len(progress)
			}

			// Without a token: no progress.
			p := startTool(t, c, "ask_question", question("quiet"))
			quiet := d.waitingAsk(t, 1).ID
			// Each beat reports progress where there is a token, then renews the lease: three
			// renewals are three beats that sent nothing. Anything sent would reach the client
			// before the result, on the same stream.
			renewed := d.renewals(t, quiet)
			eventually(t, "three beats of the quiet wait", func() bool { return renewed() >= 3 })
			d.reply(t, quiet, map[string]any{"outcome": "dismissed"})
			toolReply(t, p.result(t))
			if n := count(); n != 0 {
				t.Fatalf("%d progress notifications for a call without a progressToken", n)
			}

			req := toolRequest("ask_question", question("loud"))
			req.Params.Meta = &mcp.Meta{ProgressToken: "t"}
			p = start(t, c, req)
			id := d.waitingAsk(t, 1).ID
			eventually(t, "3 progress notifications", func() bool { return count() >= 3 })
			if p.returned() {
				t.Fatal("the call returned while progress was being sent")
			}
			d.reply(t, id, map[string]any{"outcome": "answered", "selected": []string{"Redis"}})
			if tr := toolReply(t, p.result(t)); tr.AskID != id || tr.Reply.Selected[0] != "Redis" {
				t.Fatalf("ToolReply %+v", tr)
			}

			mu.Lock()
			defer mu.Unlock()
			last := -1.0
			for i, n := range progress {
				if n["progressToken"] != "t" {
					t.Errorf("notification %d has token %v, want t", i, n["progressToken"])
				}
				v, ok := n["progress"].(float64)
				if !ok || v <= last {
					t.Errorf("notification %d has progress %v after %v: it must rise", i, n["progress"], last)
				}
				last = v
				// The askId reaches the client with the first progress: a client that gives up on
				// the call still holds the ask to resume with await_reply.
				if msg, _ := n["message"].(string); !strings.Contains(msg, id) || !strings.Contains(msg, "await_reply") {
					t.Errorf("notification %d's message names neither the ask %s nor await_reply: %q", i, id, msg)
				}
			}
		})
	}
}

// TestReaper: a lease nobody renews (a process killed mid-wait) is reaped, and waiting goes false;
// a live lease is left alone.
func TestReaper(t *testing.T) {
	ctx := context.Background()
	d := newTestDeployment(t, deployOpts{})
	id := d.newQuestion(t, asAgent)

	if err := d.Service.Follow(ctx, testSpace, id, "ghost", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := d.Service.Follow(ctx, testSpace, id, "alive", time.Hour); err != nil {
		t.Fatal(err)
	}
	if !d.getAsk(t, id).Waiting {
		t.Fatal("followed, yet not waiting")
	}
	reaped := 0
	eventually(t, "the ghost's lease to expire and be reaped", func() bool {
		n, err := d.Service.ReapLeases(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		reaped += n
		return reaped > 0
	})
	if reaped != 1 {
		t.Fatalf("ReapLeases reaped %d, want the one expired lease", reaped)
	}
	if !d.getAsk(t, id).Waiting {
		t.Fatal("reaping the dead lease cleared waiting while a live one remains")
	}
	if err := d.Service.Unfollow(ctx, testSpace, id, "alive"); err != nil {
		t.Fatal(err)
	}
	if d.getAsk(t, id).Waiting {
		t.Fatal("the last follower left, yet the ask shows waiting")
	}

	// The holder vanishes: it followed, and never said it stopped.
	if err := d.Service.Follow(ctx, testSpace, id, "vanished", 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !d.getAsk(t, id).Waiting {
		t.Fatal("followed, yet not waiting")
	}
	eventually(t, "the lease to be reaped", func() bool {
		n, err := d.Service.ReapLeases(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	})
	if d.getAsk(t, id).Waiting {
		t.Fatal("the expired lease was reaped, yet the ask shows waiting")
	}

	// A blocking call renews its lease: reaping never clears it while the call waits.
	c := d.connect(t, clientOpts{})
	p := startTool(t, c, "await_reply", map[string]any{"askId": id})
	d.waitFor(t, id, true)
	renewed := d.renewals(t, id)
	eventually(t, "a few renewals of the call's lease", func() bool { return renewed() >= 3 })
	if n, err := d.Service.ReapLeases(ctx, 100); err != nil || n != 0 {
		t.Fatalf("ReapLeases reaped %d (%v) while a call waits", n, err)
	}
	if !d.getAsk(t, id).Waiting {
		t.Fatal("the reaper cleared waiting under a live call")
	}
	d.reply(t, id, map[string]any{"outcome": "dismissed"})
	toolReply(t, p.result(t))
	d.waitFor(t, id, false)
}

// TestFailedProgressEndsTheWait: a wait whose progress or keepalive cannot be written any more
// (its client went away, and nothing else said so: on Lambda an invocation runs on after its
// client leaves) ends at the next beat, as a client that left, and the ask stops showing an agent
// waiting.
func TestFailedProgressEndsTheWait(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	id := d.newQuestion(t, asAgent)
	w := &mcptools.Waiter{Service: d.Service, Watcher: mcptools.HubWatcher{Hub: d.Hub}, Progress: 50 * time.Millisecond, MaxWait: time.Minute}
	var beats atomic.Int32
	started := time.Now()
	_, err := w.Wait(context.Background(), &ask.Credential{ID: "cred_gone", Space: testSpace}, id, nil, func(time.Duration) error {
		if beats.Add(1) == 1 {
			return nil
		}
		return errors.New("write: broken pipe")
	})
	if !errors.Is(err, mcptools.ErrClientGone) || !errors.Is(err, context.Canceled) {
		t.Fatalf("a wait whose progress cannot be written: %v, want ErrClientGone", err)
	}
	if took := time.Since(started); took > 5*time.Second {
		t.Fatalf("it ended after %s", took)
	}
	w.Drain()
	d.waitFor(t, id, false)
}

// TestMaxWaitOnTheURL: the person's own bound, ?maxWait= on the MCP URL, ends a call that would
// otherwise wait MaxWait (it sends a progress token, from a client that claims to be Claude Code)
// with the "no reply yet" result naming the ask; a value that is no duration is refused.
func TestMaxWaitOnTheURL(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	session := initSession(t, d.MCP, d.Token, mcp.Implementation{Name: "claude-code", Version: "2.1.332"})
	started := time.Now()
	r, err := doRPC(d.MCP+"?maxWait=1s", d.Token, session, "tools/call", map[string]any{"name": "ask_question",
		"arguments": question("url-bound"), "_meta": map[string]any{"progressToken": "t"}})
	took := time.Since(started)
	if err != nil || r.Error != nil {
		t.Fatalf("the call: %v %+v", err, r.Error)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	open, _ := d.snapshot(t)
	if len(open) != 1 {
		t.Fatalf("%d open asks", len(open))
	}
	id := open[0].ID
	if text := resultText(&res); !res.IsError || !strings.Contains(text, id) || !strings.Contains(text, "await_reply") {
		t.Fatalf("after ?maxWait=1s: %s", text)
	}
	if took < time.Second || took > 10*time.Second {
		t.Fatalf("the call returned after %s, want about 1 s", took)
	}
	if r, err := doRPC(d.MCP+"?maxWait=soon", d.Token, session, "tools/call", map[string]any{"name": "ask_question",
		"arguments": question("bad-bound")}); err == nil || r.Status != 400 {
		t.Fatalf("?maxWait=soon: %d %v, want 400", r.Status, err)
	}
}

// endingWatcher is a Watcher whose watch, once on, hears at once a change that ends the wait,
// and returns only after the wait has ended: the order a racing reply can give.
type endingWatcher struct {
	mcptools.Watcher
	change  ask.Change
	ended   <-chan struct{}
	stopped atomic.Bool
}

func (w *endingWatcher) Watch(space, askID string, changed func(ask.Change)) func() {
	stop := w.Watcher.Watch(space, askID, changed)
	changed(w.change)
	<-w.ended
	return func() { w.stopped.Store(true); stop() }
}

// TestAWaitEndedAsItsWatchBegins: a reply heard the moment the wait's watch is on ends the wait
// before Watch has returned; the watch is still stopped (it was left on, and its stop written
// beside the ending wait's read of it).
func TestAWaitEndedAsItsWatchBegins(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	id := d.newQuestion(t, asAgent)
	d.reply(t, id, map[string]any{"outcome": "answered", "selected": []string{"Yes"}})
	replied, err := d.Service.Find(context.Background(), testSpace, id)
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	watcher := &endingWatcher{Watcher: mcptools.HubWatcher{Hub: d.Hub}, change: ask.Change{Ask: replied}, ended: ended}
	w := &mcptools.Waiter{Service: d.Service, Watcher: watcher, Progress: time.Minute, MaxWait: time.Minute}
	var got *ask.Reply
	w.Begin(context.Background(), &ask.Credential{ID: "cred_agent", Space: testSpace}, id, nil, nil, func(r *ask.Reply, err error) {
		if err != nil {
			t.Errorf("the wait ended with %v", err)
		}
		got = r
		close(ended)
	})
	w.Drain()
	if got == nil || got.Outcome != ask.OutcomeAnswered {
		t.Fatalf("the wait ended with %+v, want the person's answer", got)
	}
	if !watcher.stopped.Load() {
		t.Fatal("the watch of a wait that ended as it began was never stopped")
	}
}

// capturingWatcher is a HubWatcher that keeps the wait's callback, to hand it a change late.
type capturingWatcher struct {
	mcptools.HubWatcher
	changed func(ask.Change)
}

func (w *capturingWatcher) Watch(space, askID string, changed func(ask.Change)) func() {
	w.changed = changed
	return w.HubWatcher.Watch(space, askID, changed)
}

// TestALateChangeIsNotAnAnswer: a change published after a later commit of its ask (two writers
// between COMMIT and Publish) shows a move the agent has answered since. A wait begun after that
// answer passes it over, and ends with the person's next move.
func TestALateChangeIsNotAnAnswer(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	ctx := context.Background()
	id := d.newQuestion(t, asAgent)
	d.reply(t, id, map[string]any{"outcome": "follow_up", "question": "Which data?"})
	late, err := d.Service.Find(ctx, testSpace, id) // the follow_up, as its change carried it
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Service.AnswerFollowUp(ctx, ask.FollowUpInput{AskID: id, Answer: "The users table."}, asAgent); err != nil {
		t.Fatal(err)
	}

	watcher := &capturingWatcher{HubWatcher: mcptools.HubWatcher{Hub: d.Hub}}
	w := &mcptools.Waiter{Service: d.Service, Watcher: watcher, Progress: time.Minute, MaxWait: time.Minute}
	out := make(chan *ask.Reply, 1)
	cancel := w.Begin(ctx, &ask.Credential{ID: "cred_agent", Space: testSpace}, id, nil, nil, func(r *ask.Reply, err error) {
		if err != nil {
			t.Errorf("the wait ended with %v", err)
		}
		out <- r
	})
	defer cancel(context.Canceled)
	d.waitFor(t, id, true)
	watcher.changed(ask.Change{Ask: late}) // published late: older than the wait's own read
	d.reply(t, id, map[string]any{"outcome": "answered", "selected": []string{"Yes"}})
	select {
	case r := <-out:
		if r == nil || r.Outcome != ask.OutcomeAnswered {
			t.Fatalf("the wait ended with %+v, want the person's answer after the follow-up", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait never ended")
	}
	w.Drain()
}
