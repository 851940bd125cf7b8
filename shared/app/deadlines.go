package app

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// DeadlineClock closes asks at their deadlines and escalates them on time in a process that hears
// of every change (the local binary): one timer, for the nearest due time of any ask
// (Service.NextDue), re-armed when a change brings a due time nearer. It never polls: between due
// times it sleeps on the timer and on the changes it is told of. On AWS no process hears of
// every change; there a waiting call closes its own ask at the deadline (mcptools.Waiter) and the
// sweeper function runs App.SweepDue every minute.
type DeadlineClock struct {
	service *ask.Service
	logger  *slog.Logger
	wake    chan struct{}

	mu   sync.Mutex
	next time.Time // the due time the timer is armed for; zero: none
}

func newDeadlineClock(svc *ask.Service, logger *slog.Logger) *DeadlineClock {
	return &DeadlineClock{service: svc, logger: logger, wake: make(chan struct{}, 1)}
}

// Publish hears of a committed change (ask.Publisher): one that is due sooner than the timer is
// armed for re-arms it. It never blocks.
func (c *DeadlineClock) Publish(ch ask.Change) {
	if ch.Ask == nil {
		return
	}
	due := ch.Ask.DueAt()
	if due == nil {
		return
	}
	c.mu.Lock()
	sooner := c.next.IsZero() || due.Before(c.next)
	c.mu.Unlock()
	if sooner {
		select {
		case c.wake <- struct{}{}:
		default: // a wake-up is pending already
		}
	}
}

// retryAfter is how soon the clock tries again after the store failed it.
const retryAfter = 5 * time.Second

// Run keeps the clock until ctx ends: it does what is due (Service.SweepDue), arms the timer for
// the next due time, and sleeps until that or a nearer one comes.
func (c *DeadlineClock) Run(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-c.wake:
		}
		wait, err := c.tick(ctx)
		if err != nil && ctx.Err() == nil {
			c.logger.Warn("deadlines", "err", err)
			wait = retryAfter
		}
		timer.Stop()
		select {
		case <-timer.C:
		default:
		}
		timer.Reset(wait)
	}
}

// tick does what is due now and says how long to sleep until the next due time (an hour when
// none is: a change that brings one wakes the clock sooner).
func (c *DeadlineClock) tick(ctx context.Context) (time.Duration, error) {
	if _, err := c.service.SweepDue(ctx); err != nil {
		return 0, err
	}
	next, ok, err := c.service.NextDue(ctx)
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !ok {
		c.next = time.Time{}
		return time.Hour, nil
	}
	c.next = next
	return max(next.Sub(c.service.Now()), 0), nil
}
