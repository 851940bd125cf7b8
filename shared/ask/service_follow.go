package ask

import (
	"context"
	"errors"
	"time"
)

// errUnchanged tells change that fn found nothing to write.
var errUnchanged = errors.New("unchanged")

// SetWaiting records whether any agent follows an ask. It is a change of the ask like any other
// (its version moves and subscribers hear of it), made only when the flag really changes, and
// never on a closed ask: nobody waits on one.
func (s *Service) SetWaiting(ctx context.Context, space, id string, waiting bool) (*Ask, error) {
	a, _, err := s.change(ctx, space, id, func(a *Ask) error {
		if a.Waiting == waiting || (waiting && a.Status == Closed) {
			return errUnchanged
		}
		a.Waiting = waiting
		a.UpdatedAt = s.Now()
		return nil
	})
	return a, err
}

// A Follow is a lease an agent takes on an ask as its call creates or answers it (Origin.Follow).
type Follow struct {
	Holder string        // who holds it: a waiting call's id, or a task's
	TTL    time.Duration // how long it lasts unless renewed
}

// takeLease writes f's lease on ask id before the change that marks the ask waiting (the lease
// first, then the flag: settle relies on that order). Nil f takes none.
func (s *Service) takeLease(ctx context.Context, space, id string, f *Follow) error {
	if f == nil {
		return nil
	}
	return s.Leases.PutLease(ctx, Lease{Space: space, AskID: id, Holder: f.Holder, ExpiresAt: s.Now().Add(f.TTL)})
}

// dropLease removes f's lease after the change it was taken for failed, so that nothing is left
// following an ask nobody waits on. The flag was not set; there is nothing to settle.
func (s *Service) dropLease(ctx context.Context, space, id string, f *Follow) {
	if f != nil {
		_ = s.Leases.DeleteLease(context.WithoutCancel(ctx), space, id, f.Holder)
	}
}

// Follow starts or renews holder's lease on an ask for ttl, and marks the ask waiting (the lease
// first, then the flag: settle relies on that order).
func (s *Service) Follow(ctx context.Context, space, id, holder string, ttl time.Duration) error {
	if err := s.Leases.PutLease(ctx, Lease{Space: space, AskID: id, Holder: holder, ExpiresAt: s.Now().Add(ttl)}); err != nil {
		return err
	}
	_, err := s.SetWaiting(ctx, space, id, true)
	return err
}

// Unfollow ends holder's lease, and clears the ask's waiting flag if no live lease is left.
func (s *Service) Unfollow(ctx context.Context, space, id, holder string) error {
	if err := s.Leases.DeleteLease(ctx, space, id, holder); err != nil {
		return err
	}
	return s.settle(ctx, space, id)
}

// settle clears the waiting flag of an ask that no live lease follows. A follower may take its
// lease between the count and the clear; so the count is taken again after clearing, and the flag
// restored if a lease appeared. Either that recount sees the new lease, or the new follower's own
// SetWaiting(true) comes after this clear: the flag ends true whenever someone follows.
func (s *Service) settle(ctx context.Context, space, id string) error {
	// A flag already clear needs no clearing, whatever the leases: SetWaiting(false) would change
	// nothing. Ask the store first, which says so cheaply (after a closing reply it always
	// says so). A follower that marks the ask waiting after this look took its lease first, and
	// the flag is rightly left to it.
	waiting, err := s.Store.AskWaiting(ctx, space, id)
	if errors.Is(err, ErrNotFound) || (err == nil && !waiting) {
		return nil
	} else if err != nil {
		return err
	}
	n, err := s.Leases.LiveLeases(ctx, space, id, s.Now())
	if err != nil || n > 0 {
		return err
	}
	_, err = s.SetWaiting(ctx, space, id, false)
	if ErrorCode(err) == ENotFound {
		return nil
	} else if err != nil {
		return err
	}
	if n, err = s.Leases.LiveLeases(ctx, space, id, s.Now()); err != nil || n == 0 {
		return err
	}
	_, err = s.SetWaiting(ctx, space, id, true)
	return err
}

// ReapLeases removes leases whose holders stopped renewing them (a process killed mid-wait) and
// clears the waiting flag of asks left unfollowed. It returns how many leases it removed.
func (s *Service) ReapLeases(ctx context.Context, limit int) (int, error) {
	expired, err := s.Leases.ExpiredLeases(ctx, s.Now(), limit)
	if err != nil {
		return 0, err
	}
	for _, l := range expired {
		if err := s.Leases.DeleteLease(ctx, l.Space, l.AskID, l.Holder); err != nil {
			return 0, err
		}
		if err := s.settle(ctx, l.Space, l.AskID); err != nil {
			return 0, err
		}
	}
	return len(expired), nil
}

// SettleWaiting clears the waiting flag of a space's open asks that no live lease follows. A
// process stopped between releasing a lease and clearing the flag leaves such an ask; starting up
// runs this once so the inbox never shows an agent waiting that is not.
func (s *Service) SettleWaiting(ctx context.Context, space string) error {
	open, err := s.Store.OpenAsks(ctx, space)
	if err != nil {
		return err
	}
	for _, a := range open {
		if a.Waiting {
			if err := s.settle(ctx, space, a.ID); err != nil {
				return err
			}
		}
	}
	return nil
}
