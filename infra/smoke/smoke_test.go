package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// root is the repository's root.
var root = filepath.Join("..", "..")

// awsLocal starts `loopback aws-local` (template.yaml's Lambdas on moto, which it starts itself)
// and returns its address and the owner's and the agent's tokens, read from what it prints.
func awsLocal(t *testing.T) (base, person, agent string) {
	t.Helper()
	require := os.Getenv("LOOPBACK_REQUIRE_ALL") != "" || os.Getenv("CI") != ""
	path := os.Getenv("PATH")
	if venv, err := filepath.Abs(filepath.Join(root, ".venv", "bin")); err == nil {
		path = venv + string(os.PathListSeparator) + path
	}
	if _, err := lookPath("moto_server", path); err != nil && os.Getenv("AWS_ENDPOINT_URL") == "" {
		if require {
			t.Fatal("moto_server is not on PATH: make setup installs it into .venv")
		}
		t.Skip("moto_server is not on PATH (make setup installs it into .venv): aws-local cannot run")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "loopback")
	build := exec.Command("go", "build", "-o", bin, "./cmd/loopback")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/loopback: %v\n%s", err, out)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	table := "loopback-smoke-" + hex.EncodeToString(b)
	tmpl, _ := filepath.Abs(filepath.Join(root, "template.yaml"))
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "aws-local", "--addr", "127.0.0.1:0", "--data", filepath.Join(dir, "data"),
		"--template", tmpl, "--table", table, "--bucket", table+"-uploads")
	cmd.Env = append(os.Environ(), "PATH="+path, "AWS_ACCESS_KEY_ID=testing", "AWS_SECRET_ACCESS_KEY=testing", "AWS_REGION=us-east-1")
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 20 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("aws-local's log:\n%s", tail(logs.String(), 60))
		}
	})
	inbox := regexp.MustCompile(`Inbox:\s+(http://[^/\s]+)/#token=(\S+)`)
	bearer := regexp.MustCompile(`Bearer (lb_[A-Za-z0-9_-]+)`)
	found := make(chan [3]string, 1)
	go func() {
		var got [3]string
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := inbox.FindStringSubmatch(sc.Text()); m != nil {
				got[0], got[1] = m[1], m[2]
			}
			if m := bearer.FindStringSubmatch(sc.Text()); m != nil && got[2] == "" {
				got[2] = m[1]
			}
			if got[0] != "" && got[2] != "" {
				found <- got
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case got := <-found:
		return got[0], got[1], got[2]
	case <-time.After(90 * time.Second):
		t.Fatalf("aws-local printed no inbox link within 90 s:\n%s", tail(logs.String(), 40))
	}
	return
}

// TestSmokeAgainstAwsLocal runs the whole smoke check against the deployment's own Lambdas on
// aws-local: MCP, the API, the event socket, and an image through the S3 path and its checker.
func TestSmokeAgainstAwsLocal(t *testing.T) {
	base, person, agent := awsLocal(t)
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := run(ctx, []string{"--url", base, "--file-wait", "60s"}, person, agent, &out); err != nil {
		t.Fatalf("smoke against aws-local: %v\n%s", err, out.String())
	}
	for _, want := range []string{"API: both tokens", "event socket: open", "MCP: initialized", "upload:", "ask: opened", "reply: answered", "closed", "file:", "All checks passed."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("smoke printed no %q:\n%s", want, out.String())
		}
	}
	t.Logf("\n%s", out.String())

	// The same deployment with the tokens swapped, or the agent's token for both, is refused
	// before anything is asked: smoke names what is wrong.
	for _, tc := range []struct{ person, agent, want string }{
		{agent, agent, "LOOPBACK_TOKEN must be a person's"},
		{person, person, "LOOPBACK_AGENT_TOKEN must be an agent's"},
		{person, "lb_" + strings.Repeat("x", 43), "the agent's token"},
	} {
		out.Reset()
		err := run(ctx, []string{"--url", base}, tc.person, tc.agent, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("smoke with person %.8s…, agent %.8s…: %v, want an error naming %q", tc.person, tc.agent, err, tc.want)
		}
	}
}

func lookPath(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// lockedBuffer is aws-local's log, written by exec's goroutine and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
