package mcptools_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkReplyWakesParkedCall is the reply path of issue 30 in one process: an agent's blocking
// ask_question (mcp-go's client, MCP 2026-07-28, parked), the person's reply over the API, and the
// call's result in the agent's hands. Profile the wake with -cpuprofile and focus on
// mcptools.(*parking).answer.
func BenchmarkReplyWakesParkedCall(b *testing.B) {
	d := newTestDeployment(b, deployOpts{})
	c := d.connect(b, clientOpts{})
	ctx := context.Background()
	client := &http.Client{}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		p := startTool(b, c, "ask_question", question("bench"))
		var id string
		eventually(b, "the call waiting", func() bool {
			open, err := d.DB.OpenAsks(ctx, testSpace)
			if err != nil || len(open) != 1 || !open[0].Waiting {
				return false
			}
			id = open[0].ID
			return true
		})
		req, _ := http.NewRequest("POST", d.URL+"/api/v1/asks/"+id+"/reply", strings.NewReader(`{"outcome":"answered","selected":["SQLite"]}`))
		req.Header.Set("Authorization", "Bearer "+d.Token)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil || res.StatusCode != 200 {
			b.Fatalf("reply: %v %v", res, err)
		}
		res.Body.Close()
		if r := p.result(b); r.IsError {
			b.Fatalf("the call's result is an error: %v", resultText(r))
		}
	}
}
