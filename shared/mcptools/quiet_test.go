package mcptools

import (
	"testing"
	"time"
)

// TestWaiterLimit is the honest check of the default choice, with the shipped defaults (no
// field set but MaxWait): every client gets Loopback's own "no reply yet" before its own limit.
func TestWaiterLimit(t *testing.T) {
	const (
		sdkTimeout      = 60 * time.Second // the TypeScript SDK's and the Inspector's default request timeout
		claudeQuietIdle = 5 * time.Minute  // Claude Code's limit on a quiet remote call
		awsMaxWait      = 14*time.Minute + 30*time.Second
	)
	w := &Waiter{MaxWait: awsMaxWait}
	tests := []struct {
		name string
		c    Caller
		want func(time.Duration) bool
	}{
		{"no progress token: under the SDKs' 60 s", Caller{Client: "e2e-ts 1.0.0"}, func(d time.Duration) bool { return d == DefaultQuietMaxWait && d <= sdkTimeout-5*time.Second }},
		{"Inspector CLI, no token", Caller{Client: "inspector-client 2.12.0"}, func(d time.Duration) bool { return d < sdkTimeout }},
		{"Claude Code with progress: under its quiet limit", Caller{Client: "claude-code 2.1.332", ProgressToken: true}, func(d time.Duration) bool {
			return d == DefaultClaudeCodeMaxWait && d < claudeQuietIdle
		}},
		{"Claude Code without progress", Caller{Client: "claude-code 2.1.332"}, func(d time.Duration) bool { return d == DefaultQuietMaxWait }},
		{"a client with progress waits long", Caller{Client: "codex-mcp-client 0.171.0", ProgressToken: true}, func(d time.Duration) bool { return d == awsMaxWait }},
		{"the person's own bound wins", Caller{Client: "claude-code 2.1.332", ProgressToken: true, Asked: 8 * time.Second}, func(d time.Duration) bool { return d == 8*time.Second }},
		{"asked for more than MaxWait: MaxWait", Caller{Asked: 24 * time.Hour}, func(d time.Duration) bool { return d == awsMaxWait }},
		{"asked for less than a second: a second", Caller{Asked: time.Millisecond}, func(d time.Duration) bool { return d == MinAskedWait }},
	}
	for _, tc := range tests {
		if got := w.Limit(tc.c); !tc.want(got) {
			t.Errorf("%s: %s", tc.name, got)
		}
	}
	// Set bounds apply, and never past MaxWait.
	w = &Waiter{MaxWait: 10 * time.Second, QuietMaxWait: 20 * time.Second, ClaudeCodeMaxWait: 3 * time.Second}
	if got := w.Limit(Caller{}); got != 10*time.Second {
		t.Errorf("QuietMaxWait over MaxWait: %s", got)
	}
	if got := w.Limit(Caller{Client: "Claude-Code 3", ProgressToken: true}); got != 3*time.Second {
		t.Errorf("ClaudeCodeMaxWait: %s", got)
	}
}
