package asktest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/testwait"
)

// testWaitStore runs the conformance suite for ask.WaitStore. Each test uses credentials of its
// own, so a shared store is fine.
func testWaitStore(t *testing.T, open func(t *testing.T) ask.WaitStore) {
	tests := []struct {
		name string
		fn   func(*testing.T, ask.WaitStore)
	}{
		{"UpToMax", testWaitsUpToMax},
		{"ExpiredDoNotCount", testWaitsExpired},
		{"PerCredential", testWaitsPerCredential},
		{"ConcurrentTakersNeverExceedMax", testWaitsConcurrent},
		{"BurstOfTakersBelowMax", testWaitsBurst},
		{"CancelReachesOnlyItsCall", testWaitsCancel},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func heldWait(cred string, expires time.Time) ask.HeldWait {
	return ask.HeldWait{Credential: cred, Holder: newHolder(), Call: cred + "\x00s\x001", ExpiresAt: expires}
}

func take(t *testing.T, s ask.WaitStore, w ask.HeldWait, max int, now time.Time) {
	t.Helper()
	if err := s.TakeWait(context.Background(), w, max, now); err != nil {
		t.Fatalf("TakeWait %d: %v", max, err)
	}
}

func testWaitsUpToMax(t *testing.T, s ask.WaitStore) {
	ctx := context.Background()
	now := time.Now()
	cred := "cred_" + ask.NewID()[:12]
	var held []ask.HeldWait
	for range 3 {
		w := heldWait(cred, now.Add(time.Minute))
		take(t, s, w, 3, now)
		held = append(held, w)
	}
	if err := s.TakeWait(ctx, heldWait(cred, now.Add(time.Minute)), 3, now); !errors.Is(err, ask.ErrTooManyWaits) {
		t.Fatalf("a fourth wait with max 3: %v, want ErrTooManyWaits", err)
	}
	if err := s.EndWait(ctx, cred, held[0].Holder); err != nil {
		t.Fatal(err)
	}
	if err := s.EndWait(ctx, cred, held[0].Holder); err != nil {
		t.Fatalf("ending a wait twice: %v", err)
	}
	take(t, s, heldWait(cred, now.Add(time.Minute)), 3, now) // the place given back
}

func testWaitsExpired(t *testing.T, s ask.WaitStore) {
	ctx := context.Background()
	now := time.Now()
	cred := "cred_" + ask.NewID()[:12]
	old := heldWait(cred, now.Add(-time.Second)) // its process died: not renewed
	take(t, s, old, 1, now.Add(-time.Minute))
	renewed := heldWait(cred, now.Add(time.Second))
	take(t, s, renewed, 2, now)
	if err := s.TakeWait(ctx, heldWait(cred, now.Add(time.Minute)), 1, now); !errors.Is(err, ask.ErrTooManyWaits) {
		t.Fatalf("the live wait counts: %v", err)
	}
	// Renewed past the next instant, it still counts then; the expired one never does.
	renewed.ExpiresAt = now.Add(time.Hour)
	if cancelled, err := s.RenewWait(ctx, renewed); err != nil || cancelled {
		t.Fatalf("RenewWait: %v %v", cancelled, err)
	}
	later := now.Add(time.Minute)
	if err := s.TakeWait(ctx, heldWait(cred, later.Add(time.Minute)), 1, later); !errors.Is(err, ask.ErrTooManyWaits) {
		t.Fatalf("a renewed wait counts after its first expiry: %v", err)
	}
	take(t, s, heldWait(cred, later.Add(time.Minute)), 2, later)
}

func testWaitsPerCredential(t *testing.T, s ask.WaitStore) {
	now := time.Now()
	a, b := "cred_"+ask.NewID()[:12], "cred_"+ask.NewID()[:12]
	take(t, s, heldWait(a, now.Add(time.Minute)), 1, now)
	take(t, s, heldWait(b, now.Add(time.Minute)), 1, now) // another credential's count is its own
}

func testWaitsConcurrent(t *testing.T, s ask.WaitStore) {
	const max, takers = 4, 12
	burst(t, s, max, takers)
}

// testWaitsBurst: a burst of takers of one credential all get a place while there are places for
// them, however many arrive at once; with fewer places, exactly that many get one and every other
// taker is told the credential holds its most waits (never another error).
func testWaitsBurst(t *testing.T, s ask.WaitStore) {
	const takers = 32
	for _, max := range []int{takers, takers + 8, takers / 2} {
		burst(t, s, max, takers)
	}
}

// burst starts takers TakeWait calls of one fresh credential at once, with room for max, and
// checks that min(max, takers) took a place and the rest were refused with ErrTooManyWaits.
func burst(t *testing.T, s ask.WaitStore, max, takers int) {
	t.Helper()
	now := time.Now()
	cred := "cred_" + ask.NewID()[:12]
	var ok, full atomic.Int32
	errs := make(chan error, takers)
	race(takers, func(int) {
		switch err := s.TakeWait(context.Background(), heldWait(cred, now.Add(time.Minute)), max, now); {
		case err == nil:
			ok.Add(1)
		case errors.Is(err, ask.ErrTooManyWaits):
			full.Add(1)
		default:
			errs <- err
		}
	})
	close(errs)
	for err := range errs {
		t.Errorf("%d takers, max %d: TakeWait: %v", takers, max, err)
	}
	if want := min(max, takers); int(ok.Load()) != want || int(full.Load()) != takers-want {
		t.Fatalf("%d takers, max %d: %d took a place, %d were refused; want %d and %d", takers, max, ok.Load(), full.Load(), want, takers-want)
	}
}

func testWaitsCancel(t *testing.T, s ask.WaitStore) {
	ctx := context.Background()
	now := time.Now()
	cred := "cred_" + ask.NewID()[:12]
	mine := heldWait(cred, now.Add(time.Minute))
	other := heldWait(cred, now.Add(time.Minute))
	other.Call = cred + "\x00s\x002"
	take(t, s, mine, 5, now)
	take(t, s, other, 5, now)
	n, err := s.CancelWaits(ctx, cred, mine.Call, now)
	if err != nil || n != 1 {
		t.Fatalf("CancelWaits: %d, %v; want 1", n, err)
	}
	if n, err := s.CancelWaits(ctx, "cred_"+ask.NewID()[:12], mine.Call, now); err != nil || n != 0 {
		t.Fatalf("another credential's cancel: %d, %v", n, err)
	}
	testwait.Eventually(t, "the cancel to be seen", func() bool {
		c, err := s.WaitCancelled(ctx, cred, mine.Holder)
		return err == nil && c
	})
	if c, err := s.WaitCancelled(ctx, cred, other.Holder); err != nil || c {
		t.Fatalf("the other call's wait: cancelled %v, %v", c, err)
	}
	mine.ExpiresAt = now.Add(2 * time.Minute)
	if c, err := s.RenewWait(ctx, mine); err != nil || !c {
		t.Fatalf("RenewWait after the cancel: cancelled %v, %v", c, err)
	}
	if c, err := s.WaitCancelled(ctx, cred, "holder_none"); err != nil || c {
		t.Fatalf("a wait not found: cancelled %v, %v", c, err)
	}
}
