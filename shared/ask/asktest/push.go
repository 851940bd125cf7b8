package asktest

import (
	"context"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testPushStore runs the conformance suite for ask.PushStore.
func testPushStore(t *testing.T, open func(t *testing.T) ask.PushStore) {
	t.Run("QuietHoursPerPerson", func(t *testing.T) {
		s := open(t)
		ctx := context.Background()
		space, other := newSpace(), newSpace()
		if _, err := s.QuietHours(ctx, space, "ada"); ask.ErrorCode(err) != ask.ENotFound {
			t.Fatalf("none set: %v", err)
		}
		q := ask.QuietHours{Start: "22:00", End: "07:00", TimeZone: "Europe/Berlin"}
		if err := s.PutQuietHours(ctx, space, "ada", q); err != nil {
			t.Fatal(err)
		}
		if got, err := s.QuietHours(ctx, space, "ada"); err != nil || got != q {
			t.Fatalf("read back: %+v %v", got, err)
		}
		// Another person of the space, and the same person id in another space: none.
		for _, k := range [][2]string{{space, "grace"}, {other, "ada"}} {
			if _, err := s.QuietHours(ctx, k[0], k[1]); ask.ErrorCode(err) != ask.ENotFound {
				t.Errorf("%v: %v", k, err)
			}
		}
		q2 := ask.QuietHours{Start: "12:30", End: "13:30", TimeZone: "America/New_York"}
		if err := s.PutQuietHours(ctx, space, "ada", q2); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.QuietHours(ctx, space, "ada"); got != q2 {
			t.Fatalf("replaced: %+v", got)
		}
		if subs, err := s.PushSubscriptions(ctx, space); err != nil || len(subs) != 0 {
			t.Fatalf("quiet hours listed as devices: %v %v", subs, err)
		}
		for range 2 { // deleting none is no error
			if err := s.DeleteQuietHours(ctx, space, "ada"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.QuietHours(ctx, space, "ada"); ask.ErrorCode(err) != ask.ENotFound {
			t.Fatalf("deleted: %v", err)
		}
	})
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
