package awsrt_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/awstest"
	"github.com/loopback-hq/loopback/shared/push/pushtest"
)

// TestServerlessWebPush: Web Push on the AWS path, on moto. make bootstrap's EnsureVAPID keeps the
// key pair in SSM (made once); the api-push handler serves the public key and stores a device's
// subscription; an ask that opens reaches the stream fan-out, which pushes it to the device
// through the stand-in push service (VAPID checked against the key the device subscribed with,
// the payload decrypted with the device's keys), once although the stream delivers the batch
// again; a push service's 429 is retried; its 410 forgets the subscription.
func TestServerlessWebPush(t *testing.T) {
	ctx := context.Background()
	prefix := "/loopback/" + awstest.Name("push") + "/vapid"
	keys, created, err := awsrt.EnsureVAPID(ctx, ssm.NewFromConfig(moto.Config()), prefix)
	if err != nil || !created {
		t.Fatalf("EnsureVAPID: %v, created %v", err, created)
	}
	if again, created, err := awsrt.EnsureVAPID(ctx, ssm.NewFromConfig(moto.Config()), prefix); err != nil || created || again != keys {
		t.Fatalf("EnsureVAPID a second time made new keys (%v, %v)", created, err)
	}
	d := deployWith(t, func(e *awsrt.Env) { e.VAPIDParameter, e.PushLoopback = prefix, true })
	const space = "sp_push"
	owner := d.owner(t, space, "ada")

	res := callAPI(t, d.rt, "GET", "/api/v1/push/key", owner, nil)
	var k struct{ PublicKey string }
	if json.Unmarshal(res.Body, &k); res.Status != http.StatusOK || k.PublicKey != keys.PublicKey {
		t.Fatalf("GET /push/key = %d %s", res.Status, res.Body)
	}
	ps := pushtest.NewService(t)
	phone, _ := pushtest.NewBrowser()
	endpoint := ps.SubscribeWithKey(phone, k.PublicKey)
	body, _ := json.Marshal(map[string]any{"endpoint": endpoint, "keys": map[string]string{"p256dh": phone.P256dh(), "auth": phone.Auth()}})
	if res := callAPI(t, d.rt, "POST", "/api/v1/push/subscriptions", owner, body, "Content-Type", "application/json"); res.Status != http.StatusCreated {
		t.Fatalf("subscribing = %d %s", res.Status, res.Body)
	}

	a, err := d.rt.Service.AskQuestion(ctx, ask.QuestionInput{Question: "Ship it from the cloud?", Project: "aws-push"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	got := ps.WaitFor(t, endpoint, 1, 15*time.Second)[0]
	var n ask.PushNotice
	if err := json.Unmarshal(got.Payload, &n); err != nil || n.AskID != a.ID || n.Title != "aws-push asks" || n.URL != "/asks/"+a.ID {
		t.Fatalf("the pushed notice: %s (%v)", got.Payload, err)
	}
	if f := ps.Failures(); len(f) != 0 {
		t.Fatalf("the push service refused: %v", f)
	}

	// Lambda hands a batch again (a timeout, a crash, a bisected retry): every batch the fan-out
	// has had so far, once more. The change was pushed; it is not pushed again.
	d.mu.Lock()
	again := slices.Clone(d.delivered)
	d.mu.Unlock()
	for _, ev := range again {
		if _, err := d.stream(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	// An invocation returns once its pushes are sent (pushBatch.wait), and the push service counts
	// a request before it answers: a second push would be counted by now.
	if n := ps.Requests(endpoint); n != 1 {
		t.Fatalf("%d push requests after the stream delivered the batch again, want 1 (once per change)", n)
	}

	// A push service that throttles: the push is retried after its Retry-After, and arrives.
	ps.Throttle(endpoint, 1)
	if _, err := d.rt.Service.AskQuestion(ctx, ask.QuestionInput{Question: "Throttled?", Project: "aws-push"}, ask.Origin{Space: space}); err != nil {
		t.Fatal(err)
	}
	if got := ps.WaitFor(t, endpoint, 2, 15*time.Second); len(got) != 2 || ps.Requests(endpoint) != 3 {
		t.Fatalf("after a 429: %d delivered in %d requests, want 2 in 3", len(got), ps.Requests(endpoint))
	}

	ps.Gone(endpoint)
	if _, err := d.rt.Service.AskQuestion(ctx, ask.QuestionInput{Question: "And again?", Project: "aws-push"}, ask.Origin{Space: space}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the gone subscription is forgotten", func() bool {
		subs, err := d.rt.Store.PushSubscriptions(ctx, space)
		return err == nil && len(subs) == 0
	})
}

// TestServerlessRevokedDevicesHearNothing: on the AWS path too, a teammate revoked (as `make
// revoke` does it) is pushed nothing more by the stream fan-out, and her devices are forgotten.
func TestServerlessRevokedDevicesHearNothing(t *testing.T) {
	ctx := context.Background()
	prefix := "/loopback/" + awstest.Name("push") + "/vapid"
	keys, _, err := awsrt.EnsureVAPID(ctx, ssm.NewFromConfig(moto.Config()), prefix)
	if err != nil {
		t.Fatal(err)
	}
	d := deployWith(t, func(e *awsrt.Env) { e.VAPIDParameter, e.PushLoopback = prefix, true })
	const space = "sp_push_revoke"
	owner := d.owner(t, space, "ada")
	grace, graceCred, err := awsrt.AddPerson(ctx, d.rt.Store, space, "grace")
	if err != nil {
		t.Fatal(err)
	}
	ps := pushtest.NewService(t)
	endpoints := map[string]string{}
	for who, token := range map[string]string{"ada": owner, "grace": grace} {
		b, _ := pushtest.NewBrowser()
		endpoints[who] = ps.SubscribeWithKey(b, keys.PublicKey)
		body, _ := json.Marshal(map[string]any{"endpoint": endpoints[who], "keys": map[string]string{"p256dh": b.P256dh(), "auth": b.Auth()}})
		if res := callAPI(t, d.rt, "POST", "/api/v1/push/subscriptions", token, body); res.Status != http.StatusCreated {
			t.Fatalf("subscribing %s = %d %s", who, res.Status, res.Body)
		}
	}
	if _, err := d.rt.Service.AskQuestion(ctx, ask.QuestionInput{Question: "Before she leaves?", Project: "aws-push"}, ask.Origin{Space: space}); err != nil {
		t.Fatal(err)
	}
	ps.WaitFor(t, endpoints["ada"], 1, 15*time.Second)
	ps.WaitFor(t, endpoints["grace"], 1, 15*time.Second)

	if err := d.rt.Service.Revoke(ctx, d.rt.Store, d.rt.Store, space, graceCred.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := d.rt.Service.AskQuestion(ctx, ask.QuestionInput{Question: "After she left?", Project: "aws-push"}, ask.Origin{Space: space}); err != nil {
		t.Fatal(err)
	}
	ps.WaitFor(t, endpoints["ada"], 2, 15*time.Second)
	eventually(t, "the revoked teammate's device is forgotten", func() bool {
		subs, err := d.rt.Store.PushSubscriptions(ctx, space)
		return err == nil && len(subs) == 1 && subs[0].Endpoint == endpoints["ada"]
	})
	if n := len(ps.Received(endpoints["grace"])); n != 1 {
		t.Errorf("the revoked teammate's device got %d pushes, want 1 (the one before the revoke)", n)
	}
}
