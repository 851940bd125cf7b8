package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/app"
	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
	"github.com/loopback-hq/loopback/shared/testwait"
)

// hookRig is a Loopback on real SQLite over HTTP, with LOOPBACK_URL and LOOPBACK_AGENT_TOKEN set
// for `loopback hook`, and a person (Ada) who decides.
type hookRig struct {
	lb     *app.App
	ada    *ask.Credential
	person string
}

func newHookRig(t *testing.T) *hookRig {
	t.Helper()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	lb := app.New(app.Config{Storage: db, Hub: events.NewHub(), PublicURL: "http://127.0.0.1:1", Wait: app.Wait{Progress: time.Second, MaxWait: time.Hour},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(lb.Handler(nil))
	t.Cleanup(srv.Close)
	t.Cleanup(lb.Waiter.Drain)
	agent, _, err := gate.Issue(ctx, db, ask.Credential{Space: LocalSpace, Role: ask.RoleAgent, Actor: ask.Actor{ID: "agent-1"}, Person: ask.Actor{ID: "owner"}})
	if err != nil {
		t.Fatal(err)
	}
	person, ada, err := gate.Issue(ctx, db, ask.Credential{Space: LocalSpace, Role: ask.RolePerson, Actor: ask.Actor{ID: "ada", Name: "Ada"}, Person: ask.Actor{ID: "ada", Name: "Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(URLEnv, srv.URL)
	t.Setenv(AgentTokenEnv, agent)
	return &hookRig{lb: lb, ada: ada, person: person}
}

// decide waits for the open approval of command and replies r.
func (h *hookRig) decide(t *testing.T, command string, r ask.Reply) {
	t.Helper()
	var id string
	testwait.Eventually(t, "the approval of "+command, func() bool {
		open, _ := h.lb.Service.Store.OpenAsks(context.Background(), LocalSpace)
		for _, a := range open {
			if a.Kind == ask.KindApproval && strings.Contains(string(a.Approval.Input), command) && a.Waiting {
				id = a.ID
				return true
			}
		}
		return false
	})
	if _, err := h.lb.Service.Reply(context.Background(), LocalSpace, id, r, &h.ada.Actor); err != nil {
		t.Error(err)
	}
}

// runHook runs `loopback hook ARGS` with stdin; returns what it printed and its error.
func runHook(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := hook(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

const codexRequest = `{"session_id":"019b-thread","transcript_path":null,"cwd":"/home/u/src/shop","hook_event_name":"PermissionRequest","model":"gpt-5.5","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"cargo publish"},"turn_id":"t1"}`

// Claude Code's and Codex's hooks get the decision as hookSpecificOutput.
func TestHookClaudeCodeAndCodex(t *testing.T) {
	h := newHookRig(t)
	go h.decide(t, "cargo publish", ask.Reply{Outcome: ask.OutcomeAllowed})
	out, errOut, err := runHook(t, codexRequest, "--client", "codex")
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	if err := contract.ValidateModel("ClaudeCodeHookOutput", []byte(strings.TrimSpace(out))); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if strings.TrimSpace(out) != `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}` {
		t.Errorf("printed %s", out)
	}

	go h.decide(t, "rm -rf /", ask.Reply{Outcome: ask.OutcomeDenied, Message: "Never."})
	out, _, err = runHook(t, strings.Replace(codexRequest, "cargo publish", "rm -rf /", 1))
	if err != nil || !strings.Contains(out, `"behavior":"deny","message":"Never."`) {
		t.Errorf("%v: %s", err, out)
	}
}

// Cursor's hooks get {"permission": …}; a command becomes a Shell approval.
func TestHookCursor(t *testing.T) {
	h := newHookRig(t)
	shell := `{"conversation_id":"c-1","generation_id":"g-1","hook_event_name":"beforeShellExecution","command":"terraform apply","cwd":"/home/u/src/infra","workspace_roots":["/home/u/src/infra"]}`
	go h.decide(t, "terraform apply", ask.Reply{Outcome: ask.OutcomeDenied, Message: "Plan first."})
	out, errOut, err := runHook(t, shell)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(out), &got); err != nil || got["permission"] != "deny" || got["agent_message"] != "Plan first." || !strings.Contains(got["user_message"], "Plan first.") {
		t.Errorf("printed %s (%v)", out, err)
	}
	mcp := `{"conversation_id":"c-1","hook_event_name":"beforeMCPExecution","tool_name":"create_issue","tool_input":"{\"title\":\"Flaky test\"}","url":"https://mcp.example.com","workspace_roots":["/home/u/src/infra"]}`
	go h.decide(t, "Flaky test", ask.Reply{Outcome: ask.OutcomeAllowed})
	out, _, err = runHook(t, mcp, "--client", "cursor")
	if err != nil || strings.TrimSpace(out) != `{"permission":"allow"}` {
		t.Errorf("%v: %s", err, out)
	}
	// Another event: nothing to decide.
	out, _, err = runHook(t, `{"hook_event_name":"afterFileEdit","file_path":"a.go"}`)
	if err != nil || strings.TrimSpace(out) != "{}" {
		t.Errorf("afterFileEdit: %v %s", err, out)
	}
}

// Whatever goes wrong, no decision: nothing on stdout and exit 1 (Claude Code, Codex), or
// Cursor's "ask"; never an allow.
func TestHookFailures(t *testing.T) {
	h := newHookRig(t)
	t.Setenv(AgentTokenEnv, h.person) // a person's token is refused
	out, errOut, err := runHook(t, codexRequest)
	if !errors.Is(err, errHookFailed) || out != "" || !strings.Contains(errOut, "auth.forbidden") {
		t.Errorf("a person's token: %v, stdout %q, stderr %q", err, out, errOut)
	}
	out, _, err = runHook(t, `{"hook_event_name":"beforeShellExecution","command":"ls"}`)
	if err != nil || strings.TrimSpace(out) != `{"permission":"ask"}` {
		t.Errorf("cursor, refused: %v %s", err, out)
	}
	t.Setenv(URLEnv, "")
	out, errOut, err = runHook(t, codexRequest)
	if !errors.Is(err, errHookFailed) || out != "" || !strings.Contains(errOut, URLEnv) {
		t.Errorf("no URL: %v, stdout %q, stderr %q", err, out, errOut)
	}
	if _, _, err := runHook(t, codexRequest, "--client", "gemini"); !errors.Is(err, errUsage) {
		t.Errorf("unknown client: %v", err)
	}
	open, _ := h.lb.Service.Store.OpenAsks(context.Background(), LocalSpace)
	if len(open) != 0 {
		t.Errorf("refused hooks made %d approvals", len(open))
	}
}

// TestHookNoDecisionDeny: with --no-decision deny, a permission request no one decided (here,
// Loopback unreachable) is denied in words, never left to a client's own model; other events
// still print nothing.
func TestHookNoDecisionDeny(t *testing.T) {
	newHookRig(t)
	t.Setenv(URLEnv, "")
	out, errOut, err := runHook(t, codexRequest, "--client", "codex", "--no-decision", "deny")
	if err != nil || !strings.Contains(errOut, URLEnv) {
		t.Fatalf("no URL, deny: %v, stderr %q", err, errOut)
	}
	var got struct {
		HookSpecificOutput struct {
			HookEventName string `json:"hookEventName"`
			Decision      struct{ Behavior, Message string }
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.HookSpecificOutput.HookEventName != "PermissionRequest" ||
		got.HookSpecificOutput.Decision.Behavior != "deny" || !strings.Contains(got.HookSpecificOutput.Decision.Message, "could not be reached") {
		t.Errorf("no URL, deny: %v %s", err, out)
	}
	post := strings.Replace(codexRequest, `"PermissionRequest"`, `"PostToolUse"`, 1)
	if out, _, err := runHook(t, post, "--no-decision", "deny"); !errors.Is(err, errHookFailed) || out != "" {
		t.Errorf("PostToolUse, deny: %v %q", err, out)
	}
	if _, _, err := runHook(t, codexRequest, "--no-decision", "allow"); !errors.Is(err, errUsage) {
		t.Errorf("--no-decision allow: %v", err)
	}
}
