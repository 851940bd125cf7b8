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

// TestDeploymentPush: Web Push through template.yaml's functions, each with only the calls its
// policy allows: the api-push function serves the key and stores a device over real HTTP; an
// ask's INSERT on the table reaches the stream fan-out, which claims the change, reads the VAPID
// private key and pushes to the stand-in push service (which checks the VAPID JWT and decrypts
// the payload); its 429 is retried; its 410 forgets the device. The tests' switch lets pushes
// reach the stand-in on 127.0.0.1 (Options.PushLoopback).
func TestDeploymentPush(t *testing.T) {
	ctx := context.Background()
	d, base, table := startDeployment(t, "awslocal-push", awslocal.Options{StackName: awstest.Name("push"), PushLoopback: true})

	const space = "sp_localpush"
	store := dynamo.New(moto.DynamoDB(), table)
	token, _, err := awsrt.Bootstrap(ctx, store, space, "ada")
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path string, body []byte) (int, []byte) {
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

	status, body := call("GET", "/api/v1/push/key", nil)
	var k struct{ PublicKey string }
	if json.Unmarshal(body, &k); status != 200 || k.PublicKey == "" {
		t.Fatalf("GET /api/v1/push/key = %d %s", status, body)
	}
	ps := pushtest.NewService(t)
	phone, _ := pushtest.NewBrowser()
	endpoint := ps.SubscribeWithKey(phone, k.PublicKey)
	sub, _ := json.Marshal(map[string]any{"endpoint": endpoint, "keys": map[string]string{"p256dh": phone.P256dh(), "auth": phone.Auth()}})
	if status, body := call("POST", "/api/v1/push/subscriptions", sub); status != 201 {
		t.Fatalf("POST /api/v1/push/subscriptions = %d %s", status, body)
	}

	// The asks are written to the table as an agent's call writes them; the stream does the rest.
	svc := ask.NewService(store)
	open := func(q string) *ask.Ask {
		t.Helper()
		a, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: q, Project: "billing-service"}, ask.Origin{Space: space})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := open("Should the webhook retry with backoff?")
	var n ask.PushNotice
	if got := ps.WaitFor(t, endpoint, 1, 20*time.Second); json.Unmarshal(got[0].Payload, &n) != nil || n.AskID != a.ID || n.Title != "billing-service asks" {
		t.Fatalf("the pushed notice: %s", got[0].Payload)
	}
	ps.Throttle(endpoint, 1)
	open("Throttled?")
	if got := ps.WaitFor(t, endpoint, 2, 20*time.Second); len(got) != 2 || ps.Requests(endpoint) != 3 {
		t.Fatalf("after a 429: %d delivered in %d requests, want 2 in 3", len(got), ps.Requests(endpoint))
	}
	ps.Gone(endpoint)
	open("Gone?")
	testwait.Eventually(t, "the gone subscription to be forgotten", func() bool {
		subs, err := store.PushSubscriptions(ctx, space)
		return err == nil && len(subs) == 0
	})
	if f := ps.Failures(); len(f) != 0 {
		t.Errorf("the push service refused: %v", f)
	}

	for id, calls := range d.Calls {
		if m := calls.Missing(); len(m) > 0 {
			t.Errorf("%s used %v, which template.yaml does not allow it", id, m)
		}
	}
	used := d.Calls["StreamFanoutFunction"].Used()
	for _, want := range []string{"ssm:GetParameter", "dynamodb:UpdateItem", "dynamodb:DeleteItem"} {
		if !slices.Contains(used, want) {
			t.Errorf("StreamFanoutFunction's calls = %v, want %s among them (the VAPID key, the claim, the forgotten device)", used, want)
		}
	}
}
