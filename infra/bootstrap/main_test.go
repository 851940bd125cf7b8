package main

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awstest"
	"github.com/loopback-hq/loopback/shared/dynamo"
	"github.com/loopback-hq/loopback/shared/gate"
)

var moto *awstest.Server

func TestMain(m *testing.M) { awstest.Main(m, &moto) }

// bootstrap runs the command on moto, as `make bootstrap` and its siblings run it on a stack.
func bootstrap(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), args, &out); err != nil {
		t.Fatalf("bootstrap %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

var (
	bearer  = regexp.MustCompile(`Bearer (lb_[A-Za-z0-9_-]+)`)
	created = regexp.MustCompile(`(?m)^Created (cred_\S+) `)
	space   = regexp.MustCompile(`Created space (sp_\S+):`)
	yours   = regexp.MustCompile(`Your token[^\n]*\n\n  (lb_\S+)`)
)

// TestBootstrapHandsAgentsNoPersonKey: make bootstrap makes the owner's credential and an
// agent's, and its claude mcp add, Cursor and VS Code lines carry the agent's, never the owner's;
// make teammate makes a person's; make tokens lists them with role, name, created and last used;
// make revoke ends one.
func TestBootstrapHandsAgentsNoPersonKey(t *testing.T) {
	for k, v := range map[string]string{"AWS_ENDPOINT_URL": moto.URL, "AWS_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_PROFILE": "", "AWS_CONFIG_FILE": "/dev/null"} {
		t.Setenv(k, v)
	}
	ctx := context.Background()
	table := awstest.Name("bootstrap")
	if err := dynamo.CreateTable(ctx, moto.DynamoDB(), table); err != nil {
		t.Fatal(err)
	}
	store := dynamo.New(moto.DynamoDB(), table)
	g := &gate.Gate{Credentials: store}

	out := bootstrap(t, "--table", table, "--name", "ada", "--url", "https://inbox.example/", "--mcp", "https://inbox.example/mcp")
	sp, owner := space.FindStringSubmatch(out), yours.FindStringSubmatch(out)
	if sp == nil || owner == nil {
		t.Fatalf("bootstrap printed no space or owner token:\n%s", out)
	}
	lines := bearer.FindAllStringSubmatch(out, -1)
	if len(lines) != 3 {
		t.Fatalf("%d agent lines with a token, want 3 (Claude Code, Cursor, VS Code):\n%s", len(lines), out)
	}
	agent := lines[0][1]
	for _, l := range lines {
		if l[1] != agent || l[1] == owner[1] {
			t.Fatalf("the agent lines carry the owner's token, or different tokens:\n%s", out)
		}
	}
	for _, want := range []string{
		`claude mcp add --transport http loopback https://inbox.example/mcp --header "Authorization: Bearer ` + agent + `"`,
		`"loopback": {"url": "https://inbox.example/mcp", "headers": {"Authorization": "Bearer ` + agent + `"}}`,
		`"loopback": {"type": "http", "url": "https://inbox.example/mcp", "headers": {"Authorization": "Bearer ` + agent + `"}}`,
		"Inbox:  https://inbox.example/#token=" + owner[1],
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bootstrap did not print %s:\n%s", want, out)
		}
	}
	if n := strings.Count(out, owner[1]); n != 2 { // "Your token" and the inbox link only
		t.Errorf("the owner's token is printed %d times, want 2:\n%s", n, out)
	}
	if c, err := g.CheckPerson(ctx, owner[1]); err != nil || c.Role != ask.RoleOwner || c.Space != sp[1] {
		t.Errorf("the owner's token: %+v %v", c, err)
	}
	a, err := g.Check(ctx, agent)
	if err != nil || a.Role != ask.RoleAgent || a.Person.Name != "ada" || a.Space != sp[1] {
		t.Fatalf("the agent's token: %+v %v; want an agent of ada's", a, err)
	}
	if _, err := g.CheckPerson(ctx, agent); ask.ErrorCode(err) != ask.EForbidden {
		t.Errorf("the agent's token opens the person's API: %v", err)
	}

	out = bootstrap(t, "--table", table, "--space", sp[1], "--person", "--name", "grace", "--url", "https://inbox.example/")
	link := regexp.MustCompile(`#token=(lb_\S+)`).FindStringSubmatch(out)
	if link == nil {
		t.Fatalf("make teammate printed no sign-in link:\n%s", out)
	}
	if c, err := g.CheckPerson(ctx, link[1]); err != nil || c.Role != ask.RolePerson || c.Actor.Name != "grace" || c.Space != sp[1] {
		t.Errorf("the teammate's token: %+v %v", c, err)
	}

	list := bootstrap(t, "--table", table, "--space", sp[1], "--list")
	rows := strings.Split(strings.TrimSpace(list), "\n")
	if len(rows) != 4 || !strings.HasPrefix(rows[0], "ID") || !strings.Contains(rows[0], "ROLE") || !strings.Contains(rows[0], "CREATED") || !strings.Contains(rows[0], "LAST USED") {
		t.Fatalf("make tokens:\n%s", list)
	}
	for _, want := range []string{"owner", "agent", "person"} {
		if !strings.Contains(list, " "+want+" ") {
			t.Errorf("make tokens shows no %s credential:\n%s", want, list)
		}
	}
	if strings.Contains(list, "lb_") {
		t.Errorf("make tokens shows a token:\n%s", list)
	}

	// Had the agent been connected with MCP OAuth, its tokens go with it.
	oauthToken := &ask.OAuthToken{Hash: []byte("a refresh token's hash"), Kind: ask.RefreshToken, Space: sp[1], CredentialID: a.ID,
		ClientID: "client_x", Resource: "https://x/mcp", Scope: "mcp", CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}
	if err := store.CreateOAuthToken(ctx, oauthToken); err != nil {
		t.Fatal(err)
	}
	bootstrap(t, "--table", table, "--space", sp[1], "--revoke", a.ID)
	if _, err := g.Check(ctx, agent); ask.ErrorCode(err) != ask.EUnauthorized {
		t.Errorf("the revoked agent's token: %v", err)
	}
	if _, err := store.OAuthTokenByHash(ctx, oauthToken.Hash); !errors.Is(err, ask.ErrNotFound) {
		t.Errorf("the revoked agent's OAuth refresh token: %v, want it deleted", err)
	}
	if created.FindString(out) == "" {
		t.Errorf("make teammate named no credential id:\n%s", out)
	}
}
