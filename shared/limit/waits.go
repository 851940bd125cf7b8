package limit

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Waits bounds the calls one credential has waiting at once (blocking MCP calls and 2025
// tasks/result, every kind of wait that holds a process), and carries a client's cancel to its
// wait.
type Waits interface {
	// Take takes a place for a wait of credential, made by call (credential, session and request
	// id); cancel is run, once, when a cancel for call reaches the wait from wherever it was
	// sent. ErrFull when credential holds Cap waits already. release gives the place back.
	Take(ctx context.Context, credential, call string, cancel func()) (release func(), err error)
	// Cancel cancels the waits of credential made by call, wherever they run.
	Cancel(ctx context.Context, credential, call string)
	// Cap is the bound.
	Cap() int
}

// ErrFull is Take's answer when the credential holds its most waits.
var ErrFull = errors.New("limit reached")

// Take implements Waits for one process: the count is this process's, and cancels reach the
// process's waits without it (the MCP server ends them itself).
func (p *PerKey) Take(_ context.Context, credential, _ string, _ func()) (func(), error) {
	release, ok := p.Acquire(credential)
	if !ok {
		return nil, ErrFull
	}
	return release, nil
}

// Cancel implements Waits: nothing to carry within one process.
func (p *PerKey) Cancel(context.Context, string, string) {}

// Cap implements Waits.
func (p *PerKey) Cap() int {
	if p == nil {
		return 0
	}
	return p.Max
}

// SharedWaits counts waits in the store (ask.WaitStore), for deployments where several processes
// serve MCP (Lambda: one instance per call). Each wait renews its place every TTL/3 and looks
// for a cancel every Poll, so that a cancel sent to any instance ends it within Poll (plus a
// moment for the store's eventually consistent read), and a place whose instance died is free
// again within TTL.
type SharedWaits struct {
	Store  ask.WaitStore
	Max    int
	TTL    time.Duration
	Poll   time.Duration
	Now    func() time.Time
	Logger *slog.Logger
}

// Defaults of SharedWaits.
const (
	DefaultSharedTTL  = 90 * time.Second
	DefaultSharedPoll = 2 * time.Second
)

func (s *SharedWaits) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Cap implements Waits.
func (s *SharedWaits) Cap() int { return s.Max }

// storeTimeout bounds one read or write of a wait's place.
const storeTimeout = 10 * time.Second

// Take implements Waits.
func (s *SharedWaits) Take(ctx context.Context, credential, call string, cancel func()) (func(), error) {
	ttl, poll := s.TTL, s.Poll
	if ttl <= 0 {
		ttl = DefaultSharedTTL
	}
	if poll <= 0 {
		poll = DefaultSharedPoll
	}
	now := s.now()
	w := ask.HeldWait{Credential: credential, Holder: ask.NewID(), Call: call, ExpiresAt: now.Add(ttl)}
	switch err := s.Store.TakeWait(ctx, w, s.Max, now); {
	case errors.Is(err, ask.ErrTooManyWaits):
		return nil, ErrFull
	case err != nil:
		return nil, err
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(poll)
		defer t.Stop()
		renewed := s.now()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			ctx, cancelCtx := context.WithTimeout(context.Background(), storeTimeout)
			var cancelled bool
			var err error
			if s.now().Sub(renewed) >= ttl/3 {
				renewed = s.now()
				w.ExpiresAt = renewed.Add(ttl)
				cancelled, err = s.Store.RenewWait(ctx, w)
			} else {
				cancelled, err = s.Store.WaitCancelled(ctx, credential, w.Holder)
			}
			cancelCtx()
			if err != nil && s.Logger != nil {
				s.Logger.Warn("checking a wait's place", "err", err)
			}
			if cancelled {
				cancel()
				return
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { s.release(w, stop, done) }) }, nil
}

// release stops the wait's checks and forgets its place.
func (s *SharedWaits) release(w ask.HeldWait, stop, done chan struct{}) {
	close(stop)
	<-done
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := s.Store.EndWait(ctx, w.Credential, w.Holder); err != nil && s.Logger != nil {
		s.Logger.Warn("giving back a wait's place", "err", err)
	}
}

// Cancel implements Waits.
func (s *SharedWaits) Cancel(ctx context.Context, credential, call string) {
	if _, err := s.Store.CancelWaits(ctx, credential, call, s.now()); err != nil && s.Logger != nil {
		s.Logger.Warn("cancelling a wait", "err", err)
	}
}
