package asktest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testActionStore runs the conformance suite for ask.ActionStore: a used action token is
// recorded once, per space, and of racing uses exactly one wins.
func testActionStore(t *testing.T, open func(t *testing.T) ask.ActionStore) {
	t.Run("UseOnce", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		space, other, nonce := newSpace(), newSpace(), ask.NewID()
		if used, err := s.ActionUsed(ctx, space, nonce); err != nil || used {
			t.Fatalf("a fresh nonce: used %v, %v", used, err)
		}
		if err := s.UseAction(ctx, space, nonce, time.Now().Add(time.Hour)); err != nil {
			t.Fatalf("UseAction: %v", err)
		}
		if used, err := s.ActionUsed(ctx, space, nonce); err != nil || !used {
			t.Fatalf("after its use: used %v, %v", used, err)
		}
		wantSentinel(t, s.UseAction(ctx, space, nonce, time.Now().Add(time.Hour)), ask.ErrAlreadyStored, "a second use")
		if used, err := s.ActionUsed(ctx, other, nonce); err != nil || used {
			t.Fatalf("another space's nonce: used %v, %v", used, err)
		}
	})
	t.Run("RacingUses", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		space, nonce := newSpace(), ask.NewID()
		var won, lost atomic.Int32
		race(8, func(int) {
			err := s.UseAction(ctx, space, nonce, time.Now().Add(time.Hour))
			switch {
			case err == nil:
				won.Add(1)
			case errors.Is(err, ask.ErrAlreadyStored):
				lost.Add(1)
			default:
				t.Errorf("UseAction: %v", err)
			}
		})
		if won.Load() != 1 || lost.Load() != 7 {
			t.Fatalf("of 8 racing uses %d won and %d were refused as used; want 1 and 7", won.Load(), lost.Load())
		}
	})
}
