package dynamo_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/dynamo"
)

// TestSignInThrottle: failed sign-ins are counted in the table, so that every instance sees the
// same count: of 40 failures at once through separate stores (as separate Lambda instances
// would), exactly Max are within the budget; another address, or the next window, starts over.
func TestSignInThrottle(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	now := time.Date(2026, 12, 2, 1, 0, 10, 0, time.UTC)
	clock := func() time.Time { return now }
	var within atomic.Int32
	var wg sync.WaitGroup
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			instance := &dynamo.SignInThrottle{Store: dynamo.New(noScanClient(), store.Table()), Max: 20, Window: time.Minute, Now: clock}
			_, over, err := instance.Fail(ctx, "203.0.113.9")
			if err != nil {
				t.Error(err)
			}
			if !over {
				within.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := within.Load(); n != 20 {
		t.Fatalf("%d of 40 failures at once were within a budget of 20", n)
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
