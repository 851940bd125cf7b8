package awsrt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awslocal"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/awstest"
	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/push/pushtest"
)

// TestServerlessPushActions: answers from the notification on the AWS path (issue 27), on moto.
// The stream fan-out pushes an ask with buttons whose links it signed with the action key in
// SSM for the device's person; one link POSTed (no bearer token, as the service worker does)
// answers the ask through push; the fan-out then tells the device, silently, who answered where;
// and during the person's quiet hours (set through the api-push handler) nothing rings.
func TestServerlessPushActions(t *testing.T) {
	ctx := context.Background()
	name := awstest.Name("pushact")
	vapid, actionKey := "/loopback/"+name+"/vapid", "/loopback/"+name+"/action-key"
	if _, _, err := awsrt.EnsureVAPID(ctx, ssm.NewFromConfig(moto.Config()), vapid); err != nil {
		t.Fatal(err)
	}
	if _, _, err := awsrt.EnsureActionKey(ctx, ssm.NewFromConfig(moto.Config()), actionKey); err != nil {
		t.Fatal(err)
	}
	d := deployWith(t, func(e *awsrt.Env) { e.VAPIDParameter, e.ActionKeyParameter, e.PushLoopback = vapid, actionKey, true })
	const space = "sp_pushact"
	owner := d.owner(t, space, "ada")

	res := callAPI(t, d.rt, "GET", "/api/v1/push/key", owner, nil)
	var k struct{ PublicKey string }
	json.Unmarshal(res.Body, &k)
	ps := pushtest.NewService(t)
	phone, _ := pushtest.NewBrowser()
	endpoint := ps.SubscribeWithKey(phone, k.PublicKey)
	body, _ := json.Marshal(map[string]any{"endpoint": endpoint, "keys": map[string]string{"p256dh": phone.P256dh(), "auth": phone.Auth()}})
	if res := callAPI(t, d.rt, "POST", "/api/v1/push/subscriptions", owner, body); res.Status != http.StatusCreated {
		t.Fatalf("subscribing = %d %s", res.Status, res.Body)
	}

	a, err := d.rt.Service.AskQuestion(ctx, ask.QuestionInput{Question: "Deploy from the cloud?", Project: "aws-push",
		Options: []ask.Choice{{Label: "Deploy"}, {Label: "Wait"}}}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	n, err := ps.WaitFor(t, endpoint, 1, 15*time.Second)[0].Notice()
	if err != nil {
		t.Fatal(err)
	}
	if n.AskID != a.ID || n.Group == "" || len(n.Actions) != 2 || n.Actions[1].Title != "Wait" {
		t.Fatalf("the notice: %+v", n)
	}
	// The service worker's POST: the link is the credential.
	res = callR4(t, d.rt, "POST", n.Actions[1].URL, "", []byte(`{"choice":0}`), "ActionView")
	if res.Status != http.StatusOK {
		t.Fatalf("POST %s = %d %s", n.Actions[1].URL[:40], res.Status, res.Body)
	}
	got, err := d.rt.Service.Find(ctx, space, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := got.Thread[len(got.Thread)-1]
	if got.Status != ask.Closed || last.Via != ask.SurfacePush || last.Reply == nil || last.Reply.Selected[0] != "Wait" {
		t.Fatalf("the answer: %s %+v", got.Status, last)
	}
	// The other button's link answers nothing more.
	if res := callR4(t, d.rt, "POST", n.Actions[0].URL, "", []byte(`{"choice":0}`), "Problem"); res.Status < 400 || res.Status >= 500 {
		t.Errorf("a second answer: %d %s", res.Status, res.Body)
	}
	update, err := ps.WaitFor(t, endpoint, 2, 15*time.Second)[1].Notice()
	if err != nil || update.AskID != a.ID || update.Answered == nil || update.Answered.Via != "push" || len(update.Actions) != 0 {
		t.Fatalf("the silent update: %+v %v", update, err)
	}

	// Quiet hours, all day but the minute before last: the next ask is not pushed.
	now := time.Now().UTC()
	quiet := `{"start":"` + now.Add(-time.Minute).Format("15:04") + `","end":"` + now.Add(-2*time.Minute).Format("15:04") + `","timeZone":"UTC"}`
	if res := callR4(t, d.rt, "PUT", "/api/v1/push/quiet-hours", owner, []byte(quiet), "QuietHours"); res.Status != http.StatusOK {
		t.Fatalf("PUT quiet hours = %d %s", res.Status, res.Body)
	}
	b, err := d.rt.Service.AskQuestion(ctx, ask.QuestionInput{Question: "At night?", Project: "aws-push"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	// The invocation that had the change has returned, its pushes sent or judged: none.
	d.streamed(t, b.ID)
	if n := ps.Requests(endpoint); n != 2 {
		t.Errorf("%d push requests, want 2 (none during the quiet hours)", n)
	}
	if f := ps.Failures(); len(f) != 0 {
		t.Errorf("the push service refused: %v", f)
	}
	if !strings.HasPrefix(n.Actions[0].URL, "/api/v1/actions/") {
		t.Errorf("a link: %s", n.Actions[0].URL)
	}
}

// callR4 is callAPI for revision 4's routes, which the revision the server writes (3, until
// revision 4 is frozen) does not declare: the body is checked against the model named instead.
func callR4(t *testing.T, rt *awsrt.Runtime, method, target, token string, body []byte, model string) apiResponse {
	t.Helper()
	r := httptest.NewRequest(method, target, bytes.NewReader(body))
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	r.Header.Set("Content-Type", "application/json")
	res, err := httpadapter.NewV2(rt.API()).ProxyWithContext(context.Background(), awslocal.APIRequest(r, body, "$default", nil, "api123"))
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	if err := contract.ValidateModel(model, []byte(res.Body)); err != nil {
		t.Errorf("%s %s → %d: not a %s: %v\n%s", method, target, res.StatusCode, model, err, res.Body)
	}
	return apiResponse{Status: res.StatusCode, Body: []byte(res.Body)}
}
