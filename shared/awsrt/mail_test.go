package awsrt_test

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/awstest"
)

// sesMessage is what moto records of an email sent through SES (its ses backend's Message, read
// from moto's /moto-api/data.json): with simple content it keeps the HTML body.
type sesMessage struct {
	ID           string              `json:"id"`
	Source       string              `json:"source"`
	Subject      string              `json:"subject"`
	Body         string              `json:"body"`
	Destinations map[string][]string `json:"destinations"`
}

func sesMessages(t *testing.T, subject string) []sesMessage {
	t.Helper()
	res, err := http.Get(moto.URL + "/moto-api/data.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var data map[string]map[string][]sesMessage
	if err := json.Unmarshal(b, &data); err != nil {
		t.Fatalf("moto's data.json: %v", err)
	}
	var out []sesMessage
	for _, m := range data["ses"]["Message"] {
		if m.Subject == subject {
			out = append(out, m)
		}
	}
	return out
}

// TestServerlessAnswerFromEmail: email on the AWS path, on moto. make bootstrap's
// EnsureActionKey keeps the action key in SSM (made once); SES refuses a sender that is not a
// verified identity, so the test verifies it as a deployment must; the owner sets their address
// through the API; an ask that opens reaches the stream fan-out, which mails its notice through
// SES once although the stream delivers the batch again; the notice's link answers through the
// actions API on POST only, recorded as via email; a second POST is refused.
func TestServerlessAnswerFromEmail(t *testing.T) {
	ctx := context.Background()
	name := "/loopback/" + awstest.Name("mail") + "/action-key"
	key, created, err := awsrt.EnsureActionKey(ctx, ssm.NewFromConfig(moto.Config()), name)
	if err != nil || !created || len(key) < ask.MinActionKey {
		t.Fatalf("EnsureActionKey: %v, created %v", err, created)
	}
	if again, created, err := awsrt.EnsureActionKey(ctx, ssm.NewFromConfig(moto.Config()), name); err != nil || created || string(again) != string(key) {
		t.Fatalf("EnsureActionKey a second time made a new key (%v, %v)", created, err)
	}
	sender := awstest.Name("loopback") + "@example.com"
	if _, err := sesv2.NewFromConfig(moto.Config()).CreateEmailIdentity(ctx, &sesv2.CreateEmailIdentityInput{EmailIdentity: aws.String(sender)}); err != nil {
		t.Fatal(err)
	}
	d := deployWith(t, func(e *awsrt.Env) {
		e.ActionKeyParameter, e.MailFrom, e.PublicURL = name, "Loopback <"+sender+">", "https://inbox.example"
	})
	const space = "sp_mail"
	owner := d.owner(t, space, "ada")
	if res := callAPI(t, d.rt, "PUT", "/api/v1/settings/mail", owner, []byte(`{"email":"ada@example.com"}`), "Content-Type", "application/json"); res.Status != http.StatusOK {
		t.Fatalf("PUT /settings/mail = %d %s", res.Status, res.Body)
	}

	project := awstest.Name("aws-mail")
	a, err := d.rt.Service.AskQuestion(ctx, ask.QuestionInput{Question: "Ship it from the cloud?", Project: project,
		Options: []ask.Choice{{Label: "Yes"}, {Label: "No"}}}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	subject := project + " asks: Ship it from the cloud?"
	eventually(t, "SES has the notice", func() bool { return len(sesMessages(t, subject)) == 1 })
	m := sesMessages(t, subject)[0]
	if !strings.Contains(m.Source, sender) || !slices.Equal(m.Destinations["ToAddresses"], []string{"ada@example.com"}) {
		t.Fatalf("SES message %+v", m)
	}
	links := regexp.MustCompile(`href="https://inbox\.example/act#([^"]+)"[^>]*>(Yes|No)<`).FindAllStringSubmatch(m.Body, -1)
	if len(links) != 2 || links[0][2] != "Yes" || !strings.Contains(m.Body, `href="https://inbox.example/asks/`+a.ID+`"`) {
		t.Fatalf("links %q in\n%s", links, m.Body)
	}
	yes := html.UnescapeString(links[0][1])

	// The stream delivers the batches again: the notice is not sent again.
	d.mu.Lock()
	again := slices.Clone(d.delivered)
	d.mu.Unlock()
	for _, ev := range again {
		if _, err := d.stream(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(sesMessages(t, subject)); n != 1 {
		t.Fatalf("%d notices after the stream delivered the batch again, want 1", n)
	}

	for range 2 {
		res := callAPI(t, d.rt, "GET", "/api/v1/actions/"+yes, "", nil)
		if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"status":"awaiting_human"`) {
			t.Fatalf("GET the action = %d %s", res.Status, res.Body)
		}
	}
	if got, _ := d.rt.Service.Find(ctx, space, a.ID); got.Status != ask.AwaitingHuman {
		t.Fatal("a GET answered")
	}
	res := callAPI(t, d.rt, "POST", "/api/v1/actions/"+yes, "", []byte(`{}`), "Content-Type", "application/json")
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), "in email") {
		t.Fatalf("POST the action = %d %s", res.Status, res.Body)
	}
	got, _ := d.rt.Service.Find(ctx, space, a.ID)
	if e := got.Thread[len(got.Thread)-1]; got.Status != ask.Closed || e.Via != ask.SurfaceEmail || e.Reply.Selected[0] != "Yes" {
		t.Fatalf("after the POST: %+v", got)
	}
	res = callAPI(t, d.rt, "POST", "/api/v1/actions/"+yes, "", []byte(`{}`), "Content-Type", "application/json")
	if res.Status != http.StatusConflict || !strings.Contains(string(res.Body), "Answered by ada in email") {
		t.Fatalf("a second POST = %d %s", res.Status, res.Body)
	}
}
