package mcptools

import (
	"net"
	"sync"
)

// A parked connection (a waiting call's, a session's stream) has one thing left to say: that its
// client left. onHangup hears it. Where the system lets one poller watch them all (Linux's
// epoll: hangup_linux.go), no goroutine is held per connection; elsewhere, and for a connection
// that is not a socket, a goroutine blocked reading the connection hears it (readUntilGone).

// readUntilGone calls gone when a read of conn fails: the client closed it, or it broke. Bytes
// the client sends meanwhile are read and dropped. Its stop is nothing: the goroutine ends when
// the connection is closed.
func readUntilGone(conn net.Conn, gone func()) (stop func()) {
	go func() {
		var b [1]byte
		for {
			if _, err := conn.Read(b[:]); err != nil {
				gone()
				return
			}
		}
	}()
	return func() {}
}

// hangupOnce is gone, called at most once, and not at all once stopped; set is what it calls.
// A wait that parks registers for the hangup before it can end it (set, after Begin returns).
type hangupOnce struct {
	mu     sync.Mutex
	gone   bool
	notify func()
}

// hear is the hangup's callback: it calls what was set, or keeps the hangup for set.
func (h *hangupOnce) hear() {
	h.mu.Lock()
	h.gone = true
	f := h.notify
	h.mu.Unlock()
	if f != nil {
		f()
	}
}

// set gives the hangup what to call, at once if it came already.
func (h *hangupOnce) set(f func()) {
	h.mu.Lock()
	h.notify = f
	gone := h.gone
	h.mu.Unlock()
	if gone {
		f()
	}
}
