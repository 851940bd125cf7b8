package limit_test

import (
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
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	f := &limit.Failures{Max: 3, Window: time.Minute, Now: func() time.Time { return now }}
	for range 3 {
		if _, b := f.Blocked("1.2.3.4"); b {
			t.Fatal("blocked too early")
		}
		f.Fail("1.2.3.4")
	}
	if wait, b := f.Blocked("1.2.3.4"); !b || wait != time.Minute {
		t.Fatalf("after 3 failures: %v %v", wait, b)
	}
	if _, b := f.Blocked("5.6.7.8"); b {
		t.Fatal("another address is blocked")
	}
	now = now.Add(time.Minute)
	if _, b := f.Blocked("1.2.3.4"); b {
		t.Fatal("still blocked after the window")
	}
}
