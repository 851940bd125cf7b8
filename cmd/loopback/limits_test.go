package main

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestSlowBodiesAreCut: a client that declares a body and never sends it, or trickles it, holds
// its connection no longer than the body's read deadline; a waiting call, whose body has arrived,
// is not cut by it.
func TestSlowBodiesAreCut(t *testing.T) {
	s := startServe(t, 15*time.Second, map[string]string{"LOOPBACK_TOKEN": ownerToken}, "--body-timeout", "1s", "--max-wait", "5s")
	addr := strings.TrimPrefix(s.base, "http://")
	for _, path := range []string{"/api/v1/snapshot", "/api/v1/asks/x/reply", "/mcp"} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+ownerToken+"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		io.Copy(io.Discard, conn) // until the server closes it
		if took := time.Since(start); took > 4*time.Second {
			t.Errorf("%s: a body that never came held the connection %s", path, took.Round(time.Millisecond))
		}
		conn.Close()
	}
	// A blocking call waits well past the body deadline: its body was read.
	c := s.agent(t, s.agentToken(t))
	start := time.Now()
	res := callTool(t, c, "ask_question", map[string]any{"question": "Still waiting?", "project": "limits"})
	if took := time.Since(start); took < 4*time.Second || !strings.Contains(textOf(res), "await_reply") {
		t.Errorf("the wait ended after %s with %q; want the max-wait result after 5s", took.Round(time.Millisecond), textOf(res))
	}
}
