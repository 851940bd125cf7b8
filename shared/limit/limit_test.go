package limit_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/limit"
)

func TestPerKey(t *testing.T) {
	p := &limit.PerKey{Max: 2}
	r1, ok1 := p.Acquire("a")
	_, ok2 := p.Acquire("a")
	_, ok3 := p.Acquire("a")
	_, okB := p.Acquire("b")
	if !ok1 || !ok2 || ok3 || !okB {
		t.Fatalf("acquires: %v %v %v %v", ok1, ok2, ok3, okB)
	}
	r1()
	r1() // a second release changes nothing
	if _, ok := p.Acquire("a"); !ok {
		t.Fatal("a release did not free a place")
	}
	if _, ok := p.Acquire("a"); ok {
		t.Fatal("a double release freed two places")
	}
	var none *limit.PerKey
	if _, ok := none.Acquire("x"); !ok {
		t.Fatal("no limit refused")
	}
}

func TestFailures(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	f := &limit.Failures{Max: 3, Window: time.Minute, Now: func() time.Time { return now }}
	for i := range 3 {
		if _, over, _ := f.Fail(ctx, "1.2.3.4"); over {
			t.Fatalf("failure %d is over a budget of 3", i+1)
		}
	}
	now = now.Add(10 * time.Second)
	if wait, over, _ := f.Fail(ctx, "1.2.3.4"); !over || wait != 50*time.Second {
		t.Fatalf("the fourth failure: %v %v", wait, over)
	}
	if _, over, _ := f.Fail(ctx, "5.6.7.8"); over {
		t.Fatal("another address is over")
	}
	now = now.Add(time.Minute)
	if _, over, _ := f.Fail(ctx, "1.2.3.4"); over {
		t.Fatal("still over after the window")
	}
}

// TestFailuresAtOnce: of many failures at once from one address, exactly Max are within the
// budget (the check and the count are one step).
func TestFailuresAtOnce(t *testing.T) {
	f := &limit.Failures{Max: 20, Window: time.Hour}
	var within atomic.Int32
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, over, _ := f.Fail(context.Background(), "1.2.3.4"); !over {
				within.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := within.Load(); n != 20 {
		t.Fatalf("%d of 200 failures at once were within a budget of 20", n)
	}
}
