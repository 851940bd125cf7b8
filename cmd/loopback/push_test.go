package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/push"
	"github.com/loopback-hq/loopback/shared/push/pushtest"
)

// Web Push on the real binary: a device subscribes through the API; an ask that opens, and an
// agent's answer that hands the move back, are pushed to it through a stand-in push service that
// checks what a real one checks (the VAPID JWT against the key the device subscribed with, the
// aes128gcm encryption for the device's keys); the person's own replies are not; a push service's
// 410 forgets the subscription and its 429 is retried.

// subscribe registers a device for token's person and returns the subscription's id.
func (s *server) subscribe(t *testing.T, token, endpoint string, b *pushtest.Browser) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"endpoint": endpoint, "expirationTime": nil, "keys": map[string]string{"p256dh": b.P256dh(), "auth": b.Auth()}})
	r := s.do(t, "POST", "/api/v1/push/subscriptions", token, string(body))
	if r.status != 201 {
		t.Fatalf("subscribing: %d %s", r.status, r.body)
	}
	var out struct{ ID string }
	json.Unmarshal(r.body, &out)
	if !strings.HasPrefix(out.ID, "push_") {
		t.Fatalf("subscription id %q", out.ID)
	}
	return out.ID
}

func notice(t *testing.T, m pushtest.Message) ask.PushNotice {
	t.Helper()
	var n ask.PushNotice
	if err := json.Unmarshal(m.Payload, &n); err != nil {
		t.Fatalf("the push payload is not a PushNotice: %s", m.Payload)
	}
	return n
}

func TestWebPush(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken, PushLoopbackEnv: "1"})
	agentToken := s.agentToken(t)
	ps := pushtest.NewService(t)

	key := s.do(t, "GET", "/api/v1/push/key", ownerToken, "")
	var k struct{ PublicKey string }
	if json.Unmarshal(key.body, &k); key.status != 200 || len(k.PublicKey) < 80 {
		t.Fatalf("GET /push/key: %d %s", key.status, key.body)
	}
	if fi, err := os.Stat(filepath.Join(s.dir, "vapid.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the VAPID key pair is not kept in the data folder, mode 0600: %v %v", fi, err)
	}
	phone, _ := pushtest.NewBrowser()
	laptop, _ := pushtest.NewBrowser()
	phoneURL, laptopURL := ps.SubscribeWithKey(phone, k.PublicKey), ps.SubscribeWithKey(laptop, k.PublicKey)
	phoneID := s.subscribe(t, ownerToken, phoneURL, phone)
	if again := s.subscribe(t, ownerToken, phoneURL, phone); again != phoneID {
		t.Errorf("subscribing the same device again gave a second subscription")
	}
	_, teammate := s.createToken(t, "--person", "--name", "ada")
	s.subscribe(t, teammate, laptopURL, laptop) // every person of the space is told

	// An ask opens: both devices get it.
	c := s.agent(t, agentToken)
	call := askInBackground(t, c, map[string]any{"question": "Should the webhook retry with exponential backoff, or at a fixed delay?", "project": "billing-service"})
	got := notice(t, ps.WaitFor(t, phoneURL, 1, 10*time.Second)[0])
	if got.Title != "billing-service asks" || !strings.HasPrefix(got.Body, "Should the webhook retry") || got.Tag != "ask-"+got.AskID || got.URL != "/asks/"+got.AskID {
		t.Errorf("the notice: %+v", got)
	}
	m := ps.Received(phoneURL)[0]
	if m.Claims.Aud != ps.URL() || m.Claims.Sub != push.DefaultSubscriber || m.TTL <= 0 || m.Urgency != "high" || m.Topic != got.AskID {
		t.Errorf("the push request: %+v", m)
	}
	ps.WaitFor(t, laptopURL, 1, 10*time.Second)

	// The person asks back (their own move: no push); the agent answers (the move is theirs again: push).
	s.reply(t, ownerToken, got.AskID, `{"outcome":"follow_up","question":"What does the provider allow?"}`)
	call.wait(t)
	var answer mcp.CallToolRequest
	answer.Params.Name, answer.Params.Arguments = "answer_follow_up", map[string]any{"askId": got.AskID, "answer": "100 requests a minute"}
	startCall(t, c, answer)
	answered := notice(t, ps.WaitFor(t, phoneURL, 2, 10*time.Second)[1])
	if answered.AskID != got.AskID || !strings.Contains(answered.Title, "your move") || answered.Body != "100 requests a minute" {
		t.Errorf("the agent's answer: %+v", answered)
	}

	// A push service that says the device is gone: the subscription is forgotten. One that
	// throttles: the push is retried.
	ps.Gone(laptopURL)
	ps.Throttle(phoneURL, 1)
	agent2 := s.agent(t, agentToken)
	askInBackground(t, agent2, map[string]any{"question": "Second?", "project": "billing-service"})
	// The person's own reply pushed nothing: the phone's third push, which comes after it, is
	// the second ask's (a push for the reply would have come before it, or been that third).
	if third := notice(t, ps.WaitFor(t, phoneURL, 3, 15*time.Second)[2]); third.AskID == got.AskID || !strings.HasPrefix(third.Body, "Second?") {
		t.Errorf("the phone's third push: %+v, want the second ask's (none for the person's own reply)", third)
	}
	if n := ps.Requests(phoneURL); n != 4 {
		t.Errorf("%d requests to the phone, want 4 (the throttled one retried)", n)
	}
	_, db := s.seed(t)
	eventually(t, "the gone subscription is forgotten", func() bool {
		subs, err := db.PushSubscriptions(context.Background(), LocalSpace)
		return err == nil && len(subs) == 1 && subs[0].ID == phoneID
	})
	if f := ps.Failures(); len(f) != 0 {
		t.Errorf("the push service refused: %v", f)
	}

	// Unsubscribe.
	if r := s.do(t, "DELETE", "/api/v1/push/subscriptions/"+phoneID, ownerToken, ""); r.status != 204 {
		t.Errorf("DELETE: %d %s", r.status, r.body)
	}
	if r := s.do(t, "DELETE", "/api/v1/push/subscriptions/"+phoneID, ownerToken, ""); r.status != 404 {
		t.Errorf("DELETE again: %d", r.status)
	}
}

func TestPushSubscriptionRefusals(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken, PushLoopbackEnv: "1"})
	b, _ := pushtest.NewBrowser()
	good := map[string]string{"p256dh": b.P256dh(), "auth": b.Auth()}
	notOnCurve := "BA" + strings.Repeat("A", 85) // 65 bytes, not a point
	for _, tc := range []struct {
		name string
		body string
	}{
		{"not https", `{"endpoint":"http://push.example/x","keys":` + mustJSONString(good) + `}`},
		{"no endpoint", `{"keys":` + mustJSONString(good) + `}`},
		{"too long", `{"endpoint":"https://push.example/` + strings.Repeat("x", 2100) + `","keys":` + mustJSONString(good) + `}`},
		{"p256dh not a point", `{"endpoint":"https://push.example/x","keys":{"p256dh":"` + notOnCurve + `","auth":"` + b.Auth() + `"}}`},
		{"p256dh short", `{"endpoint":"https://push.example/x","keys":{"p256dh":"BAAA","auth":"` + b.Auth() + `"}}`},
		{"auth not 16 bytes", `{"endpoint":"https://push.example/x","keys":{"p256dh":"` + b.P256dh() + `","auth":"AAAA"}}`},
		{"not JSON", `{"endpoint":`},
	} {
		r := s.do(t, "POST", "/api/v1/push/subscriptions", ownerToken, tc.body)
		if r.status != 422 || r.problem(t) != ask.EPushInvalid {
			t.Errorf("%s: %d %s", tc.name, r.status, r.body)
		}
	}
	// An agent's credential may not subscribe the person's devices, nor read the key.
	agent := s.agentToken(t)
	for _, path := range []string{"/api/v1/push/key", "/api/v1/push/subscriptions"} {
		method := "GET"
		if strings.HasSuffix(path, "subscriptions") {
			method = "POST"
		}
		if r := s.do(t, method, path, agent, `{}`); r.status != 403 {
			t.Errorf("%s %s as the agent: %d", method, path, r.status)
		}
	}
	_, db := s.seed(t)
	if subs, _ := db.PushSubscriptions(context.Background(), LocalSpace); len(subs) != 0 {
		t.Errorf("refused subscriptions were stored: %d", len(subs))
	}
}

func mustJSONString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestRevokedDevicesHearNothing: a teammate who leaves (her credential revoked from another
// process) is pushed nothing more, and the devices she subscribed are forgotten; the owner's
// devices are still told.
func TestRevokedDevicesHearNothing(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken, PushLoopbackEnv: "1"})
	agentToken := s.agentToken(t)
	ps := pushtest.NewService(t)
	var k struct{ PublicKey string }
	json.Unmarshal(s.do(t, "GET", "/api/v1/push/key", ownerToken, "").body, &k)
	mine, hers := mustBrowser(t), mustBrowser(t)
	mineURL, hersURL := ps.SubscribeWithKey(mine, k.PublicKey), ps.SubscribeWithKey(hers, k.PublicKey)
	mineID := s.subscribe(t, ownerToken, mineURL, mine)
	adaID, ada := s.createToken(t, "--person", "--name", "ada")
	s.subscribe(t, ada, hersURL, hers)

	c := s.agent(t, agentToken)
	askInBackground(t, c, map[string]any{"question": "Before she leaves?", "project": "offboarding"})
	ps.WaitFor(t, mineURL, 1, 10*time.Second)
	ps.WaitFor(t, hersURL, 1, 10*time.Second)

	s.cli(t, "token", "revoke", adaID)
	askInBackground(t, s.agent(t, agentToken), map[string]any{"question": "After she left: the salaries?", "project": "offboarding"})
	ps.WaitFor(t, mineURL, 2, 10*time.Second)
	_, db := s.seed(t)
	eventually(t, "the revoked credential's device is forgotten", func() bool {
		subs, err := db.PushSubscriptions(context.Background(), LocalSpace)
		return err == nil && len(subs) == 1 && subs[0].ID == mineID
	})
	if n := len(ps.Received(hersURL)); n != 1 {
		t.Errorf("the revoked teammate's device got %d pushes, want 1 (the one before the revoke)", n)
	}
}

func mustBrowser(t *testing.T) *pushtest.Browser {
	t.Helper()
	b, err := pushtest.NewBrowser()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPushSubscriptionsBelongToTheirCredential: a device's subscription is its credential's. A
// teammate can neither remove the owner's (404, saying why) nor replace it with keys of her own
// (422, saying why), an agent is refused the route (403) and a revoked credential everything
// (401); the subscribing credential can do both. A subscription whose credential was revoked is
// anyone's to replace. One person keeps at most ask.MaxPushDevices devices: subscribing more
// forgets their oldest, and nobody else's.
func TestPushSubscriptionsBelongToTheirCredential(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken})
	_, db := s.seed(t)
	stored := func() map[string]*ask.PushSubscription {
		subs, err := db.PushSubscriptions(context.Background(), LocalSpace)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]*ask.PushSubscription{}
		for _, sub := range subs {
			m[sub.ID] = sub
		}
		return m
	}
	owner, _ := pushtest.NewBrowser()
	own := s.subscribe(t, ownerToken, "https://push.example/owner", owner)
	ownerCred := stored()[own].CredentialID
	_, teammate := s.createToken(t, "--person", "--name", "grace")
	agent := s.agentToken(t)
	revokedID, revoked := s.createToken(t, "--person", "--name", "gone")
	s.cli(t, "token", "revoke", revokedID)
	grace, _ := pushtest.NewBrowser()
	replace := mustJSONString(map[string]any{"endpoint": "https://push.example/owner", "keys": map[string]string{"p256dh": grace.P256dh(), "auth": grace.Auth()}})
	for _, tc := range []struct {
		who          string
		token        string
		del, replace int
		code         string
	}{
		{"a teammate", teammate, 404, 422, ask.EPushInvalid},
		{"an agent", agent, 403, 403, ask.EForbidden},
		{"a revoked credential", revoked, 401, 401, ask.EUnauthorized},
	} {
		if r := s.do(t, "DELETE", "/api/v1/push/subscriptions/"+own, tc.token, ""); r.status != tc.del {
			t.Errorf("%s removing the owner's device: %d %s", tc.who, r.status, r.body)
		} else if tc.del == 404 && !strings.Contains(string(r.body), "credential that subscribed it") {
			t.Errorf("%s removing the owner's device is refused without saying why: %s", tc.who, r.body)
		}
		if r := s.do(t, "POST", "/api/v1/push/subscriptions", tc.token, replace); r.status != tc.replace || r.problem(t) != tc.code {
			t.Errorf("%s replacing the owner's device: %d %s", tc.who, r.status, r.body)
		}
	}
	if sub := stored()[own]; sub == nil || sub.CredentialID != ownerCred || sub.P256dh != owner.P256dh() {
		t.Fatalf("the owner's subscription after the others tried: %+v", sub)
	}
	// The owner's own credential replaces and removes it.
	s.subscribe(t, ownerToken, "https://push.example/owner", owner)
	if r := s.do(t, "DELETE", "/api/v1/push/subscriptions/"+own, ownerToken, ""); r.status != 204 {
		t.Errorf("the owner removing her device: %d %s", r.status, r.body)
	}
	// A device left subscribed by a revoked credential is the next sign-in's.
	leftID, left := s.createToken(t, "--person", "--name", "left")
	old, _ := pushtest.NewBrowser()
	shared := s.subscribe(t, left, "https://push.example/shared", old)
	s.cli(t, "token", "revoke", leftID)
	if id := s.subscribe(t, teammate, "https://push.example/shared", grace); id != shared || stored()[shared].P256dh != grace.P256dh() {
		t.Errorf("replacing a revoked credential's device: %s %+v", id, stored()[shared])
	}

	// The bound per person: twelve devices keep the newest ten, and Grace's stays.
	var ids []string
	for i := range ask.MaxPushDevices + 2 {
		b, _ := pushtest.NewBrowser()
		ids = append(ids, s.subscribe(t, ownerToken, "https://push.example/device-"+string(rune('a'+i)), b))
	}
	now := stored()
	for i, id := range ids {
		if kept := now[id] != nil; kept != (i >= 2) {
			t.Errorf("device %d of %d: kept %v", i+1, len(ids), kept)
		}
	}
	if now[shared] == nil {
		t.Error("the owner's devices pushed out a teammate's")
	}
}
