package hooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/app"
	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/hooks"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
	"github.com/loopback-hq/loopback/shared/testwait"
)

// rig is a whole Loopback on real SQLite, served over HTTP, with an agent's and a person's
// credential.
type rig struct {
	lb     *app.App
	srv    *httptest.Server
	agent  string // token
	person string // token
	ada    *ask.Credential
}

func newRig(t *testing.T, wait app.Wait) *rig {
	t.Helper()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	if wait.Progress == 0 {
		wait.Progress = time.Second
	}
	wait.MaxWait = time.Hour // as loopback serve's default
	lb := app.New(app.Config{Storage: db, Hub: events.NewHub(), PublicURL: "http://127.0.0.1:1", Wait: wait,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(lb.Handler(nil))
	t.Cleanup(srv.Close)
	t.Cleanup(lb.Waiter.Drain)
	agent, _, err := gate.Issue(ctx, db, ask.Credential{Space: "local", Role: ask.RoleAgent, Actor: ask.Actor{ID: "agent-1"}, Person: ask.Actor{ID: "owner"}})
	if err != nil {
		t.Fatal(err)
	}
	person, ada, err := gate.Issue(ctx, db, ask.Credential{Space: "local", Role: ask.RolePerson, Actor: ask.Actor{ID: "ada", Name: "Ada"}, Person: ask.Actor{ID: "ada", Name: "Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{lb: lb, srv: srv, agent: agent, person: person, ada: ada}
}

// post sends a hook's JSON to /hooks/claude-code (query appended) with token.
func (r *rig) post(t *testing.T, ctx context.Context, token, query, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.srv.URL+hooks.Path+query, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// permissionRequest is Claude Code's PermissionRequest body for a Bash command.
func permissionRequest(session, command string) string {
	return permissionEvent("PermissionRequest", session, command)
}

func permissionEvent(event, session, command string) string {
	b, _ := json.Marshal(map[string]any{
		"session_id": session, "transcript_path": "/home/u/.claude/projects/x/" + session + ".jsonl",
		"cwd": "/home/u/src/shop", "permission_mode": "default", "hook_event_name": event,
		"tool_name": "Bash", "tool_input": map[string]any{"command": command, "description": "Run it"},
		"permission_suggestions": []any{map[string]any{"type": "setMode", "mode": "acceptEdits", "destination": "session"}},
		"prompt_id":              "later-fields-are-ignored",
	})
	return string(b)
}

// answer is a hook's answer, checked against the contract's ClaudeCodeHookOutput.
func answer(t *testing.T, res *http.Response, body string) hooks.Output {
	t.Helper()
	if res == nil || res.StatusCode != http.StatusOK {
		t.Fatalf("want 200, got %v: %s", res, body)
	}
	if err := contract.ValidateModel("ClaudeCodeHookOutput", []byte(strings.TrimSpace(body))); err != nil {
		t.Fatalf("the answer is not a ClaudeCodeHookOutput: %v: %q", err, body)
	}
	var out hooks.Output
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// openApproval waits until the approval of command is open with an agent waiting on it.
func (r *rig) openApproval(t *testing.T, command string) *ask.Ask {
	t.Helper()
	var found *ask.Ask
	testwait.Eventually(t, fmt.Sprintf("an open approval of %q with an agent waiting", command), func() bool {
		open, err := r.lb.Service.Store.OpenAsks(context.Background(), "local")
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range open {
			if a.Kind == ask.KindApproval && strings.Contains(string(a.Approval.Input), command) && a.Waiting {
				found = a
				return true
			}
		}
		return false
	})
	return found
}

func (r *rig) reply(t *testing.T, a *ask.Ask, reply ask.Reply) {
	t.Helper()
	if _, err := r.lb.Service.Reply(context.Background(), "local", a.ID, reply, &r.ada.Actor); err != nil {
		t.Fatal(err)
	}
}

// Refusals are the contract's Problems, decided before anything is asked: a missing or
// person's credential, a body that is not a hook's JSON, a bad ?timeout=.
func TestRefusals(t *testing.T) {
	r := newRig(t, app.Wait{})
	ctx := context.Background()
	for _, tc := range []struct {
		name, token, query, body string
		status                   int
		code                     string
	}{
		{"no credential", "", "", permissionRequest("s1", "ls"), 401, ask.EUnauthorized},
		{"a person's credential", r.person, "", permissionRequest("s1", "ls"), 403, ask.EForbidden},
		{"not JSON", r.agent, "", `{"hook_event_name":`, 400, ask.ERequestInvalid},
		{"not an object", r.agent, "", `[1]`, 400, ask.ERequestInvalid},
		{"duplicate keys", r.agent, "", `{"hook_event_name":"Stop","hook_event_name":"PermissionRequest"}`, 400, ask.ERequestInvalid},
		{"no event", r.agent, "", `{"session_id":"s1"}`, 422, ask.EInputInvalid},
		{"event not a string", r.agent, "", `{"hook_event_name":7}`, 422, ask.EInputInvalid},
		{"no tool_input", r.agent, "", `{"hook_event_name":"PermissionRequest","session_id":"s1","tool_name":"Bash"}`, 422, ask.EInputInvalid},
		{"tool_input not an object", r.agent, "", `{"hook_event_name":"PermissionRequest","session_id":"s1","tool_name":"Bash","tool_input":"ls"}`, 422, ask.EInputInvalid},
		{"no session", r.agent, "", `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{}}`, 422, ask.EInputInvalid},
		{"bad timeout", r.agent, "?timeout=ten", permissionRequest("s1", "ls"), 400, ask.ERequestInvalid},
		{"too large", r.agent, "", `{"hook_event_name":"PermissionRequest","x":"` + strings.Repeat("a", hooks.MaxBodyBytes) + `"}`, 413, ask.ETooLarge},
	} {
		res, body := r.post(t, ctx, tc.token, tc.query, tc.body)
		if res == nil || res.StatusCode != tc.status {
			t.Errorf("%s: %v %s, want %d", tc.name, res, body, tc.status)
			continue
		}
		if err := contract.ValidateModel("Problem", []byte(body)); err != nil || !strings.Contains(body, `"code":"`+tc.code+`"`) {
			t.Errorf("%s: %s, want a Problem with code %s (%v)", tc.name, body, tc.code, err)
		}
	}
	// No approval was made by any of them.
	open, _ := r.lb.Service.Store.OpenAsks(ctx, "local")
	if len(open) != 0 {
		t.Errorf("refused hooks left %d asks", len(open))
	}
	// GET is not a hook.
	res, err := http.Get(r.srv.URL + hooks.Path)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 405 || res.Header.Get("Allow") != "POST" {
		t.Errorf("GET: %d Allow %q", res.StatusCode, res.Header.Get("Allow"))
	}
}

// A PermissionRequest waits for the person; the allow is Claude Code's hook output. (Joining a
// pending approval is the domain's, tested in shared/ask.)
func TestAllowed(t *testing.T) {
	r := newRig(t, app.Wait{})
	ctx := context.Background()
	type result struct {
		res  *http.Response
		body string
	}
	results := make(chan result, 1)
	go func() {
		res, body := r.post(t, ctx, r.agent, "", permissionRequest("sess-1", "npm test"))
		results <- result{res, body}
	}()
	a := r.openApproval(t, "npm test")
	if a.Approval.Tool != "Bash" || a.Approval.Session != "sess-1" || a.Project != "shop" {
		t.Errorf("the approval: %+v project %q", a.Approval, a.Project)
	}
	select {
	case got := <-results:
		t.Fatalf("answered before the person decided: %s", got.body)
	default:
	}
	r.reply(t, a, ask.Reply{Outcome: ask.OutcomeAllowed})
	got := <-results
	out := answer(t, got.res, got.body)
	if d := out.HookSpecificOutput; d == nil || d.HookEventName != "PermissionRequest" || d.Decision == nil || d.Decision.Behavior != "allow" {
		t.Errorf("want allow, got %s", got.body)
	}
}

// A denial carries the person's words; a wait that beats sends its status, then spaces, before
// the JSON, which stays one hook output.
func TestDeniedWithKeepalive(t *testing.T) {
	r := newRig(t, app.Wait{Progress: 20 * time.Millisecond})
	req, err := http.NewRequest(http.MethodPost, r.srv.URL+hooks.Path, strings.NewReader(permissionRequest("sess-2", "rm -rf build")))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+r.agent)
	// The status comes with the first beat, before anyone decided.
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	first := make([]byte, 1)
	if _, err := io.ReadFull(res.Body, first); err != nil || first[0] != ' ' {
		t.Fatalf("the first byte: %q %v, want a space", first, err)
	}
	a := r.openApproval(t, "rm -rf build")
	r.reply(t, a, ask.Reply{Outcome: ask.OutcomeDenied, Message: "Not the build folder: run make clean"})
	rest, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := answer(t, res, string(rest))
	if d := out.HookSpecificOutput; d == nil || d.Decision == nil || d.Decision.Behavior != "deny" || d.Decision.Message != "Not the build folder: run make clean" {
		t.Errorf("want the denial with the person's words, got %q", rest)
	}
}

// No decision in time is no decision ({}), never an allow; the approval stays open for a later
// call to join.
func TestTimeoutIsNoDecision(t *testing.T) {
	r := newRig(t, app.Wait{})
	start := time.Now()
	// ?timeout=16: the hook's 16 s less the 15 s margin.
	res, body := r.post(t, context.Background(), r.agent, "?timeout=16", permissionRequest("sess-3", "make deploy"))
	out := answer(t, res, body)
	if out.HookSpecificOutput != nil {
		t.Errorf("want {}, got %s", body)
	}
	if d := time.Since(start); d < time.Second || d > 5*time.Second {
		t.Errorf("answered after %s, want about 1 s", d)
	}
	// The agent was answered {}: its terminal decides. The approval is withdrawn, saying so, and
	// a later reply in the inbox is refused as closed: it could reach no one.
	open, err := r.lb.Service.Store.OpenAsks(context.Background(), "local")
	if err != nil || len(open) != 0 {
		t.Fatalf("open asks after the hook gave up: %d (%v), want none", len(open), err)
	}
	a := r.lastApproval(t)
	last := a.Thread[len(a.Thread)-1]
	if a.Status != ask.Closed || last.Event != ask.NoticeWithdrawn || last.Text != hooks.StoppedWaitingText {
		t.Fatalf("after the hook's timeout: %s %+v", a.Status, last)
	}
	req, _ := http.NewRequest(http.MethodPost, r.srv.URL+"/api/v1/asks/"+a.ID+"/reply", strings.NewReader(`{"outcome":"allowed"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+r.person)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusConflict || !strings.Contains(string(b), `"ask.closed"`) {
		t.Fatalf("a reply after the hook gave up: %d %s, want 409 ask.closed", res.StatusCode, b)
	}
}

// decidingLate is the real domain, with a person's decision made just after the hook's wait
// ended and before the hook withdraws: the race a decision can win against the end of a wait.
type decidingLate struct {
	hooks.Domain
	decide func(askID string)
}

func (d decidingLate) Await(ctx context.Context, cred *ask.Credential, askID string, limit time.Duration, beat func() error) (*hooks.Decision, error) {
	dec, err := d.Domain.Await(ctx, cred, askID, limit, beat)
	d.decide(askID)
	return dec, err
}

// A decision that comes after the wait ended is not handed to the agent (it was answered {}),
// and its thread says it came too late.
func TestDecisionRacingTheEndIsTooLate(t *testing.T) {
	r := newRig(t, app.Wait{})
	ctx := context.Background()
	r.lb.Hooks.Approvals = decidingLate{Domain: r.lb.Hooks.Approvals.(hooks.Domain), decide: func(id string) {
		if _, err := r.lb.Service.Reply(ctx, "local", id, ask.Reply{Outcome: ask.OutcomeAllowed}, &r.ada.Actor); err != nil {
			t.Errorf("the late decision: %v", err)
		}
	}}
	res, body := r.post(t, ctx, r.agent, "?timeout=16", permissionRequest("sess-late", "make release"))
	if out := answer(t, res, body); out.HookSpecificOutput != nil || strings.TrimSpace(body) != "{}" {
		t.Fatalf("the hook's answer: %s, want {}", body)
	}
	a := r.lastApproval(t)
	if d := a.ApprovalDecision(); d == nil || d.Outcome != ask.OutcomeAllowed {
		t.Fatalf("the decision: %+v, want the person's allow kept", d)
	}
	last := a.Thread[len(a.Thread)-1]
	if last.Author != ask.AuthorLoopback || last.Event != ask.NoticeTooLate || !strings.Contains(last.Text, "not told") {
		t.Fatalf("the thread's last entry: %+v, want the too-late notice", last)
	}
}

// lastApproval is the newest approval in the space, open or closed.
func (r *rig) lastApproval(t *testing.T) *ask.Ask {
	t.Helper()
	closed, err := r.lb.Service.Store.ClosedAsksWire(context.Background(), "local", time.Now().Add(time.Hour), 10)
	if err != nil || len(closed) == 0 {
		t.Fatalf("closed asks: %d (%v), want the approval", len(closed), err)
	}
	a, err := r.lb.Service.Find(context.Background(), "local", closed[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// PostToolUse for the same session and input says the terminal answered: the waiting request
// ends with no decision at once, and the thread says so. A hook request that goes away (No or Esc
// at the terminal) withdraws its approval.
func TestTerminalAnswers(t *testing.T) {
	r := newRig(t, app.Wait{})
	ctx := context.Background()
	done := make(chan string, 1)
	go func() {
		res, body := r.post(t, ctx, r.agent, "", permissionRequest("sess-4", "git push"))
		answer(t, res, body)
		done <- body
	}()
	a := r.openApproval(t, "git push")
	res, body := r.post(t, ctx, r.agent, "", permissionEvent("PostToolUse", "sess-4", "git push"))
	if out := answer(t, res, body); out.HookSpecificOutput != nil {
		t.Errorf("PostToolUse: %s", body)
	}
	select {
	case got := <-done:
		if strings.TrimSpace(got) != "{}" {
			t.Errorf("the waiting request: %s, want {}", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting request did not end when the terminal answered")
	}
	closed, err := r.lb.Service.Find(ctx, "local", a.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := closed.Thread[len(closed.Thread)-1]
	if closed.Status != ask.Closed || last.Author != ask.AuthorLoopback || last.Event != ask.NoticeTerminal || last.Outcome != ask.OutcomeAllowed {
		t.Errorf("after PostToolUse: %s %+v", closed.Status, last)
	}

	// The request goes away: the approval is withdrawn.
	cctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.post(t, cctx, r.agent, "", permissionRequest("sess-4", "git push --force"))
	}()
	b := r.openApproval(t, "git push --force")
	cancel()
	wg.Wait()
	testwait.Eventually(t, "the approval withdrawn", func() bool {
		f, err := r.lb.Service.Find(ctx, "local", b.ID)
		return err == nil && f.Status == ask.Closed && f.Thread[len(f.Thread)-1].Event == ask.NoticeWithdrawn
	})
}

// A rule decides at once, with no ask put to the person; other events are heard with {}.
func TestRuleAndOtherEvents(t *testing.T) {
	r := newRig(t, app.Wait{})
	ctx := context.Background()
	if _, err := r.lb.Service.CreateRule(ctx, r.ada, ask.RuleInput{Effect: ask.EffectAllow, RuleScope: ask.RuleScope{Tool: "Bash", CommandPrefix: "npm test"}}); err != nil {
		t.Fatal(err)
	}
	res, body := r.post(t, ctx, r.agent, "", permissionRequest("sess-5", "npm test -- --watch"))
	if d := answer(t, res, body).HookSpecificOutput; d == nil || d.Decision == nil || d.Decision.Behavior != "allow" {
		t.Errorf("want the rule's allow at once, got %s", body)
	}
	open, _ := r.lb.Service.Store.OpenAsks(ctx, "local")
	if len(open) != 0 {
		t.Errorf("the rule's tool use was put to the person: %d open", len(open))
	}
	for _, ev := range []string{
		`{"hook_event_name":"Notification","session_id":"sess-5","notification_type":"idle_prompt","message":"Claude is waiting for your input"}`,
		`{"hook_event_name":"Stop","session_id":"sess-5"}`,
		permissionEvent("PermissionDenied", "sess-5", "never asked"),
	} {
		res, body := r.post(t, ctx, r.agent, "", ev)
		if out := answer(t, res, body); out.HookSpecificOutput != nil || !bytes.Equal(bytes.TrimSpace([]byte(body)), []byte("{}")) {
			t.Errorf("%s: %s, want {}", ev, body)
		}
	}
}
