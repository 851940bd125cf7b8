package ask

import (
	"context"
	"sync"
)

// A person's reply wakes the agent that waits on it, and both then want the machine: the person's
// response to write and read, the agent's answer to make and read. On a small machine the one
// that goes first is served first, and the person's own response is what their request waits
// on. So an API request may hold the changes it commits (HoldChanges) until its response is out:
// the change is committed and durable either way, and its hearers (the waiting agent, other
// sockets, notices) hear of it a moment later, once the person has their answer
// (docs/benchmarks.md, issue 30).

type heldKey struct{}

// held is what a request committed and has not published yet.
type held struct {
	mu       sync.Mutex
	released bool
	changes  []heldChange
}

type heldChange struct {
	to Publisher
	c  Change
}

// HoldChanges returns a context under which the Service publishes committed changes only when
// release is called, in the order they were committed; a change committed after release is
// published at once. release may be called more than once.
func HoldChanges(ctx context.Context) (_ context.Context, release func()) {
	h := &held{}
	return context.WithValue(ctx, heldKey{}, h), h.release
}

// hold keeps c for release, and reports whether it did: false once released.
func (h *held) hold(to Publisher, c Change) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return false
	}
	h.changes = append(h.changes, heldChange{to, c})
	return true
}

func (h *held) release() {
	h.mu.Lock()
	changes := h.changes
	h.changes, h.released = nil, true
	h.mu.Unlock()
	for _, hc := range changes {
		hc.to.Publish(hc.c)
	}
}
