package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loopback-hq/loopback/shared/hooks"
)

// Environment of `loopback hook`: where Loopback is, and the agent's credential.
const (
	URLEnv        = "LOOPBACK_URL"
	AgentTokenEnv = "LOOPBACK_AGENT_TOKEN"
)

// hookClients are the clients `loopback hook` speaks for.
var hookClients = []string{"claude-code", "codex", "cursor"}

// hook runs `loopback hook`: it reads a client's hook JSON on stdin, hands it to Loopback
// (POST $LOOPBACK_URL/hooks/claude-code with $LOOPBACK_AGENT_TOKEN), and prints the decision in
// the client's own format. Whatever goes wrong, it prints no decision: the client then asks at
// its terminal (Claude Code, Codex) or asks the person itself (Cursor's "ask"). It never allows
// on its own.
//
// Exit codes: 0 with the decision (or none) on stdout; 1 when Loopback could not be asked (the
// reason on stderr; Claude Code and Codex then carry on as with no decision). For Cursor the
// failure is printed as {"permission":"ask"} with 0, as Cursor reads only what a hook prints.
func hook(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	client := fs.String("client", "", "the client whose hook runs this: claude-code, codex or cursor (default: from the JSON; claude-code)")
	timeout := fs.Int("timeout", int(hooks.ClaudeCodeTimeout/time.Second), "the hook's timeout in seconds, as configured in the client: Loopback answers before it")
	noDecision := fs.String("no-decision", "pass", "when no one decides a permission request (a timeout, an error): pass (print nothing: the client's own prompt decides) or deny (for a client whose fallback is not a person, such as codex exec --approve-for-me)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if *noDecision != "pass" && *noDecision != "deny" {
		fmt.Fprintln(stderr, "loopback hook: --no-decision must be pass or deny")
		return errUsage
	}
	if *client != "" && !slices.Contains(hookClients, *client) {
		fmt.Fprintf(stderr, "loopback hook: --client must be one of %s\n", strings.Join(hookClients, ", "))
		return errUsage
	}
	body, err := io.ReadAll(io.LimitReader(stdin, hooks.MaxBodyBytes+1))
	if err != nil {
		return hookFailed(stdout, stderr, *client, fmt.Errorf("reading the hook's JSON on stdin: %w", err))
	}
	var probe struct {
		Event string `json:"hook_event_name"`
	}
	_ = json.Unmarshal(body, &probe)
	if *client == "" {
		*client = "claude-code"
		if isCursorEvent(probe.Event) {
			*client = "cursor"
		}
	}
	if *client == "cursor" {
		return cursorHook(ctx, body, probe.Event, *timeout, stdout, stderr)
	}
	out, err := postHook(ctx, body, *client, *timeout)
	if *noDecision == "deny" && probe.Event == "PermissionRequest" && (err != nil || out.HookSpecificOutput == nil) {
		// A person decides, or nothing runs: never leave the choice to a client's own model.
		why := "no one decided in Loopback in time"
		if err != nil {
			fmt.Fprintf(stderr, "loopback hook: %v (denied: --no-decision deny)\n", err)
			why = "Loopback could not be reached"
		}
		denied := hooks.OutputFor(&hooks.Decision{Message: "Denied because " + why + ": the person has not allowed this. Ask again later, or ask the person what to do instead."})
		out = &denied
		err = nil
	}
	if err != nil {
		return hookFailed(stdout, stderr, *client, err)
	}
	b, _ := json.Marshal(out)
	fmt.Fprintln(stdout, string(b))
	return nil
}

// errHookFailed makes `loopback hook` exit 1 having said why on stderr.
var errHookFailed = errors.New("hook failed")

// hookFailed prints no decision and says why.
func hookFailed(stdout, stderr io.Writer, client string, err error) error {
	fmt.Fprintf(stderr, "loopback hook: %v (no decision: the %s decides)\n", err, map[bool]string{true: "person, in Cursor", false: "terminal"}[client == "cursor"])
	if client == "cursor" {
		fmt.Fprintln(stdout, `{"permission":"ask"}`)
		return nil
	}
	return errHookFailed
}

// postHook hands a Claude Code shaped hook JSON to Loopback and returns its answer.
func postHook(ctx context.Context, body []byte, client string, timeoutSeconds int) (*hooks.Output, error) {
	base := strings.TrimRight(os.Getenv(URLEnv), "/")
	token := os.Getenv(AgentTokenEnv)
	switch {
	case base == "":
		return nil, fmt.Errorf("%s is not set: set it to Loopback's address, such as http://127.0.0.1:8080", URLEnv)
	case token == "":
		return nil, fmt.Errorf("%s is not set: set it to an agent's token (loopback token create --name NAME)", AgentTokenEnv)
	case len(body) > hooks.MaxBodyBytes:
		return nil, fmt.Errorf("the hook's JSON is over %d KiB", hooks.MaxBodyBytes>>10)
	}
	if timeoutSeconds <= 0 {
		timeoutSeconds = int(hooks.ClaudeCodeTimeout / time.Second)
	}
	q := url.Values{"client": {client}, "timeout": {strconv.Itoa(timeoutSeconds)}}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(timeoutSeconds)*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+hooks.Path+"?"+q.Encode(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", URLEnv, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("asking Loopback: %w", err)
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("reading Loopback's answer: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		var p struct{ Code, Message string }
		if json.Unmarshal(answer, &p) == nil && p.Code != "" {
			return nil, fmt.Errorf("refused (%d %s): %s", res.StatusCode, p.Code, p.Message)
		}
		return nil, fmt.Errorf("the hook endpoint answered %s", res.Status)
	}
	var out hooks.Output
	// The answer may start with the spaces that kept a long wait alive: JSON allows them.
	if err := json.Unmarshal(answer, &out); err != nil {
		return nil, fmt.Errorf("the answer is not a hook's JSON: %v", err)
	}
	if d := out.HookSpecificOutput; d != nil && d.Decision != nil && d.Decision.Behavior != "allow" && d.Decision.Behavior != "deny" {
		return nil, fmt.Errorf("the answer has an unknown behavior %q", d.Decision.Behavior)
	}
	return &out, nil
}

// Cursor's hooks (https://cursor.com/docs/agent/hooks): beforeShellExecution and
// beforeMCPExecution may answer {"permission": "allow" | "deny" | "ask"}, with user_message and
// agent_message. The other events are heard and answered with nothing to decide.

func isCursorEvent(event string) bool {
	// Cursor's events are lowerCamelCase; Claude Code's and Codex's are UpperCamelCase.
	return event != "" && event[0] >= 'a' && event[0] <= 'z'
}

// cursorEvent is the part of a Cursor hook's JSON that Loopback reads.
type cursorEvent struct {
	Event          string          `json:"hook_event_name"`
	ConversationID string          `json:"conversation_id"`
	Command        string          `json:"command"`
	Cwd            string          `json:"cwd"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	WorkspaceRoots []string        `json:"workspace_roots"`
}

type cursorAnswer struct {
	Permission   string `json:"permission"`
	UserMessage  string `json:"user_message,omitempty"`
	AgentMessage string `json:"agent_message,omitempty"`
}

func cursorHook(ctx context.Context, body []byte, event string, timeout int, stdout, stderr io.Writer) error {
	if event != "beforeShellExecution" && event != "beforeMCPExecution" {
		fmt.Fprintln(stdout, "{}")
		return nil
	}
	var ev cursorEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return hookFailed(stdout, stderr, "cursor", fmt.Errorf("the hook's JSON is not valid: %v", err))
	}
	cwd := ev.Cwd
	if cwd == "" && len(ev.WorkspaceRoots) > 0 {
		cwd = ev.WorkspaceRoots[0]
	}
	tool, input := "Shell", json.RawMessage(nil)
	if event == "beforeShellExecution" {
		input, _ = json.Marshal(map[string]string{"command": ev.Command})
	} else {
		tool = ev.ToolName
		input = ev.ToolInput
		// Cursor sends an MCP tool's input as a string of JSON.
		var s string
		if json.Unmarshal(ev.ToolInput, &s) == nil {
			input = json.RawMessage(s)
		}
		if !json.Valid(input) || !bytes.HasPrefix(bytes.TrimSpace(input), []byte("{")) {
			input, _ = json.Marshal(map[string]any{"input": string(ev.ToolInput)})
		}
	}
	session := ev.ConversationID
	if session == "" {
		session = "cursor"
	}
	req, _ := json.Marshal(map[string]any{
		"hook_event_name": "PermissionRequest", "session_id": session, "cwd": cwd,
		"tool_name": tool, "tool_input": input,
	})
	out, err := postHook(ctx, req, "cursor", timeout)
	if err != nil {
		return hookFailed(stdout, stderr, "cursor", err)
	}
	answer := cursorAnswer{Permission: "ask"}
	if d := out.HookSpecificOutput; d != nil && d.Decision != nil {
		switch d.Decision.Behavior {
		case "allow":
			answer = cursorAnswer{Permission: "allow"}
		case "deny":
			answer = cursorAnswer{Permission: "deny", UserMessage: "Denied in Loopback: " + d.Decision.Message, AgentMessage: d.Decision.Message}
		}
	}
	b, _ := json.Marshal(answer)
	fmt.Fprintln(stdout, string(b))
	return nil
}
