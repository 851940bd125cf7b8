package ask_test

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

func browserKeys(t testing.TB) (string, string) {
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	rand.Read(auth)
	return base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes()), base64.RawURLEncoding.EncodeToString(auth)
}

func pushInput(endpoint, p256dh, auth string) ask.PushSubscriptionInput {
	var in ask.PushSubscriptionInput
	in.Endpoint, in.Keys.P256dh, in.Keys.Auth = endpoint, p256dh, auth
	return in
}

var ada = &ask.Credential{ID: "cred_ada", Space: "s", Person: ask.Actor{ID: "person:ada"}}

func TestNewPushSubscription(t *testing.T) {
	p, a := browserKeys(t)
	now := time.Now()
	ok, err := ask.NewPushSubscription(pushInput("https://fcm.googleapis.com/fcm/send/abc", p, a), "s", ada, ask.PushRules{}, now)
	if err != nil || ok.PersonID != "person:ada" || ok.CredentialID != "cred_ada" || !strings.HasPrefix(ok.ID, "push_") {
		t.Fatalf("a good subscription: %+v %v", ok, err)
	}
	same, _ := ask.NewPushSubscription(pushInput("https://fcm.googleapis.com/fcm/send/abc", p, a), "s", ada, ask.PushRules{}, now)
	other, _ := ask.NewPushSubscription(pushInput("https://fcm.googleapis.com/fcm/send/abd", p, a), "s", ada, ask.PushRules{}, now)
	if same.ID != ok.ID || other.ID == ok.ID {
		t.Errorf("ids: one per endpoint, stable: %s %s %s", ok.ID, same.ID, other.ID)
	}
	padded := base64.URLEncoding.EncodeToString(mustDecode(p))
	for _, tc := range []struct {
		name string
		in   ask.PushSubscriptionInput
		ok   bool
	}{
		{"padded base64url keys", pushInput("https://push.example/x", padded, a), true},
		{"http", pushInput("http://push.example/x", p, a), false},
		{"http loopback without the switch", pushInput("http://127.0.0.1:9/x", p, a), false},
		{"no host", pushInput("https:///x", p, a), false},
		{"user info", pushInput("https://u:p@push.example/x", p, a), false},
		{"relative", pushInput("/x", p, a), false},
		{"too long", pushInput("https://push.example/"+strings.Repeat("a", ask.MaxPushEndpoint), p, a), false},
		{"empty p256dh", pushInput("https://push.example/x", "", a), false},
		{"p256dh compressed", pushInput("https://push.example/x", base64.RawURLEncoding.EncodeToString(mustDecode(p)[:33]), a), false},
		{"p256dh off the curve", pushInput("https://push.example/x", base64.RawURLEncoding.EncodeToString(append([]byte{4}, make([]byte, 64)...)), a), false},
		{"auth of 15 bytes", pushInput("https://push.example/x", p, base64.RawURLEncoding.EncodeToString(make([]byte, 15))), false},
		{"auth not base64", pushInput("https://push.example/x", p, "!!!!"), false},
	} {
		_, err := ask.NewPushSubscription(tc.in, "s", ada, ask.PushRules{}, now)
		if (err == nil) != tc.ok || (err != nil && ask.ErrorCode(err) != ask.EPushInvalid) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if _, err := ask.NewPushSubscription(pushInput("http://127.0.0.1:9/x", p, a), "s", ada, ask.PushRules{AllowLoopback: true}, now); err != nil {
		t.Errorf("loopback with the tests' switch: %v", err)
	}
}

func mustDecode(s string) []byte {
	b, _ := base64.RawURLEncoding.DecodeString(s)
	return b
}

// FuzzPushSubscription: whatever a browser (or anyone) sends, the rules refuse with push.invalid
// or make a subscription whose endpoint is https and whose keys decode to the right sizes.
func FuzzPushSubscription(f *testing.F) {
	p, a := browserKeys(f)
	f.Add("https://fcm.googleapis.com/fcm/send/x", p, a)
	f.Add("http://push.example/x", p, a)
	f.Add("https://push.example/\x00", "BAAA", "AAAA")
	f.Add("https://[::1]:443/x", p, a)
	f.Add(" https://push.example/x ", p+"==", a+"==")
	f.Fuzz(func(t *testing.T, endpoint, p256dh, auth string) {
		sub, err := ask.NewPushSubscription(pushInput(endpoint, p256dh, auth), "s", ada, ask.PushRules{}, time.Now())
		if err != nil {
			if ask.ErrorCode(err) != ask.EPushInvalid {
				t.Fatalf("refused with %v", err)
			}
			return
		}
		if !strings.HasPrefix(sub.Endpoint, "https://") || len(sub.Endpoint) > ask.MaxPushEndpoint {
			t.Fatalf("accepted endpoint %q", sub.Endpoint)
		}
	})
}

func TestNoticeFor(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	q := &ask.Ask{ID: "a1", Kind: ask.KindQuestion, Status: ask.AwaitingHuman, Project: "billing-service",
		Question: &ask.QuestionPrompt{Question: "Should the webhook retry\nwith backoff? " + strings.Repeat("Really. ", 40)}, UpdatedAt: at}
	n, ok := ask.NoticeFor(ask.Change{Ask: q, Opened: true})
	if !ok || n.Title != "billing-service asks" || n.Tag != "ask-a1" || n.URL != "/asks/a1" || len([]rune(n.Body)) > 140 || strings.Contains(n.Body, "\n") {
		t.Fatalf("an opened ask: %+v %v", n, ok)
	}
	md := *q
	md.Question = &ask.QuestionPrompt{Question: "## Retry?\nShould the **webhook** use `backoff` — see [the docs](https://x.example)?"}
	if n, _ := ask.NoticeFor(ask.Change{Ask: &md, Opened: true}); n.Body != "Retry? Should the webhook use backoff — see the docs?" {
		t.Errorf("markdown in a notice: %q", n.Body)
	}
	// The person's own move, and an agent starting to wait: nothing.
	replied := *q
	replied.Status = ask.AwaitingAgent
	if _, ok := ask.NoticeFor(ask.Change{Ask: &replied}); ok {
		t.Error("a push for the person's own reply")
	}
	if _, ok := ask.NoticeFor(ask.Change{Ask: q}); ok {
		t.Error("a push for a change that is not the agent's answer")
	}
	// The agent answered: the move is the person's again.
	answered := *q
	answered.Thread = []ask.Entry{{Author: ask.AuthorHuman, At: at.Add(-time.Minute)}, {Author: ask.AuthorAgent, Answer: "100 a minute", At: at}}
	if n, ok := ask.NoticeFor(ask.Change{Ask: &answered}); !ok || n.Body != "100 a minute" {
		t.Errorf("the agent's answer: %+v %v", n, ok)
	}
	// The same ask again after its waiting flag moved (a later UpdatedAt): no second push.
	waited := answered
	waited.UpdatedAt = at.Add(time.Second)
	if _, ok := ask.NoticeFor(ask.Change{Ask: &waited}); ok {
		t.Error("a push for the waiting flag")
	}
}
