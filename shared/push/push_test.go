package push_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/push"
	"github.com/loopback-hq/loopback/shared/push/pushtest"
	"github.com/loopback-hq/loopback/shared/sqlite"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
)

func setup(t *testing.T, allowLoopback bool) (*push.Sender, *sqlite.DB, *pushtest.Service) {
	t.Helper()
	db := sqlitetest.Open(t)
	keys, err := push.LoadOrCreateKeys(filepath.Join(t.TempDir(), "vapid.json"))
	if err != nil {
		t.Fatal(err)
	}
	return &push.Sender{Keys: keys, Store: db, Subscriber: "ops@example.com", AllowLoopback: allowLoopback, Backoff: 10 * time.Millisecond},
		db, pushtest.NewService(t)
}

func subscription(t *testing.T, s *push.Sender, db *sqlite.DB, ps *pushtest.Service) (*ask.PushSubscription, string) {
	t.Helper()
	b, _ := pushtest.NewBrowser()
	endpoint := ps.SubscribeWithKey(b, s.Keys.PublicKey)
	var in ask.PushSubscriptionInput
	in.Endpoint, in.Keys.P256dh, in.Keys.Auth = endpoint, b.P256dh(), b.Auth()
	sub, err := ask.NewPushSubscription(in, "s", &ask.Credential{ID: "cred_a", Person: ask.Actor{ID: "ada"}}, ask.PushRules{AllowLoopback: true}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutPushSubscription(context.Background(), sub); err != nil {
		t.Fatal(err)
	}
	return sub, endpoint
}

var notice = &ask.PushNotice{AskID: "a1", Title: "p asks", Body: "Go?", Tag: "ask-a1", URL: "/asks/a1"}

// TestRefusesInnerAddresses: without the tests' switch, a push never reaches a loopback address,
// checked on the address dialled (the stand-in listens on 127.0.0.1).
func TestRefusesInnerAddresses(t *testing.T) {
	s, db, ps := setup(t, false)
	sub, endpoint := subscription(t, s, db, ps)
	if err := s.Send(context.Background(), sub, notice); !errors.Is(err, push.ErrRefusedAddress) {
		t.Fatalf("a push to 127.0.0.1: %v, want ErrRefusedAddress", err)
	}
	if n := ps.Requests(endpoint); n != 0 {
		t.Fatalf("the refused push reached the service (%d requests)", n)
	}
	// A name that resolves to loopback is refused the same way: the check is on the address.
	sub.Endpoint = "http://localhost:" + endpoint[len("http://127.0.0.1:"):]
	if err := s.Send(context.Background(), sub, notice); !errors.Is(err, push.ErrRefusedAddress) {
		t.Fatalf("a push to localhost: %v, want ErrRefusedAddress", err)
	}
	for _, inner := range []string{"http://10.0.0.1:9/x", "http://169.254.169.254/x", "http://[::1]:9/x", "http://100.64.0.1/x", "http://192.168.1.1/x"} {
		sub.Endpoint = inner
		if err := s.Send(context.Background(), sub, notice); !errors.Is(err, push.ErrRefusedAddress) {
			t.Errorf("a push to %s: %v, want ErrRefusedAddress", inner, err)
		}
	}
}

func TestRetriesAndForgets(t *testing.T) {
	s, db, ps := setup(t, true)
	sub, endpoint := subscription(t, s, db, ps)
	ps.Fail(endpoint, 2)
	if err := s.Send(context.Background(), sub, notice); err != nil {
		t.Fatalf("after two 503s: %v", err)
	}
	if got := ps.Received(endpoint); len(got) != 1 || ps.Requests(endpoint) != 3 {
		t.Fatalf("%d delivered in %d requests, want 1 in 3", len(got), ps.Requests(endpoint))
	}
	ps.Fail(endpoint, 10)
	if err := s.Send(context.Background(), sub, notice); err == nil {
		t.Fatal("a push service failing every time: no error")
	}
	if n := ps.Requests(endpoint); n != 3+4 {
		t.Errorf("%d requests, want 4 more (three retries, then give up)", n-3)
	}
	ps.NotFound(endpoint)
	if err := s.Send(context.Background(), sub, notice); err != nil {
		t.Fatal(err)
	}
	if subs, _ := db.PushSubscriptions(context.Background(), "s"); len(subs) != 0 {
		t.Fatal("a subscription the push service does not know is kept")
	}
}

func TestKeysAreKept(t *testing.T) {
	file := filepath.Join(t.TempDir(), "vapid.json")
	a, err := push.LoadOrCreateKeys(file)
	if err != nil {
		t.Fatal(err)
	}
	b, err := push.LoadOrCreateKeys(file)
	if err != nil || a != b {
		t.Fatalf("the key pair changed on the second load: %v", err)
	}
}

// TestSubscriber: the VAPID contact is the deployment's https address on a public name, else the
// project's home (Apple refuses a sub it cannot resolve).
func TestSubscriber(t *testing.T) {
	for in, want := range map[string]string{
		"https://loopback.example.com/": "https://loopback.example.com",
		"https://d1234.cloudfront.net":  "https://d1234.cloudfront.net",
		"http://loopback.example.com":   push.DefaultSubscriber,
		"http://127.0.0.1:8080":         push.DefaultSubscriber,
		"https://localhost:8443":        push.DefaultSubscriber,
		"https://192.168.1.20":          push.DefaultSubscriber,
		"https://inbox.local":           push.DefaultSubscriber,
		"":                              push.DefaultSubscriber,
	} {
		if got := push.Subscriber(in); got != want {
			t.Errorf("Subscriber(%q) = %q, want %q", in, got, want)
		}
	}
}
