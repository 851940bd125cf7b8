package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadyFile: with --ready-file, serve writes where it listens once it does (what a harness of
// a child process needs, as JSON) and no token, the person's nor the agent's; the addresses work;
// the file goes when the server stops.
func TestReadyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ready.json")
	s := startServe(t, 15*time.Second, map[string]string{"LOOPBACK_TOKEN": ownerToken}, "--ready-file", path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("serve is ready and its ready file is not: %v", err)
	}
	var got map[string]string
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("the ready file is not JSON: %v\n%s", err, b)
	}
	addr := strings.TrimPrefix(s.base, "http://")
	want := map[string]string{"addr": addr, "url": s.base, "api": s.base + "/api/v1", "mcp": s.base + "/mcp"}
	if len(got) != len(want) {
		t.Errorf("the ready file holds %v, want exactly %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("ready file %s = %q, want %q", k, got[k], v)
		}
	}
	for name, secret := range map[string]string{"the person's token": ownerToken, "the agent's token": s.agentToken(t), "a token": "lb_"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the ready file holds %s:\n%s", name, b)
		}
	}
	if r := s.do(t, "GET", strings.TrimPrefix(got["api"], s.base)+"/whoami", ownerToken, ""); r.status != 200 {
		t.Errorf("GET %s/whoami = %d %s", got["api"], r.status, r.body)
	}
	s.stop()
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the ready file after the server stopped: %v, want it gone", err)
	}
}
