package awsrt_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/loopback-hq/loopback/shared/awslocal"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/oauth"
)

// TestServerlessOAuthStartsAreCounted: MCP OAuth's registrations from one address are counted
// in the table, so two Lambda instances (two runtimes on one table) share one budget of
// oauth.MaxStartsPerMinute a minute: past it, either instance answers 429 with Retry-After. (One
// after another: moto's threaded server does not keep concurrent ADDs atomic; DynamoDB does.)
func TestServerlessOAuthStartsAreCounted(t *testing.T) {
	d := deploy(t)
	other, err := awsrt.New(moto.Config(), awsrt.Env{Table: d.table})
	if err != nil {
		t.Fatal(err)
	}
	count := map[int]int{}
	for i := range oauth.MaxStartsPerMinute + 6 {
		rt := d.rt
		if i%2 == 1 {
			rt = other
		}
		body := fmt.Sprintf(`{"client_name":"agent %d","redirect_uris":["http://127.0.0.1/callback"],"token_endpoint_auth_method":"none"}`, i)
		// OAuth's error objects, not the contract's Problems: not through callAPI's check.
		req := httptest.NewRequest("POST", oauth.PathRegister, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res, err := httpadapter.NewV2(rt.API()).ProxyWithContext(context.Background(), awslocal.APIRequest(req, []byte(body), "$default", nil, "api123"))
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode == 429 && res.Headers["Retry-After"] == "" {
			t.Errorf("429 without Retry-After: %s", res.Body)
		}
		count[res.StatusCode]++
	}
	if count[201] != oauth.MaxStartsPerMinute || count[429] != 6 {
		t.Errorf("%d registrations from one address on two instances: %v; want %d × 201 and 6 × 429",
			oauth.MaxStartsPerMinute+6, count, oauth.MaxStartsPerMinute)
	}
}
