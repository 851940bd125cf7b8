package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/dynamo"
)

// TestSignInThrottle: failed sign-ins are counted in the table, so that every instance sees the
// same count: of 40 failures through separate stores (as separate Lambda instances would),
// exactly Max are within the budget; another address, or the next window, starts over.
//
// The failures come one after another. Failures at the very same moment count right on DynamoDB
// because each is one atomic ADD (UpdateItem with ReturnValues UPDATED_NEW), which is
// DynamoDB's guarantee; moto's threaded server does not keep it under load (two ADDs can read
// the same count), so a test of simultaneous failures on moto fails now and then without a fault
// in Loopback.
func TestSignInThrottle(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	now := time.Date(2026, 12, 2, 1, 0, 10, 0, time.UTC)
	clock := func() time.Time { return now }
	within := 0
	for range 40 {
		instance := &dynamo.SignInThrottle{Store: dynamo.New(noScanClient(), store.Table()), Max: 20, Window: time.Minute, Now: clock}
		_, over, err := instance.Fail(ctx, "203.0.113.9")
		if err != nil {
			t.Fatal(err)
		}
		if !over {
			within++
		}
	}
	if within != 20 {
		t.Fatalf("%d of 40 failures were within a budget of 20", within)
	}
	th := &dynamo.SignInThrottle{Store: store, Max: 20, Window: time.Minute, Now: clock}
	if wait, over, err := th.Fail(ctx, "203.0.113.9"); err != nil || !over || wait != 50*time.Second {
		t.Fatalf("the 41st failure: %v %v %v", wait, over, err)
	}
	if _, over, err := th.Fail(ctx, "2001:db8::1"); err != nil || over {
		t.Fatalf("another address: %v %v", over, err)
	}
	now = now.Add(time.Minute)
	if _, over, err := th.Fail(ctx, "203.0.113.9"); err != nil || over {
		t.Fatalf("the next window: %v %v", over, err)
	}
}
