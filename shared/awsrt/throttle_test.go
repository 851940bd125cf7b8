package awsrt_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/loopback-hq/loopback/shared/awsrt"
)

// TestServerlessSignInThrottle: on AWS the failed sign-ins of one address are counted in the
// table, so two Lambda instances (two runtimes on one table) share one budget: of 30 wrong tokens
// sent to both at once, exactly 20 are 401 and the rest 429 with Retry-After; a request with no
// credential is not counted; the owner's and the agent's tokens still work from that address,
// on the API and on the mcp function; $connect with a wrong token is 429 too.
func TestServerlessSignInThrottle(t *testing.T) {
	d := deploy(t)
	c := d.credentials(t, "sp_throttle")
	other, err := awsrt.New(moto.Config(), awsrt.Env{Table: d.table})
	if err != nil {
		t.Fatal(err)
	}
	for range 25 {
		if r := callAPI(t, d.rt, "GET", "/api/v1/snapshot", "", nil); r.Status != 401 {
			t.Fatalf("no credential: %d", r.Status)
		}
	}
	var mu sync.Mutex
	count := map[int]int{}
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rt := d.rt
			if i%2 == 1 {
				rt = other
			}
			r := callAPI(t, rt, "GET", "/api/v1/whoami", fmt.Sprintf("lb_wrong-%02d-0123456789abcdefghij", i), nil)
			if r.Status == 429 && r.Header.Get("Retry-After") == "" {
				t.Errorf("429 without Retry-After: %s", r.Body)
			}
			mu.Lock()
			count[r.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if count[401] != 20 || count[429] != 10 {
		t.Errorf("30 wrong tokens at once on two instances: %v; want 20 × 401 and 10 × 429", count)
	}
	for _, tok := range []string{c.owner, c.teammate, c.agent} {
		if r := callAPI(t, other, "GET", "/api/v1/whoami", tok, nil); r.Status != 200 {
			t.Errorf("a live token from the throttled address: %d %s", r.Status, r.Body)
		}
	}
	if r := callAPI(t, d.rt, "GET", "/api/v1/whoami", c.revoked, nil); r.Status != 401 {
		t.Errorf("a revoked token: %d, want 401 (it is no guess)", r.Status)
	}
	mcp := &http.Client{Transport: newFunctionURL(d.rt, inboxHost)}
	ping := func(token string) int {
		req, _ := http.NewRequest("POST", "https://"+inboxHost+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "ping")
		res, err := mcp.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if s := ping("lb_wrong-mcp-0123456789abcdefghij"); s != 429 {
		t.Errorf("a wrong token on the mcp function past the budget: %d", s)
	}
	if s := ping(c.agent); s == 401 || s == 429 {
		t.Errorf("the agent's token on the mcp function from the throttled address: %d", s)
	}
	ev := wsEvent("$connect", "c1", map[string]string{
		"Sec-WebSocket-Protocol": "loopback.v1",
		"Authorization":          "Bearer lb_wrong-ws-0123456789abcdefghij",
		"Origin":                 "https://" + inboxHost,
		"X-Loopback-Host":        inboxHost,
	}, "")
	ev.RequestContext.Identity.SourceIP = "192.0.2.1" // as callAPI's requests come from
	resp, err := d.rt.Sockets().Connect(context.Background(), ev)
	if err != nil || resp.StatusCode != 429 {
		t.Errorf("$connect with a wrong token past the budget: %d %s %v", resp.StatusCode, resp.Body, err)
	}
}
