// Package events carries committed ask changes to whoever follows them. Hub is the local,
// in-process carrier: it wakes waiting MCP calls at once and feeds event sockets. On AWS the
// DynamoDB stream plays its part.
package events

import (
	"sync"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Hub fans committed changes out to subscribers. Publishing never blocks: a subscriber that cannot
// keep up is either coalesced (a wake-up is already pending) or dropped, never waited for.
type Hub struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{subs: map[*Subscription]struct{}{}} }

// Subscription receives the changes of one space (optionally of one ask) until it is closed.
type Subscription struct {
	hub      *Hub
	space    string
	askID    string // "" for every ask of the space
	coalesce bool
	c        chan ask.Change
	done     chan struct{}
	once     sync.Once
}

// C delivers changes in commit order.
func (s *Subscription) C() <-chan ask.Change { return s.c }

// Done is closed when the subscription ends: closed by its owner, or dropped for falling behind.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Close ends the subscription. It is safe to call more than once.
func (s *Subscription) Close() {
	s.hub.mu.Lock()
	delete(s.hub.subs, s)
	s.hub.mu.Unlock()
	s.once.Do(func() { close(s.done) })
}

// Subscribe follows every change of a space, in order, with room for queue changes. A subscriber
// whose queue is full when a change arrives is dropped (Done closes): it must start again from a
// fresh snapshot rather than miss a change silently.
func (h *Hub) Subscribe(space string, queue int) *Subscription {
	return h.add(&Subscription{space: space, c: make(chan ask.Change, queue)})
}

// Watch wakes its receiver whenever an ask changes. Wake-ups coalesce: a waiter that has not yet
// looked keeps one pending wake-up, which is all it needs to read the ask again. A wake-up carries
// no ask.
func (h *Hub) Watch(space, askID string) *Subscription {
	return h.add(&Subscription{space: space, askID: askID, coalesce: true, c: make(chan ask.Change, 1)})
}

func (h *Hub) add(s *Subscription) *Subscription {
	s.hub, s.done = h, make(chan struct{})
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	return s
}

// Publish delivers a committed change to every subscriber of its space.
func (h *Hub) Publish(c ask.Change) {
	var dropped []*Subscription
	h.mu.Lock()
	for s := range h.subs {
		if s.space != c.Ask.Space || (s.askID != "" && s.askID != c.Ask.ID) {
			continue
		}
		msg := c
		if s.coalesce {
			// A watcher only needs to know to look again; holding the ask in its queue would
			// keep a copy alive per waiting call.
			msg = ask.Change{Opened: c.Opened}
		}
		select {
		case s.c <- msg:
		default:
			if !s.coalesce {
				dropped = append(dropped, s)
			}
		}
	}
	h.mu.Unlock()
	for _, s := range dropped {
		s.Close()
	}
}

// Len is how many subscriptions are open.
func (h *Hub) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}
