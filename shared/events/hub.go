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
	mu sync.Mutex
	// subs are indexed by what they follow, so that a change reaches its subscribers without a
	// look at anyone else's: ten thousand waiting calls on other asks cost a reply nothing.
	subs map[topic]map[*Subscription]struct{}
	n    int
}

// topic is what a subscription follows: a space (askID "") or one ask of it.
type topic struct{ space, askID string }

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{subs: map[topic]map[*Subscription]struct{}{}} }

// Subscription receives the changes of one space (optionally of one ask) until it is closed.
type Subscription struct {
	hub   *Hub
	space string
	askID string // "" for every ask of the space; else a watcher of one ask (WatchFunc)
	c     chan ask.Change
	// deliver, when set (SubscribeFunc), takes each change instead of c.
	deliver func(ask.Change) bool
	// mark, on a subscription to one person's marks (SubscribeMarks), takes each of their changes.
	mark func(ask.Mark) bool
	done chan struct{}
	once sync.Once
}

// C delivers changes in commit order.
func (s *Subscription) C() <-chan ask.Change { return s.c }

// Done is closed when the subscription ends: closed by its owner, or dropped for falling behind.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Close ends the subscription. It is safe to call more than once.
func (s *Subscription) Close() {
	h, t := s.hub, topic{s.space, s.askID}
	h.mu.Lock()
	if set := h.subs[t]; set != nil {
		if _, ok := set[s]; ok {
			delete(set, s)
			h.n--
		}
		if len(set) == 0 {
			delete(h.subs, t)
		}
	}
	h.mu.Unlock()
	s.once.Do(func() { close(s.done) })
}

// Subscribe follows every change of a space, in order, with room for queue changes. A subscriber
// whose queue is full when a change arrives is dropped (Done closes): it must start again from a
// fresh snapshot rather than miss a change silently.
func (h *Hub) Subscribe(space string, queue int) *Subscription {
	return h.add(&Subscription{space: space, c: make(chan ask.Change, queue)})
}

// SubscribeFunc follows every change of a space, in order, by calling deliver with each one, under
// the hub's lock: deliver must not block and must not call the hub. When it returns false (its
// own queue is full) the subscription is dropped (Done closes), as Subscribe's is. A subscriber
// that holds no goroutine while idle (an event socket) queues and writes on its own terms.
func (h *Hub) SubscribeFunc(space string, deliver func(ask.Change) bool) *Subscription {
	return h.add(&Subscription{space: space, deliver: deliver})
}

// WatchFunc calls changed with every change of one ask, under the hub's lock: changed must not
// block and must not call the hub. A waiting call parked without a goroutine (mcptools) is woken
// this way.
func (h *Hub) WatchFunc(space, askID string, changed func(ask.Change)) *Subscription {
	return h.add(&Subscription{space: space, askID: askID, deliver: func(c ask.Change) bool { changed(c); return true }})
}

// markTopic is the topic of one person's marks: an ask id never begins with a NUL, so it is no
// ask's topic.
func markTopic(space, person string) topic { return topic{space, "\x00mark\x00" + person} }

// SubscribeMarks follows one person's own marks in a space (contract revision 7): deliver is
// called with each mark of theirs that changes, under the hub's lock (it must not block and must
// not call the hub); when it returns false the subscription is dropped, as SubscribeFunc's is.
// Nobody else's marks ever reach it.
func (h *Hub) SubscribeMarks(space, person string, deliver func(ask.Mark) bool) *Subscription {
	t := markTopic(space, person)
	return h.add(&Subscription{space: t.space, askID: t.askID, mark: deliver})
}

// PublishMark delivers a person's changed mark to their own subscriptions (ask.MarkPublisher).
func (h *Hub) PublishMark(space, person string, m ask.Mark) {
	var dropped []*Subscription
	h.mu.Lock()
	for s := range h.subs[markTopic(space, person)] {
		if !s.mark(m) {
			dropped = append(dropped, s)
		}
	}
	h.mu.Unlock()
	for _, s := range dropped {
		s.Close()
	}
}

func (h *Hub) add(s *Subscription) *Subscription {
	s.hub, s.done = h, make(chan struct{})
	t := topic{s.space, s.askID}
	h.mu.Lock()
	set := h.subs[t]
	if set == nil {
		set = map[*Subscription]struct{}{}
		h.subs[t] = set
	}
	set[s] = struct{}{}
	h.n++
	h.mu.Unlock()
	return s
}

// Publish delivers a committed change to the watchers of its ask, and then to every subscriber of
// its space. The watchers come first: a waiting agent's watcher only starts the goroutine that
// answers it, where a socket's subscriber frames the change for the person's inboxes first, and
// the agent should not wait on that (bench/replypath, docs/benchmarks.md).
func (h *Hub) Publish(c ask.Change) {
	var dropped []*Subscription
	h.mu.Lock()
	for s := range h.subs[topic{c.Ask.Space, c.Ask.ID}] {
		s.deliver(c)
	}
	for s := range h.subs[topic{c.Ask.Space, ""}] {
		if s.deliver != nil {
			if !s.deliver(c) {
				dropped = append(dropped, s)
			}
			continue
		}
		select {
		case s.c <- c:
		default:
			dropped = append(dropped, s)
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
	return h.n
}
