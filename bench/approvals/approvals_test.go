// Package approvals measures approvals on the local wiring (app.New on SQLite in a file, the
// in-process hub, the Web Push queue against the pushtest stand-in, the event socket over real
// HTTP), as issue 26 sets the targets:
//
//  1. a hook call (Claude Code's PermissionRequest JSON, POST /hooks/claude-code over HTTP) →
//     the approval on the person's event socket and at the push stand-in (both; the later of
//     the two), p50 ≤ 20 ms;
//  2. the person's reply (POST /api/v1/asks/{id}/reply over HTTP) → the hook's HTTP answer,
//     p50 ≤ 10 ms;
//  3. a hook call a rule covers → its HTTP answer, with no ask put to anyone, ≤ 5 ms.
//
// Run (figures in docs/benchmarks.md):
//
//	go test -run '^$' -bench . -benchtime 300x -count 3 ./bench/approvals
package approvals

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/app"
	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/events/eventstest"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/hooks"
	"github.com/loopback-hq/loopback/shared/push"
	"github.com/loopback-hq/loopback/shared/push/pushtest"
	"github.com/loopback-hq/loopback/shared/sqlite"
)

const space = "local"

// openAsks is how many asks stand open in the inbox while approvals are timed.
var openAsks = 20

type rig struct {
	app      *app.App
	srv      *httptest.Server
	person   string
	token    string // the agent's, which its hooks send
	agent    *ask.Credential
	pushes   *pushtest.Service
	endpoint string
	seen     int // pushes pushOf has looked at
}

// pushOf waits for the push that puts ask id in front of the person, and returns it. The silent
// update that says an earlier ask was answered (revision 4) may come before or after it.
func (r *rig) pushOf(b *testing.B, id string) pushtest.Message {
	for {
		msgs := r.pushes.WaitFor(b, r.endpoint, r.seen+1, 5*time.Second)
		for ; r.seen < len(msgs); r.seen++ {
			m := msgs[r.seen]
			if bytes.Contains(m.Payload, []byte(`"askId":"`+id+`"`)) && !bytes.Contains(m.Payload, []byte(`"answered":`)) {
				r.seen++
				return m
			}
		}
	}
}

func newRig(b *testing.B) *rig {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	dir := b.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "loopback.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	keys, err := push.LoadOrCreateKeys(filepath.Join(dir, "vapid.json"))
	if err != nil {
		b.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	sender := &push.Sender{Keys: keys, Store: db, Credentials: db, Subscriber: push.DefaultSubscriber, Logger: logger, AllowLoopback: true}
	a := app.New(app.Config{Storage: db, Hub: events.NewHub(), Publish: push.NewQueue(ctx, sender, 2, 1024), Logger: logger, Wait: app.Wait{MaxWait: time.Minute, Progress: 10 * time.Second},
		OpenAsks: ask.Bounds{OpenAsksPerCredential: 1 << 20, OpenSizePerCredential: 1 << 40, OpenSize: 1 << 40}})
	srv := httptest.NewServer(a.Handler(nil))
	b.Cleanup(srv.Close)
	owner := ask.Actor{ID: "owner", Name: "Ada"}
	person, ownerCred, err := gate.Issue(ctx, db, ask.Credential{Space: space, Role: ask.RoleOwner, Actor: owner, Person: owner})
	if err != nil {
		b.Fatal(err)
	}
	token, agent, err := gate.Issue(ctx, db, ask.Credential{Space: space, Role: ask.RoleAgent, Actor: ask.Actor{ID: "agent_1", Name: "claude"}, Person: owner})
	if err != nil {
		b.Fatal(err)
	}
	pushes := pushtest.NewService(b)
	browser, err := pushtest.NewBrowser()
	if err != nil {
		b.Fatal(err)
	}
	endpoint := pushes.SubscribeWithKey(browser, keys.PublicKey)
	var in ask.PushSubscriptionInput
	in.Endpoint, in.Keys.P256dh, in.Keys.Auth = endpoint, browser.P256dh(), browser.Auth()
	sub, err := ask.NewPushSubscription(in, space, ownerCred, ask.PushRules{AllowLoopback: true}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	if err := db.PutPushSubscription(ctx, sub); err != nil {
		b.Fatal(err)
	}
	return &rig{app: a, srv: srv, person: person, token: token, agent: agent, pushes: pushes, endpoint: endpoint}
}

// hookBody is Claude Code's PermissionRequest JSON for a Bash command.
func hookBody(command string) string {
	b, _ := json.Marshal(map[string]any{
		"session_id": "bench", "transcript_path": "/home/ada/.claude/projects/web/bench.jsonl",
		"cwd": "/home/ada/web", "permission_mode": "default", "hook_event_name": "PermissionRequest",
		"tool_name": "Bash", "tool_input": map[string]any{"command": command},
		"permission_suggestions": []any{map[string]any{"type": "setMode", "mode": "acceptEdits", "destination": "session"}},
	})
	return string(b)
}

// hook posts a PermissionRequest for command to /hooks/claude-code, as Claude Code's http hook
// does, and returns its answer's body and the time it was read.
func (r *rig) hook(command string) (string, time.Time, error) {
	req, _ := http.NewRequest("POST", r.srv.URL+hooks.Path+"?timeout=600", strings.NewReader(hookBody(command)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+r.token)
	res, err := r.srv.Client().Do(req)
	if err != nil {
		return "", time.Time{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	at := time.Now()
	if err == nil && res.StatusCode != 200 {
		err = fmt.Errorf("the hook's answer: %d %s", res.StatusCode, body)
	}
	return string(body), at, err
}

// approvalID is the id the approval of command takes: the first approval of a use is named after
// it (ask.ApprovalID).
func (r *rig) approvalID(command string) string {
	raw, _ := json.Marshal(map[string]string{"command": command})
	canon, _ := ask.Canonical(raw)
	return ask.ApprovalID(space, r.agent.ID, "bench", "Bash", canon)
}

type answer struct {
	body string
	at   time.Time
	err  error
}

// hookAsync posts the hook in the background; its answer comes on the channel.
func (r *rig) hookAsync(command string) <-chan answer {
	ch := make(chan answer, 1)
	go func() {
		body, at, err := r.hook(command)
		ch <- answer{body, at, err}
	}()
	return ch
}

// reply decides an approval as the person, over HTTP.
func (r *rig) reply(b *testing.B, id, outcome string) {
	req, _ := http.NewRequest("POST", r.srv.URL+"/api/v1/asks/"+id+"/reply", strings.NewReader(`{"outcome":"`+outcome+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+r.person)
	res, err := r.srv.Client().Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		b.Fatalf("reply: %d", res.StatusCode)
	}
}

func bash(cmd string) ask.ApprovalInput {
	raw, _ := json.Marshal(map[string]string{"command": cmd})
	return ask.ApprovalInput{Tool: "Bash", Input: raw, Cwd: "/home/ada/web", Session: "bench", Client: "bench"}
}

// report sets the p50 and p99 of d, in milliseconds.
func report(b *testing.B, d []time.Duration, name string) {
	slices.Sort(d)
	ms := func(q float64) float64 { return float64(d[int(q*float64(len(d)-1))]) / 1e6 }
	b.ReportMetric(ms(0.5), name+"-p50-ms")
	b.ReportMetric(ms(0.99), name+"-p99-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkRequestToInbox: the request → the approval on the event socket and at the push stand-in.
func BenchmarkRequestToInbox(b *testing.B) {
	r := newRig(b)
	ctx := context.Background()
	conn, err := eventstest.Dial(ctx, r.srv.URL, eventstest.Options{Token: r.person})
	if err != nil {
		b.Fatal(err)
	}
	defer conn.CloseNow()
	// Open asks of another agent beside the approvals: a RequestApproval reads the space's open
	// asks to join one it already has.
	other := &ask.Credential{ID: "cred_other", Space: space, Role: ask.RoleAgent, Actor: ask.Actor{ID: "agent_2"}, Person: ask.Actor{ID: "owner"}}
	for i := range openAsks {
		if _, _, err := r.app.Service.RequestApproval(ctx, other, bash(fmt.Sprintf("make other-%d", i))); err != nil {
			b.Fatal(err)
		}
	}
	r.seen = len(r.pushes.WaitFor(b, r.endpoint, openAsks, 10*time.Second))
	if _, _, err := conn.Read(ctx); err != nil { // the snapshot
		b.Fatal(err)
	}
	var took, socket, pushed []time.Duration
	b.ResetTimer()
	for i := range b.N {
		command := fmt.Sprintf("npm run task-%d", i)
		id := r.approvalID(command)
		t0 := time.Now()
		answered := r.hookAsync(command)
		for {
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, frame, err := conn.Read(rctx)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
			if bytes.Contains(frame, []byte(id)) && bytes.Contains(frame, []byte(`"kind":"approval"`)) {
				break
			}
		}
		onSocket := time.Since(t0)
		last := r.pushOf(b, id)
		if !bytes.Contains(last.Payload, []byte(command)) {
			b.Fatalf("the push: %s", last.Payload)
		}
		took = append(took, max(onSocket, last.Time.Sub(t0)))
		socket, pushed = append(socket, onSocket), append(pushed, last.Time.Sub(t0))
		// Decided, untimed, so that the inbox holds a steady number of open asks (openAsks).
		// The hook then gets its answer.
		b.StopTimer()
		r.reply(b, id, "denied")
		if got := <-answered; got.err != nil || !strings.Contains(got.body, `"behavior":"deny"`) {
			b.Fatalf("the hook's answer: %+v", got)
		}
		b.StartTimer()
	}
	b.StopTimer()
	report(b, took, "request-to-inbox")
	report(b, socket, "socket")
	report(b, pushed, "push")
}

// BenchmarkReplyToAnswer: the person's reply over HTTP → the waiting request's answer.
func BenchmarkReplyToAnswer(b *testing.B) {
	r := newRig(b)
	ctx := context.Background()
	var took []time.Duration
	b.ResetTimer()
	for i := range b.N {
		command := fmt.Sprintf("make step-%d", i)
		id := r.approvalID(command)
		answered := r.hookAsync(command)
		// The hook's wait is parked (the approval marked waiting), and the approval's push went
		// out, as it would while the person reads the notification: neither is timed.
		for {
			a, err := r.app.Service.Find(ctx, space, id)
			if err == nil && a.Waiting {
				break
			}
			select {
			case got := <-answered:
				b.Fatalf("the hook answered before a decision: %+v", got)
			case <-time.After(time.Millisecond):
			}
		}
		r.pushOf(b, id)
		t0 := time.Now()
		r.reply(b, id, "allowed")
		got := <-answered
		if got.err != nil || !strings.Contains(got.body, `"behavior":"allow"`) {
			b.Fatalf("the hook's answer: %+v", got)
		}
		took = append(took, got.at.Sub(t0))
	}
	b.StopTimer()
	report(b, took, "reply-to-answer")
}

// BenchmarkRuleDecides: a request a rule covers → its decision; no ask is open after it.
func BenchmarkRuleDecides(b *testing.B) {
	r := newRig(b)
	ctx := context.Background()
	owner := &ask.Credential{ID: "owner", Space: space, Role: ask.RoleOwner, Actor: ask.Actor{ID: "owner"}, Person: ask.Actor{ID: "owner"}}
	for i := range 50 { // a space with some rules to match against
		if _, err := r.app.Service.CreateRule(ctx, owner, ask.RuleInput{Effect: ask.EffectAllow, RuleScope: ask.RuleScope{Tool: "Bash", CommandPrefix: fmt.Sprintf("tool%d", i)}}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := r.app.Service.CreateRule(ctx, owner, ask.RuleInput{Effect: ask.EffectAllow, RuleScope: ask.RuleScope{Tool: "Bash", CommandPrefix: "npm test", Project: "web"}}); err != nil {
		b.Fatal(err)
	}
	var took []time.Duration
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		body, at, err := r.hook(fmt.Sprintf("npm test -- --shard %d", i))
		took = append(took, at.Sub(t0))
		if err != nil || !strings.Contains(body, `"behavior":"allow"`) {
			b.Fatalf("%v %s", err, body)
		}
	}
	b.StopTimer()
	snap, err := r.app.Service.Snapshot(ctx, space)
	if err != nil || len(snap.Open) != 0 {
		b.Fatalf("%d asks open after rule decisions (%v)", len(snap.Open), err)
	}
	report(b, took, "rule")
}
