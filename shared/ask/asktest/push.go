package asktest

import (
	"context"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testPushStore runs the conformance suite for ask.PushStore.
func testPushStore(t *testing.T, open func(t *testing.T) ask.PushStore) {
	t.Run("RoundTripReplaceDelete", func(t *testing.T) {
		s := open(t)
		ctx := context.Background()
		space, other := newSpace(), newSpace()
		sub := func(id, endpoint string, created time.Time) *ask.PushSubscription {
			return &ask.PushSubscription{ID: id, Space: space, PersonID: "ada", CredentialID: "cred_a",
				Endpoint: endpoint, P256dh: "BP" + id, Auth: "au" + id, CreatedAt: created}
		}
		b, a := sub("push_b", "https://push.example/b", at(time.Minute)), sub("push_a", "https://push.example/a", base)
		for _, p := range []*ask.PushSubscription{b, a} {
			if err := s.PutPushSubscription(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		list, err := s.PushSubscriptions(ctx, space)
		if err != nil {
			t.Fatal(err)
		}
		same(t, "the space's subscriptions, oldest first", []*ask.PushSubscription{a, b}, list)
		if list, _ := s.PushSubscriptions(ctx, other); len(list) != 0 {
			t.Fatalf("another space lists %d subscriptions", len(list))
		}
		// The same device subscribing again replaces its subscription.
		again := sub("push_a", "https://push.example/a", at(2*time.Minute))
		again.Auth = "new"
		if err := s.PutPushSubscription(ctx, again); err != nil {
			t.Fatal(err)
		}
		list, _ = s.PushSubscriptions(ctx, space)
		same(t, "after subscribing again", []*ask.PushSubscription{b, again}, list)
		wantRefusal(t, s.DeletePushSubscription(ctx, other, "push_b"), ask.PushSubscriptionNotFound("push_b"), "deleting from another space")
		if err := s.DeletePushSubscription(ctx, space, "push_b"); err != nil {
			t.Fatal(err)
		}
		wantRefusal(t, s.DeletePushSubscription(ctx, space, "push_b"), ask.PushSubscriptionNotFound("push_b"), "deleting twice")
		list, _ = s.PushSubscriptions(ctx, space)
		same(t, "after a delete", []*ask.PushSubscription{again}, list)
	})
}
