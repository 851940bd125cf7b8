package mcptools

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/gate"
)

// Watcher wakes a waiting call when an ask may have changed. Locally the hub wakes it the moment a
// change commits; on Lambda, where no hub reaches the waiting instance, a ticker makes it look.
type Watcher interface {
	Watch(space, askID string) (wake <-chan ask.Change, stop func())
}

// HubWatcher wakes waiters from the in-process hub: no polling at all.
type HubWatcher struct{ Hub *events.Hub }

// Watch implements Watcher.
func (w HubWatcher) Watch(space, askID string) (<-chan ask.Change, func()) {
	sub := w.Hub.Watch(space, askID)
	return sub.C(), sub.Close
}

// PollWatcher wakes waiters every Interval, for deployments with no hub in reach.
type PollWatcher struct{ Interval time.Duration }

// Watch implements Watcher.
func (w PollWatcher) Watch(space, askID string) (<-chan ask.Change, func()) {
	c := make(chan ask.Change, 1)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(w.Interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				select {
				case c <- ask.Change{}:
				default:
				}
			case <-done:
				return
			}
		}
	}()
	return c, func() { close(done) }
}

// ErrStillWaiting ends a wait that reached its limit before the person moved. The ask stays open
// and the reply, whenever it comes, is delivered to the next await_reply.
var ErrStillWaiting = errors.New("no reply yet")

// Waiter waits for the person's move on an ask, following it (so the inbox shows an agent is
// waiting) and reporting progress, until the person moves, the limit passes, or the caller goes.
type Waiter struct {
	Service  *ask.Service
	Watcher  Watcher
	Progress time.Duration // how often progress is reported and the lease renewed
	MaxWait  time.Duration // how long one call waits before it tells the agent to call await_reply

	// QuietMaxWait, when set, bounds instead a wait that reports nothing (Wait's progress is nil:
	// the client sent no progressToken and takes no SSE, so not even keepalive comment lines go
	// out; keepalive.go). Such a response sends nothing until it ends, and a proxy in front may cut it first: CloudFront ends a response that sent
	// nothing for its origin read timeout (60 s at most by default). Zero: MaxWait.
	QuietMaxWait time.Duration

	// Revocations ends a wait, with ErrRevoked, once the credential it waits for is revoked: the
	// person's reply must not reach an agent whose credential was taken away. Nil: waits end on
	// their own (a revoked credential still starts no new one).
	Revocations *gate.Revocations

	quitOnce sync.Once
	quit     chan struct{}
	pending  sync.WaitGroup // unfollows still being written
}

// ErrRevoked ends a wait because the credential it waits for was revoked. The ask stays open for
// the person; the agent gets none of it.
var ErrRevoked = errors.New("credential revoked")

// ErrShuttingDown ends a wait because this process is stopping. The ask stays open; the agent
// calls await_reply, on this process once it is back or on any other.
var ErrShuttingDown = errors.New("shutting down")

func (w *Waiter) quitting() chan struct{} {
	w.quitOnce.Do(func() { w.quit = make(chan struct{}) })
	return w.quit
}

// Shutdown ends every wait now, each with ErrShuttingDown, so that each call still answers its
// agent (telling it to call await_reply) before the server stops.
func (w *Waiter) Shutdown() {
	q := w.quitting()
	select {
	case <-q:
	default:
		close(q)
	}
}

// Drain returns once every wait's bookkeeping (leases released, waiting cleared) is written; call
// it before closing the store.
func (w *Waiter) Drain() { w.pending.Wait() }

// leaseTTL is how long a lease outlives its last renewal: long enough to survive a slow renewal,
// short enough that a killed process stops showing as waiting within a minute or so.
func (w *Waiter) leaseTTL() time.Duration { return max(3*w.Progress, 30*time.Second) }

// Limit is how long one wait lasts: MaxWait, or QuietMaxWait (when set) for a wait that reports
// no progress.
func (w *Waiter) Limit(reportsProgress bool) time.Duration {
	if !reportsProgress && w.QuietMaxWait > 0 {
		return min(w.QuietMaxWait, w.MaxWait)
	}
	return w.MaxWait
}

// NewFollow is the lease a blocking call takes on the ask its tool creates or answers, in that
// same change (ask.Origin.Follow); Wait then goes on holding it.
func (w *Waiter) NewFollow() *ask.Follow {
	return &ask.Follow{Holder: ask.NewID(), TTL: w.leaseTTL()}
}

// Wait returns the person's reply on an ask of cred's space once they move; at once if they
// already have. followed is the lease the call took with its tool's change (NewFollow); nil, and
// Wait takes one. The progress callback runs every Progress interval with the time waited so far.
// A revocation of cred ends the wait with ErrRevoked, and wins over a reply that came with it.
func (w *Waiter) Wait(ctx context.Context, cred *ask.Credential, askID string, followed *ask.Follow, progress func(waited time.Duration)) (*ask.Reply, error) {
	space := cred.Space
	revoked, unwatch := w.Revocations.Watch(cred)
	defer unwatch()
	wake, stop := w.Watcher.Watch(space, askID) // before the first read, so no change slips between
	defer stop()
	// Every way out of a wait that holds a lease lets go of it, after the reply is on its way:
	// the agent should not wait for the bookkeeping. The caller may be gone; unfollowing must
	// still happen, and Drain waits for it (counted from when the lease is held) before the store
	// closes. `defer hold(holder)()` counts now and unfollows on the way out.
	hold := func(holder string) func() {
		w.pending.Add(1)
		return func() {
			go func() {
				defer w.pending.Done()
				_ = w.Service.Unfollow(context.WithoutCancel(ctx), space, askID, holder)
			}()
		}
	}
	if followed != nil {
		defer hold(followed.Holder)()
	}
	// Read after watching, whether or not the lease came with the tool's change: a reply between
	// that change and the watch is seen here.
	a, err := w.Service.Find(ctx, space, askID)
	if err != nil {
		return nil, err
	}
	if r, ok := ask.PersonsMove(a); ok {
		return r, nil
	}
	holder := ""
	if followed != nil {
		holder = followed.Holder
	} else {
		holder = ask.NewID()
		if err := w.Service.Follow(ctx, space, askID, holder, w.leaseTTL()); err != nil {
			return nil, err
		}
		defer hold(holder)()
	}

	start := time.Now()
	deadline := time.NewTimer(w.Limit(progress != nil))
	defer deadline.Stop()
	tick := time.NewTicker(w.Progress)
	defer tick.Stop()
	for {
		select {
		case <-revoked:
			return nil, ErrRevoked
		default:
		}
		select {
		case <-revoked:
			return nil, ErrRevoked
		case ch := <-wake:
			// The hub hands over the committed ask: when it shows the person's move, that is the
			// answer, with no read. Otherwise (or from a watcher that carries none) read the ask,
			// which is never older than what woke us.
			if ch.Ask != nil {
				if r, ok := ask.PersonsMove(ch.Ask); ok {
					return r, nil
				}
			}
			a, err := w.Service.Find(ctx, space, askID)
			if err != nil {
				return nil, err
			}
			if r, ok := ask.PersonsMove(a); ok {
				return r, nil
			}
		case <-tick.C:
			if progress != nil {
				progress(time.Since(start))
			}
			if err := w.Service.Follow(ctx, space, askID, holder, w.leaseTTL()); err != nil && ctx.Err() == nil {
				return nil, err
			}
		case <-deadline.C:
			return nil, ErrStillWaiting
		case <-w.quitting():
			return nil, ErrShuttingDown
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
