package awsrt_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/sso"
)

// TestServerlessSSO: single sign-on on the Lambda handlers (SsoFunction's routes) on moto. Off (no
// OidcIssuer): GET /api/v1/sso says so and /auth/oidc/start is the API's 404. On: a sign-in goes
// from /auth/oidc/start through mockoidc to /auth/oidc/callback, the client secret read from its
// SSM SecureString (mockoidc refuses the code without it), and ends with a new person credential
// in the fragment that the API takes.
func TestServerlessSSO(t *testing.T) {
	d := deploy(t)
	if res := callAPI(t, d.rt, "GET", "/api/v1/sso", "", nil); res.Status != 200 || !strings.Contains(string(res.Body), `"enabled":false`) {
		t.Errorf("off: GET /api/v1/sso → %d %s", res.Status, res.Body)
	}
	if res := callAPI(t, d.rt, "GET", sso.PathStart, "", nil); res.Status != 404 {
		t.Errorf("off: GET %s → %d %s, want 404", sso.PathStart, res.Status, res.Body)
	}

	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	cfg := m.Config()
	const space, secretName = "sp_sso", "/loopback/sso-test/oidc/client-secret"
	d.owner(t, space, "owner")
	if err := awsrt.PutSSOSecret(context.Background(), ssm.NewFromConfig(moto.Config()), secretName, cfg.ClientSecret); err != nil {
		t.Fatal(err)
	}
	on, err := awsrt.New(moto.Config(), awsrt.Env{Table: d.table, PublicURL: "https://" + inboxHost, SSOSecretParameter: secretName,
		SSO: &sso.Config{Issuer: cfg.Issuer, ClientID: cfg.ClientID, Name: "Mock IdP", Space: space, Allow: []string{"@example.com"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res := callAPI(t, on, "GET", "/api/v1/sso", "", nil); res.Status != 200 || !strings.Contains(string(res.Body), `"provider":"Mock IdP"`) {
		t.Errorf("on: GET /api/v1/sso → %d %s", res.Status, res.Body)
	}
	start := callAPI(t, on, "GET", sso.PathStart, "", nil)
	if start.Status != http.StatusFound {
		t.Fatalf("GET %s → %d %s", sso.PathStart, start.Status, start.Body)
	}
	cookie := start.Header.Get("Set-Cookie")
	if !strings.HasPrefix(cookie, "lb_oidc=") {
		t.Fatalf("no state cookie: %q", cookie)
	}
	// The provider signs mockoidc's user in at once and sends the browser back.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(start.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || back.Path != sso.PathCallback || back.Host != inboxHost {
		t.Fatalf("the provider sent the browser to %q (%v), want https://%s%s", resp.Header.Get("Location"), err, inboxHost, sso.PathCallback)
	}
	done := callAPI(t, on, "GET", back.RequestURI(), "", nil, "Cookie", strings.SplitN(cookie, ";", 2)[0])
	loc, _ := url.Parse(done.Header.Get("Location"))
	if done.Status != http.StatusSeeOther || loc == nil {
		t.Fatalf("the callback → %d %s", done.Status, done.Body)
	}
	frag, _ := url.ParseQuery(loc.Fragment)
	token := frag.Get("token")
	if token == "" || loc.RawQuery != "" {
		t.Fatalf("the callback sent the browser to %s", loc.Redacted())
	}
	who := callAPI(t, on, "GET", "/api/v1/whoami", token, nil)
	var w struct {
		Space string
		Actor struct{ ID string }
	}
	json.Unmarshal(who.Body, &w)
	if who.Status != 200 || w.Space != space || w.Actor.ID != "person:jane.doe@example.com" {
		t.Errorf("whoami with the new credential → %d %s", who.Status, who.Body)
	}
	// Another instance of the function (SSO on or off) lists the link.
	owner := d.owner(t, space, "owner")
	if res := callAPI(t, d.rt, "GET", "/api/v1/sso/links", owner, nil); res.Status != 200 || !strings.Contains(string(res.Body), "jane.doe@example.com") {
		t.Errorf("GET /api/v1/sso/links → %d %s", res.Status, res.Body)
	}
}
