package mcptools_test

import (
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestTurnsNeverHeldByAWait: with two turns, more sessions' GET streams than turns open, many
// more blocking calls than turns all come to wait for the person, both ways a call waits (parked,
// and held by a client that takes only JSON), and a call that does not wait is still answered
// while they do: a stream or a wait gives its turn back.
func TestTurnsNeverHeldByAWait(t *testing.T) {
	d := newTestDeployment(t, deployOpts{Turns: 2})
	for i := 0; i < 3; i++ {
		s := d.openStream(t, d.Token, initSession(t, d.MCP, d.Token, testClientInfo))
		if s.res.StatusCode != 200 {
			t.Fatalf("stream %d: %s", i, s.res.Status)
		}
	}
	session := initSession(t, d.MCP, d.Token, testClientInfo)
	modern := map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: "tools/call", mcp.HeaderName: "ask_question"}
	const n = 6
	for i := 0; i < n; i++ {
		headers := session
		if i%2 == 1 {
			headers = modern
		}
		d.park(t, d.callRequest(t, headers, "ask_question", question(fmt.Sprint("turn-parked-", i)), nil))
	}
	json := map[string]string{"Accept": "application/json"}
	for k, v := range session {
		json[k] = v
	}
	held := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			_, err := doRPC(d.MCP, d.Token, json, "tools/call", map[string]any{"name": "ask_question", "arguments": question(fmt.Sprint("turn-held-", i))})
			held <- err
		}()
	}
	eventually(t, fmt.Sprintf("%d calls waiting with 2 turns", 2*n), func() bool {
		open, _ := d.snapshot(t)
		waiting := 0
		for _, a := range open {
			if a.Waiting {
				waiting++
			}
		}
		return waiting == 2*n
	})
	// A call that does not wait has a turn at once.
	var link struct {
		URL string `json:"url"`
	}
	mustRPC(t, d.MCP, d.Token, session, "tools/call", map[string]any{"name": "get_inbox_link", "arguments": map[string]any{}}, &link)
	// The held calls are answered as the person replies.
	open, _ := d.snapshot(t)
	for _, a := range open {
		d.reply(t, a.ID, map[string]any{"outcome": "answered", "selected": []string{"SQLite"}})
	}
	for i := 0; i < n; i++ {
		if err := <-held; err != nil {
			t.Errorf("a held call: %v", err)
		}
	}
}
