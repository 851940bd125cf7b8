package main

import (
	"strings"
	"testing"
	"time"
)

// TestOpenAskFlag: `loopback serve --max-open-asks` sets how many open asks one agent credential
// holds: past it, an ask is a tool error (ask.open_limit) and nothing is created.
func TestOpenAskFlag(t *testing.T) {
	s := startServe(t, 15*time.Second, map[string]string{"LOOPBACK_TOKEN": ownerToken}, "--max-open-asks", "1")
	agent := s.agentToken(t)
	askInBackground(t, s.agent(t, agent), map[string]any{"question": "one?", "project": "sizes"})
	eventually(t, "one open ask", func() bool {
		r := s.do(t, "GET", "/api/v1/snapshot", ownerToken, "")
		return strings.Count(string(r.body), `"waiting":true`) == 1
	})
	res := callTool(t, s.agent(t, agent), "ask_question", map[string]any{"question": "two?", "project": "sizes"})
	if !res.IsError || !strings.Contains(textOf(res), "ask.open_limit") || !strings.Contains(textOf(res), "already has 1 open asks") {
		t.Fatalf("a second ask with --max-open-asks 1: %s", textOf(res))
	}
	if r := s.do(t, "GET", "/api/v1/snapshot", ownerToken, ""); strings.Contains(string(r.body), "two?") {
		t.Fatalf("the refused ask was created: %s", r.body)
	}
}
