package awslocal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awslocal"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/awstest"
	"github.com/loopback-hq/loopback/shared/dynamo"
	"github.com/loopback-hq/loopback/shared/slack"
	"github.com/loopback-hq/loopback/shared/slack/slacktest"
	"github.com/loopback-hq/loopback/shared/testwait"
)

// TestDeploymentSlack: Slack through template.yaml's functions, each with only the calls its
// policy allows, the Slack app's secrets in SSM and the stand-in Slack as the Web API. A person
// links with a code from the API and a signed `/loopback link` (SlackAppFunction); an agent's
// blocking ask_question through the MCP function URL is posted to the person's DM by the stream
// fan-out; a signed block_actions click through the HTTP API answers it before the ack (timed),
// the waiting agent gets the answer, the fan-out updates the message in place, and a second click
// is told "already answered". Unsigned, stale and wrong-secret requests are refused. An
// escalation (the sweeper's) is posted to a linked teammate and the space's channel. The OAuth
// install keeps the bot token it gets, for a person only, once per state.
func TestDeploymentSlack(t *testing.T) {
	ctx := context.Background()
	st := slacktest.New()
	t.Cleanup(st.Close)
	st.AddUser(slacktest.User{ID: "UADA", Name: "ada", RealName: "Ada Lovelace"})
	stack := awstest.Name("slack")
	d, base, table := startDeployment(t, "awslocal-slack", awslocal.Options{StackName: stack, SlackAPIURL: st.APIURL(),
		Parameters: map[string]string{"Slack": "on"}})

	// Whoever deploys puts the app's secrets in SSM (docs/slack.md).
	const secret = "signing-secret-of-the-app"
	params := ssm.NewFromConfig(moto.Config())
	for name, value := range map[string]string{"/bot-token": st.BotToken, "/signing-secret": secret} {
		if _, err := params.PutParameter(ctx, &ssm.PutParameterInput{Name: aws.String("/loopback/" + stack + "/slack" + name),
			Value: aws.String(value), Type: ssmtypes.ParameterTypeSecureString}); err != nil {
			t.Fatal(err)
		}
	}

	const space = "sp_localslack"
	store := dynamo.New(moto.DynamoDB(), table)
	person, ada, err := awsrt.Bootstrap(ctx, store, space, "Ada")
	if err != nil {
		t.Fatal(err)
	}
	agentToken, _, err := awsrt.AddAgent(ctx, store, space, "claude")
	if err != nil {
		t.Fatal(err)
	}

	// The Settings say Slack is connected; the person makes a code and sends it in Slack.
	call := func(method, path, token string, body []byte) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	if status, body := call("GET", "/api/v1/slack", person, nil); status != 200 || !strings.Contains(string(body), `"connected":true`) {
		t.Fatalf("GET /api/v1/slack = %d %s", status, body)
	}
	status, body := call("POST", "/api/v1/slack/codes", person, nil)
	var code struct{ Code string }
	if json.Unmarshal(body, &code); status != 201 || code.Code == "" {
		t.Fatalf("POST /api/v1/slack/codes = %d %s", status, body)
	}
	signed := slacktest.Signed{Secret: secret}
	link := func(user, code string) {
		t.Helper()
		res, err := signed.Command(base+slack.PathCommands, user, "link "+code)
		if err != nil {
			t.Fatal(err)
		}
		var linked struct{ Text string }
		json.NewDecoder(res.Body).Decode(&linked)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.HasPrefix(linked.Text, "Linked") {
			t.Fatalf("/loopback link: %d %q", res.StatusCode, linked.Text)
		}
	}
	link("UADA", code.Code)

	// The agent asks and waits, through the MCP function URL.
	tr, err := transport.NewStreamableHTTP(base+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + agentToken}))
	if err != nil {
		t.Fatal(err)
	}
	agent := client.NewClient(tr)
	t.Cleanup(func() { agent.Close() })
	if err := agent.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "slack-test", Version: "1"}
	if _, err := agent.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	var req mcp.CallToolRequest
	req.Params.Name = "ask_question"
	req.Params.Arguments = map[string]any{"question": "Ship it?", "project": "billing", "options": []map[string]any{{"label": "Yes"}, {"label": "No"}}}
	req.Params.Meta = &mcp.Meta{ProgressToken: "slack-1"}
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan result, 1)
	callCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	go func() { r, err := agent.CallTool(callCtx, req); done <- result{r, err} }()

	// The stream fan-out posts it to Ada's DM.
	var m slacktest.Message
	testwait.Eventually(t, "the ask posted to Slack", func() bool {
		for _, x := range st.Messages() {
			if strings.Contains(string(x.Blocks), "Ship it?") {
				m = x
				return true
			}
		}
		return false
	})
	id := regexp.MustCompile(`"action_id":"lb\.choice\.1","value":"([^"]+)"|"value":"([^"]+)","action_id":"lb\.choice\.1"`).FindStringSubmatch(string(m.Blocks))
	if m.Channel != "DADA" || id == nil {
		t.Fatalf("posted to %s (want DADA): %s", m.Channel, m.Blocks)
	}
	askID := id[1] + id[2]

	click := func(sg slacktest.Signed) int {
		t.Helper()
		res, err := sg.Interaction(base+slack.PathInteractivity, slacktest.Click("UADA", m.Channel, m.TS, slack.ActionChoice+"1", askID))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	// Refused: no signature, one too old, one with another secret; the ask is unchanged.
	for name, sg := range map[string]slacktest.Signed{
		"unsigned": {Unsigned: true}, "stale": {Secret: secret, At: time.Now().Add(-6 * time.Minute)}, "wrong secret": {Secret: "another"},
	} {
		if code := click(sg); code != http.StatusUnauthorized {
			t.Errorf("a %s click: %d, want 401", name, code)
		}
	}

	// The click answers before the ack, within Slack's 3 s.
	started := time.Now()
	if code := click(signed); code != 200 {
		t.Fatalf("the click: %d", code)
	}
	ack := time.Since(started)
	t.Logf("the click's ack (the reply written before it) came after %s", ack)
	if ack > 3*time.Second {
		t.Errorf("the ack took %s, over Slack's 3 s", ack)
	}
	// Written before the ack: Lambda runs nothing after it.
	if a, err := ask.NewService(store).Find(ctx, space, askID); err != nil || a.Status != ask.Closed {
		t.Fatalf("the ask when the click was acknowledged: %+v %v, want it answered", a, err)
	}
	var r result
	select {
	case r = <-done:
	case <-callCtx.Done():
		t.Fatal("the agent's call did not return after the click")
	}
	if r.err != nil || r.res.IsError {
		t.Fatalf("ask_question: %v %+v", r.err, r.res)
	}
	raw, _ := json.Marshal(r.res.StructuredContent)
	if !strings.Contains(string(raw), `"selected":["No"]`) {
		t.Fatalf("the agent's answer: %s", raw)
	}
	a, err := ask.NewService(store).Find(ctx, space, askID)
	if err != nil {
		t.Fatal(err)
	}
	if e := a.Thread[len(a.Thread)-1]; a.Status != ask.Closed || e.Via != ask.SurfaceSlack || e.By == nil || e.By.Name != "Ada" {
		t.Fatalf("the ask: %s, via %q by %+v", a.Status, e.Via, e.By)
	}

	// The fan-out updates the message in place; a second click is told it was answered.
	testwait.Eventually(t, "the message says who answered", func() bool {
		for _, x := range st.Messages() {
			if x.TS == m.TS && len(x.Updates) > 0 {
				latest := string(x.Latest().Blocks)
				return strings.Contains(latest, "Answered by Ada in Slack") && !strings.Contains(latest, slack.ActionChoice)
			}
		}
		return false
	})
	if code := click(signed); code != 200 {
		t.Fatalf("the second click: %d", code)
	}
	if !slices.ContainsFunc(st.Ephemerals(), func(e slacktest.Ephemeral) bool {
		return e.User == "UADA" && strings.HasPrefix(e.Text, slack.MsgAlready+": Answered by Ada in Slack")
	}) {
		t.Fatalf("no 'already answered' for the second click: %+v", st.Ephemerals())
	}
	if again, _ := ask.NewService(store).Find(ctx, space, askID); len(again.Thread) != len(a.Thread) {
		t.Fatalf("the second click changed the ask")
	}

	// Escalation: a teammate linked too, and the space's escalation set; the sweeper (called here,
	// its minute shortened) escalates an ask nobody answered, and the fan-out posts it to the
	// teammate's DM and the escalation channel.
	teammate, _, err := awsrt.AddPerson(ctx, store, space, "Grace")
	if err != nil {
		t.Fatal(err)
	}
	st.AddUser(slacktest.User{ID: "UGRACE", Name: "grace", RealName: "Grace Hopper"})
	status, body = call("POST", "/api/v1/slack/codes", teammate, nil)
	if json.Unmarshal(body, &code); status != 201 {
		t.Fatalf("POST /api/v1/slack/codes = %d %s", status, body)
	}
	link("UGRACE", code.Code)
	if status, body := call("PUT", "/api/v1/settings/escalation", person, []byte(`{"afterMinutes":1,"toPeople":true,"slackChannel":"CESCALATE"}`)); status != 200 {
		t.Fatalf("PUT /api/v1/settings/escalation = %d %s", status, body)
	}
	// The ask as an agent's call writes it, its escalation due after one (shortened) minute.
	svc := ask.NewService(store)
	svc.Settings, svc.EscalationUnit = store, 100*time.Millisecond
	sweeper := d.Runtimes["SweeperFunction"] // its schedule's first run is a minute away
	if _, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "Roll back?", Project: "billing"}, ask.Origin{Space: space, RaisedBy: &ada.Person}); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the escalation posted to grace's DM and the channel", func() bool {
		if _, err := sweeper.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		where := map[string]bool{}
		for _, x := range st.Messages() {
			if strings.Contains(string(x.Blocks), "Roll back?") {
				where[x.Channel] = true
			}
		}
		return where["DADA"] && where["DGRACE"] && where["CESCALATE"]
	})

	// The OAuth install: only a person starts it; the callback takes its state once, exchanges
	// the code (the stand-in's oauth.v2.access checks the client id and secret) and keeps the
	// bot token in SSM.
	for name, p := range map[string]ssm.PutParameterInput{
		"/client-id":     {Value: aws.String(st.ClientID), Type: ssmtypes.ParameterTypeString},
		"/client-secret": {Value: aws.String(st.ClientSecret), Type: ssmtypes.ParameterTypeSecureString},
	} {
		p.Name = aws.String("/loopback/" + stack + "/slack" + name)
		if _, err := params.PutParameter(ctx, &p); err != nil {
			t.Fatal(err)
		}
	}
	botToken := aws.String("/loopback/" + stack + "/slack/bot-token")
	if _, err := params.DeleteParameter(ctx, &ssm.DeleteParameterInput{Name: botToken}); err != nil {
		t.Fatal(err)
	}
	if status, body := call("POST", slack.PathInstall, agentToken, nil); status != http.StatusForbidden {
		t.Fatalf("an agent's POST %s = %d %s, want 403", slack.PathInstall, status, body)
	}
	status, body = call("POST", slack.PathInstall, person, nil)
	var install struct{ URL string }
	if json.Unmarshal(body, &install); status != 200 || !strings.HasPrefix(install.URL, slack.AuthorizeURL+"?") {
		t.Fatalf("POST %s = %d %s", slack.PathInstall, status, body)
	}
	authorize, _ := url.Parse(install.URL)
	q := authorize.Query()
	if q.Get("client_id") != st.ClientID || q.Get("redirect_uri") != base+slack.PathOAuthCallback || len(q.Get("state")) < 40 {
		t.Fatalf("the authorize address: %s", install.URL)
	}
	callback := func(query string) (int, string) {
		t.Helper()
		res, err := http.Get(base + slack.PathOAuthCallback + "?" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, forged := range []string{"code=" + st.OAuthCode, "code=" + st.OAuthCode + "&state=forged"} {
		if status, page := callback(forged); status != http.StatusBadRequest {
			t.Errorf("a callback with %s: %d %s, want 400", forged, status, page)
		}
	}
	if _, err := params.GetParameter(ctx, &ssm.GetParameterInput{Name: botToken}); err == nil {
		t.Fatal("a forged callback stored a bot token")
	}
	good := url.Values{"code": {st.OAuthCode}, "state": {q.Get("state")}}.Encode()
	if status, page := callback(good); status != 200 || !strings.Contains(page, "installed") {
		t.Fatalf("the callback: %d %s", status, page)
	}
	kept, err := params.GetParameter(ctx, &ssm.GetParameterInput{Name: botToken, WithDecryption: aws.Bool(true)})
	if err != nil || aws.ToString(kept.Parameter.Value) != st.BotToken || kept.Parameter.Type != ssmtypes.ParameterTypeSecureString {
		t.Fatalf("the bot token kept: %+v %v", kept, err)
	}
	if status, page := callback(good); status != http.StatusBadRequest {
		t.Errorf("the same state again: %d %s, want 400", status, page)
	}

	for id, calls := range d.Calls {
		if m := calls.Missing(); len(m) > 0 {
			t.Errorf("%s used %v, which template.yaml does not allow it", id, m)
		}
	}
	for fn, want := range map[string]string{"SlackAppFunction": "ssm:GetParameter", "StreamFanoutFunction": "dynamodb:PutItem", "SlackInstallFunction": "ssm:PutParameter"} {
		if used := d.Calls[fn].Used(); !slices.Contains(used, want) {
			t.Errorf("%s's calls = %v, want %s among them", fn, used, want)
		}
	}
}
