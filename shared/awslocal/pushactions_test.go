package awslocal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awslocal"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/awstest"
	"github.com/loopback-hq/loopback/shared/dynamo"
	"github.com/loopback-hq/loopback/shared/push/pushtest"
	"github.com/loopback-hq/loopback/shared/testwait"
)

// TestDeploymentPushActions: answers from the notification through template.yaml's functions,
// each held to its policy: the stream fan-out signs each button's link with the action key it
// reads from SSM; the link POSTed over real HTTP (no bearer token, as the service worker sends
// it) answers the ask through push; the fan-out then sends the silent "answered" update; quiet
// hours set through the api-push function keep the next ask from ringing.
func TestDeploymentPushActions(t *testing.T) {
	ctx := context.Background()
	d, base, table := startDeployment(t, "awslocal-pushact", awslocal.Options{StackName: awstest.Name("pushact"), PushLoopback: true})
	const space = "sp_localpushact"
	store := dynamo.New(moto.DynamoDB(), table)
	token, _, err := awsrt.Bootstrap(ctx, store, space, "ada")
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path, bearer string, body []byte) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	_, body := call("GET", "/api/v1/push/key", token, nil)
	var k struct{ PublicKey string }
	json.Unmarshal(body, &k)
	ps := pushtest.NewService(t)
	phone, _ := pushtest.NewBrowser()
	endpoint := ps.SubscribeWithKey(phone, k.PublicKey)
	sub, _ := json.Marshal(map[string]any{"endpoint": endpoint, "keys": map[string]string{"p256dh": phone.P256dh(), "auth": phone.Auth()}})
	if status, body := call("POST", "/api/v1/push/subscriptions", token, sub); status != 201 {
		t.Fatalf("POST /api/v1/push/subscriptions = %d %s", status, body)
	}

	svc := ask.NewService(store)
	a, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "Roll back?", Project: "billing-service",
		Options: []ask.Choice{{Label: "Roll back"}, {Label: "Keep"}}}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	n, err := ps.WaitFor(t, endpoint, 1, 20*time.Second)[0].Notice()
	if err != nil || n.AskID != a.ID || len(n.Actions) != 2 {
		t.Fatalf("the notice: %+v %v", n, err)
	}
	if status, body := call("POST", n.Actions[0].URL, "", []byte(`{"choice":0}`)); status != 200 {
		t.Fatalf("POST the action link = %d %s", status, body)
	}
	got, err := svc.Find(ctx, space, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if last := got.Thread[len(got.Thread)-1]; got.Status != ask.Closed || last.Via != ask.SurfacePush || last.Reply.Selected[0] != "Roll back" {
		t.Fatalf("the answer: %s %+v", got.Status, last)
	}
	update, err := ps.WaitFor(t, endpoint, 2, 20*time.Second)[1].Notice()
	if err != nil || update.Answered == nil || update.Answered.Via != "push" {
		t.Fatalf("the update: %+v %v", update, err)
	}

	now := time.Now().UTC()
	quiet := `{"start":"` + now.Add(-time.Minute).Format("15:04") + `","end":"` + now.Add(-2*time.Minute).Format("15:04") + `","timeZone":"UTC"}`
	if status, body := call("PUT", "/api/v1/push/quiet-hours", token, []byte(quiet)); status != 200 {
		t.Fatalf("PUT quiet hours = %d %s", status, body)
	}
	if status, _ := call("GET", "/api/v1/push/quiet-hours", token, nil); status != 200 {
		t.Fatalf("GET quiet hours = %d", status)
	}
	if _, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "At night?", Project: "billing-service"}, ask.Origin{Space: space}); err != nil {
		t.Fatal(err)
	}
	// The fan-out has handled the ask's three changes (the first ask opened and answered, this
	// one opened): each invocation returns once its pushes are sent or judged.
	testwait.Eventually(t, "the stream fan-out to handle the night's ask", func() bool {
		handled, _ := d.Pump.Counts()
		return handled >= 3
	})
	// Then cleared: the next ask rings, and it is the phone's third push (none came between).
	if status, _ := call("DELETE", "/api/v1/push/quiet-hours", token, nil); status != 204 {
		t.Fatalf("DELETE quiet hours = %d", status)
	}
	c, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "In the morning?", Project: "billing-service"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the morning's ask to be pushed", func() bool { return len(ps.Received(endpoint)) >= 3 })
	if third, err := ps.Received(endpoint)[2].Notice(); err != nil || third.AskID != c.ID {
		t.Errorf("the third push: %+v %v, want the ask after the quiet hours (none for the one during them)", third, err)
	}
	for id, calls := range d.Calls {
		if m := calls.Missing(); len(m) > 0 {
			t.Errorf("%s used %v, which template.yaml does not allow it", id, m)
		}
	}
	if used := d.Calls["StreamFanoutFunction"].Used(); !slices.Contains(used, "ssm:GetParameter") {
		t.Errorf("StreamFanoutFunction's calls = %v", used)
	}
}
